#!/usr/bin/env python3
"""Every include in harness/ points down the layers (docs/architecture.md, "Layers").

Reads each source file under harness/, takes its `#include "folder/..."` lines and fails, naming
the file, the line and the two folders, when a folder includes one that is not below it. Also:
only cli/ includes CLI11, and workloads/ reach the port through the engine's interface
(engine/workload.hpp gives them packets, ports and the blocking-region guard), never port/
directly. Exit 0 clean, 1 with one line per violation.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path, PurePath

# What each layer may include directly, besides itself (the libraries' links in
# harness/*/CMakeLists.txt are written to the same graph; this checks the includes only).
# Transitive: a layer may include anything its allowed layers may, except where NOT_DIRECT says
# otherwise.
DIRECT: dict[str, set[str]] = {
    "core": set(),
    "platform": {"core"},
    "port": {"platform"},
    "metrics": {"platform"},
    "io": {"port", "metrics"},
    "stats": {"core"},
    "engine": {"io", "stats"},
    "results": {"engine"},
    "workloads": {"engine"},
    "sweep": {"results"},
    "tune": {"sweep"},
    "cli": {"tune", "workloads"},
}
# Workloads plug into the engine from above: the port comes through engine/workload.hpp.
NOT_DIRECT: dict[str, set[str]] = {"workloads": {"port"}}

# Quoted or angle-bracket: harness/ is a public include directory, so <engine/pool.hpp> would
# compile too. Only the first folder counts, and only when it is a layer (<sys/stat.h> is not).
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([a-z_]+)/[^">]+[">]', re.M)
CLI11 = re.compile(r'^\s*#\s*include\s+<CLI/', re.M)
SOURCES = {".cpp", ".hpp", ".h", ".ipp", ".in"}


def allowed(layer: str) -> set[str]:
    seen: set[str] = set()
    todo = [layer]
    while todo:
        for below in DIRECT[todo.pop()]:
            if below not in seen:
                seen.add(below)
                todo.append(below)
    return (seen | {layer}) - NOT_DIRECT.get(layer, set())


def where(path: PurePath, root: PurePath) -> str:
    """How a message names a file: from the checked folder's own name down, with forward slashes
    on every OS (`harness/engine/a.cpp`), whatever the path type. On Windows a native path prints
    with backslashes and a drive, which no message, and no self-test expectation, should depend
    on."""
    return path.relative_to(root.parent).as_posix()


def file_violations(path: PurePath, root: PurePath, text: str) -> list[str]:
    """The violations of one file under `root` whose contents are `text`. Pure: `path` and `root`
    may be any PurePath flavour (the tests feed it Windows paths on Linux)."""
    out: list[str] = []
    name = where(path, root)
    layer = path.relative_to(root).parts[0]
    if layer not in DIRECT:
        return [f"{name}: folder {layer!r} is not a layer (add it to DIRECT)"]
    ok = allowed(layer)
    for m in INCLUDE.finditer(text):
        target = m.group(1)
        if target in DIRECT and target not in ok:
            line = text.count("\n", 0, m.start()) + 1
            out.append(f"{name}:{line}: {layer}/ includes {target}/ (not below it)")
    if layer != "cli" and CLI11.search(text):
        out.append(f"{name}: includes CLI11 outside cli/")
    return out


def violations(root: Path) -> list[str]:
    out: list[str] = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCES:
            continue
        out += file_violations(path, root, path.read_text(encoding="utf-8"))
    return out


# The self-test's tree (under a folder named harness) and what the checker must say about it:
# each expected line starts one message, exactly.
SELF_TEST_CASES = {
    "engine/a.cpp": '#include "sweep/grid.hpp"\n',
    "workloads/b.cpp": '#include "port/packet.hpp"\n#include "engine/pool.hpp"\n',
    "stats/c.cpp": "#include <CLI/CLI.hpp>\n",
    "misc/d.cpp": "\n",
    "cli/e.cpp": '#include "tune/recommend.hpp"\n#include <CLI/CLI.hpp>\n',
    "io/f.cpp": '#include "port/packet.hpp"\n#include "core/errors.hpp"\n#include <sys/stat.h>\n',
    "port/g.hpp": "#include <engine/pool.hpp>\n",
}
SELF_TEST_EXPECTED = [
    "harness/engine/a.cpp:1: engine/ includes sweep/",
    "harness/workloads/b.cpp:1: workloads/ includes port/",
    "harness/stats/c.cpp: includes CLI11",
    "harness/misc/d.cpp: folder 'misc'",
    "harness/port/g.hpp:1: port/ includes engine/",
]


def compare(found: list[str], expected: list[str]) -> tuple[list[str], list[str]]:
    """(expected lines no message starts with, messages no expected line starts)."""
    missing = [e for e in expected if not any(f.startswith(e) for f in found)]
    extra = [f for f in found if not any(f.startswith(e) for e in expected)]
    return missing, extra


def self_test() -> int:
    """The checker finds what it must: an upward include, a port/ include in workloads/, CLI11
    below cli/, an unknown folder; and passes a tree that keeps the rules."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "harness"
        for name, text in SELF_TEST_CASES.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        found = violations(root)
    missing, extra = compare(found, SELF_TEST_EXPECTED)
    for line in missing:
        print(f"self-test: not found: {line}")
    for line in extra:
        print(f"self-test: wrongly found: {line}")
    expected = len(SELF_TEST_EXPECTED)
    print(f"layers self-test: {expected - len(missing)} of {expected} found, {len(extra)} wrong")
    return 1 if missing or extra else 0


def main() -> int:
    if sys.argv[1:2] == ["--self-test"]:
        return self_test()
    root = (Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[2] / "harness").resolve()
    found = violations(root)
    for line in found:
        print(line)
    print(f"layers: {len(found)} violation(s) in {root.as_posix()}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
