"""The compiler-portability scan (portability_scan.py): the tree is clean, and each pattern is
caught in a sample made to have it, while the valid code that looks like it is not.

The scan stands in for the compilers that do not run here (MSVC on the CI matrix's Windows
runners): GCC accepts each of these patterns, so only a scan shows them before a runner does.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import portability_scan as scan

# Each pattern with a sample that has it.
CAUGHT = {
    "void-value": [
        "template <typename T>\nT get(F& f) {\n  if (bad) return T{};\n  return f.get();\n}\n",
        "template <class Result, typename Extra>\nResult make() { return Result(); }\n",
        "void f() { return void{}; }\n",
    ],
    "gnu-attribute": ["struct S { int x; } __attribute__((packed));\n"],
    "gnu-builtin": ["inline void relax() { __builtin_ia32_pause(); }\n",
                    "#if defined(_MSC_VER)\n#else\nbool b = __builtin_expect(x, 0);\n#endif\n",
                    "#ifndef __GNUC__\nint n = __builtin_popcount(x);\n#endif\n",
                    "#if !defined(__GNUC__)\nint n = __builtin_popcount(x);\n#endif\n",
                    "#if ! __clang__\nint n = __builtin_popcount(x);\n#endif\n"],
    "gnu-int128": ["unsigned __int128 wide = 0;\n"],
    "gnu-pretty-function": ["const char* where = __PRETTY_FUNCTION__;\n"],
    "typeof": ["typeof(x) y = x;\n", "__typeof__(x) y = x;\n"],
    "statement-expression": ["int m = ({ int t = f(); t + 1; });\n",
                             "#define MAX(a, b) ({ auto x = (a); x; })\n"],
    "case-range": ["switch (c) {\n  case 'a' ... 'z': break;\n}\n",
                   "switch (k) { case Kind::a ... Kind::c: return 1; }\n"],
    "zero-length-array": ["struct Msg { int size; char data[0]; };\n",
                          "std::uint8_t tail[0] = {};\n"],
    "bits-include": ["#include <bits/stdc++.h>\n"],
}

# Valid code that a careless pattern would take for one of the above.
CLEAN = [
    # The fix for void: a void test guards the value.
    "template <typename T>\nT get(F& f) {\n  if (bad) {\n    if constexpr (std::is_void_v<T>) {\n"
    "      return;\n    } else {\n      return T{};\n    }\n  }\n  return f.get();\n}\n",
    # A class (not a template parameter) value-initialised; void() itself is valid everywhere.
    "Options defaults() { return Options{}; }\nvoid g() { return void(); }\n",
    # Builtins under a GCC/Clang-only branch, the MSVC intrinsic in the other.
    "#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))\n"
    "  __builtin_ia32_pause();\n"
    "#elif defined(_MSC_VER)\n  _mm_pause();\n#endif\n",
    "#ifdef __clang__\n#define UNUSED __attribute__((unused))\n#endif\n",
    # Mentions in comments and strings.
    "// never return T{} here, nor use __attribute__ or typeof(x) or case 1 ... 3:\n"
    "/* ({ a; }) and char data[0]; */\n"
    "const char* s = \"__builtin_trap() ({ x; }) #include <bits/x.h>\";\n"
    "const char* r = R\"(typeof(y) __int128 case 0 ... 9:)\";\n",
    # Braced arguments, a first element, packs and digit separators.
    "out.push_back({p, repetition});\nj.update({{\"file\", path_}, {\"n\", 1}});\n"
    "return a[0];\nauto x = v[0];\nsizeof a[0];\nf(args...);\nconstexpr long k = 1'000'000;\n"
    "switch (k) { case 1: g(rest...); break; }\n",
    # decltype, std headers.
    "decltype(x) y = x;\n#include <bit>\n#include <cstdint>\n",
]


@pytest.mark.parametrize("pattern", sorted(CAUGHT))
def test_scan_catches_each_pattern_in_a_sample(pattern: str) -> None:
    for sample in CAUGHT[pattern]:
        found = scan.scan_text(sample, "harness/x/sample.cpp")
        assert [f.pattern for f in found] == [pattern], (sample, [str(f) for f in found])


def test_scan_names_the_line() -> None:
    found = scan.scan_text(CAUGHT["void-value"][0], "tests/port/x.cpp")
    assert [str(f) for f in found] == ["tests/port/x.cpp:3: void-value: if (bad) return T{};"]


def test_scan_leaves_valid_code_alone() -> None:
    for sample in CLEAN:
        found = scan.scan_text(sample, "harness/x/sample.cpp")
        assert found == [], (sample, [str(f) for f in found])


def test_scan_allows_gnu_only_names_in_a_linux_only_file() -> None:
    sample = "inline void relax() { __builtin_ia32_pause(); }\nint x __attribute__((unused));\n"
    assert scan.scan_text(sample, "harness/metrics/usage_linux.cpp") == []
    assert scan.scan_text(sample, "harness/platform/file_lock_posix.cpp") == []
    # The Windows files are compiled by MSVC too.
    assert len(scan.scan_text(sample, "harness/metrics/usage_windows.cpp")) == 2
    # GNU-only patterns that no Linux-only file may hold either.
    assert [f.pattern for f in scan.scan_text("typeof(x) y;\n", "a_linux.cpp")] == ["typeof"]


def test_scan_finds_nothing_in_the_tree_within_its_time_bound() -> None:
    started = time.monotonic()
    findings = scan.scan_tree()
    elapsed = time.monotonic() - started
    assert findings == [], "\n".join(map(str, findings))
    # About a second here for every file under harness/, tests/ and bench/.
    assert elapsed < 60, f"the scan took {elapsed:.1f} s"


def test_scan_from_the_command_line(tmp_path: Path) -> None:
    script = Path(scan.__file__)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and "0 finding(s)" in result.stdout, result.stdout + result.stderr
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "a.cpp").write_text("template <typename T>\nT f() { return T{}; }\n")
    result = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.startswith("harness/a.cpp:2: void-value:"), result.stdout
