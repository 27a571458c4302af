#!/usr/bin/env python3
"""Constructs in the C++ sources that one of this project's compilers takes and another may not.

The C++ is built by GCC 12 (here), MinGW-w64 GCC (the Windows cross build here), GCC 13 and MSVC
(the CI matrix). Only the first two run here, so a GNU extension that GCC accepts without a word
reaches MSVC first on a runner. This scan reads every C++ file under harness/, tests/ and bench/
(comments and string literals blanked) for these patterns:

- `void-value`: `return T{};` or `return T();` for a template type parameter T, with no
  `std::is_void` test on that line or the 3 before it, and `void{}` itself (a value of type void:
  GCC takes it, MSVC need not);
- `gnu-attribute`, `gnu-builtin`, `gnu-int128`, `gnu-pretty-function`: `__attribute__`,
  `__builtin_*`, `__int128`, `__PRETTY_FUNCTION__`: GCC and Clang only. Allowed in a file only
  Linux builds (`*_linux.*`, `*_posix.*`) and inside `#if`/`#ifdef`/`#elif` branches whose
  condition names `__GNUC__`, `__clang__` or `__linux__` (not negated);
- `typeof`: `typeof(...)`, `__typeof__(...)` (C++ has decltype);
- `statement-expression`: `({ ...; })`;
- `case-range`: `case a ... b:`;
- `zero-length-array`: a declaration `T name[0];`;
- `bits-include`: `#include <bits/...>` (libstdc++'s internal headers).

Not scanned, because a regular expression cannot tell them apart from valid code: variable-length
arrays, and designated initializers out of declaration order (GCC rejects those in C++20 anyway).

`python3 tests/python/portability_scan.py` prints one line per finding and exits 1 when there is
any; tests/python/test_portability_scan.py runs it over the tree and over samples of each pattern.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("harness", "tests", "bench")
SUFFIXES = {".cpp", ".hpp", ".h", ".ipp", ".in", ".cc", ".cxx"}
LINUX_ONLY = re.compile(r"_(linux|posix)\.[a-z.]+$")
# A branch condition that only GCC, Clang or a Linux build takes names one of these, not negated.
GNU_NAMES = r"(?:__GNUC__|__clang__|__linux__)\b"
GNU_GUARD = re.compile(r"\b" + GNU_NAMES)
NEGATED_GNU_GUARD = re.compile(r"!\s*(?:defined\s*\(?\s*)?" + GNU_NAMES)

# (name, pattern, allowed where GCC/Clang alone compile it)
LINE_PATTERNS: list[tuple[str, re.Pattern[str], bool]] = [
    ("gnu-attribute", re.compile(r"\b__attribute__\b"), True),
    ("gnu-builtin", re.compile(r"\b__builtin_\w+"), True),
    ("gnu-int128", re.compile(r"\b__u?int128(?:_t)?\b"), True),
    ("gnu-pretty-function", re.compile(r"\b__PRETTY_FUNCTION__\b"), True),
    ("typeof", re.compile(r"\b(?:typeof|__typeof__|__typeof)\s*\("), False),
    ("case-range", re.compile(r"\bcase\s+(?:::|[^:;\n])*?\.\.\."), False),
    ("zero-length-array", re.compile(
        r"\b(?!(?:return|case|throw|delete|else|do|goto|new|sizeof|alignof|co_return|co_yield|"
        r"co_await|typename|using)\b)[A-Za-z_]\w*(?:\s*::\s*\w+)*[\s*&]+[A-Za-z_]\w*\s*\[\s*0\s*\]"
        r"\s*(?:;|=|\{)"), False),
    ("bits-include", re.compile(r"^\s*#\s*include\s*<bits/"), False),
]
STATEMENT_EXPRESSION = re.compile(r"\(\s*\{[^{}]*;\s*\}\s*\)")
TEMPLATE_HEAD = re.compile(r"\btemplate\s*<")
TYPE_PARAMETER = re.compile(r"(?:^|,)\s*(?:typename|class)\s*(?:\.\.\.\s*)?([A-Za-z_]\w*)")
VOID_VALUE = re.compile(r"\bvoid\s*\{\s*\}")
IS_VOID = re.compile(r"\bis_void(?:_v)?\b")


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    pattern: str
    text: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.pattern}: {self.text.strip()}"


def blank_comments_and_strings(text: str) -> str:
    """The text with comments and the insides of string and character literals replaced by
    spaces (newlines kept, so line numbers hold). Raw strings and digit separators (1'000)
    are understood; an include's <...> is not a literal and stays."""
    out: list[str] = []
    i, n = 0, len(text)

    def blank(segment: str) -> str:
        return re.sub(r"[^\n]", " ", segment)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(blank(text[i:j]))
            i = j
        elif c == '"':
            raw = re.search(r'(?:u8|u|U|L)?R$', text[max(0, i - 3):i])
            before = i - len(raw.group(0)) - 1 if raw else -1
            if raw and (before < 0 or not re.match(r"\w", text[before])):
                m = re.match(r'"([^()\\\s]{0,16})\(', text[i:])
                if m:
                    end = text.find(")" + m.group(1) + '"', i + len(m.group(0)))
                    end = n if end < 0 else end + len(m.group(1)) + 2
                    out.append('"' + blank(text[i + 1:end - 1]) + '"')
                    i = end
                    continue
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j, n - 1)
            out.append('"' + blank(text[i + 1:j]) + text[j])
            i = j + 1
        elif c == "'":
            word = re.search(r"\w+$", text[max(0, i - 64):i])
            if word and word.group(0)[0].isdigit():  # a digit separator: 1'000'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j, n - 1)
            out.append("'" + blank(text[i + 1:j]) + text[j])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _gnu_only(condition: str) -> bool:
    return bool(GNU_GUARD.search(NEGATED_GNU_GUARD.sub(" ", condition)))


def _gnu_only_lines(lines: list[str]) -> set[int]:
    """0-based numbers of the lines inside a preprocessor branch that only GCC, Clang or a Linux
    build compiles (see GNU_GUARD)."""
    guarded: set[int] = set()
    stack: list[bool] = []  # per open #if: whether the current branch is GNU-only
    for number, line in enumerate(lines):
        directive = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", line)
        if directive:
            word, condition = directive.groups()
            if word in ("if", "ifdef"):
                stack.append(_gnu_only(condition))
            elif word == "ifndef":
                stack.append(False)
            elif word == "elif" and stack:
                stack[-1] = _gnu_only(condition)
            elif word == "else" and stack:
                stack[-1] = False
            elif word == "endif" and stack:
                stack.pop()
            continue
        if any(stack):
            guarded.add(number)
    return guarded


def _template_type_parameters(code: str) -> set[str]:
    names: set[str] = set()
    for head in TEMPLATE_HEAD.finditer(code):
        depth, i = 1, head.end()
        while i < len(code) and depth:
            depth += {"<": 1, ">": -1}.get(code[i], 0)
            i += 1
        parameters = code[head.end():i - 1]
        # Nested template template parameters (`template <class> class U`) keep their own names.
        parameters = re.sub(r"template\s*<[^<>]*>", "", parameters)
        names.update(TYPE_PARAMETER.findall(parameters))
    return names


def scan_text(text: str, name: str) -> list[Finding]:
    code = blank_comments_and_strings(text)
    lines = code.splitlines()
    originals = text.splitlines()
    findings: list[Finding] = []

    def found(index: int, pattern: str) -> None:
        original = originals[index] if index < len(originals) else ""
        findings.append(Finding(name, index + 1, pattern, original))

    linux_only = bool(LINUX_ONLY.search(name))
    guarded = _gnu_only_lines(lines)
    for index, line in enumerate(lines):
        for pattern, regex, gnu_only_allowed in LINE_PATTERNS:
            if regex.search(line) and not (gnu_only_allowed and (linux_only or index in guarded)):
                found(index, pattern)
        if VOID_VALUE.search(line):
            found(index, "void-value")

    for m in STATEMENT_EXPRESSION.finditer(code):
        found(code.count("\n", 0, m.start()), "statement-expression")

    parameters = _template_type_parameters(code)
    if parameters:
        names = "|".join(sorted(map(re.escape, parameters)))
        value = re.compile(rf"\breturn\s+(?:{names})\s*(?:\{{\s*\}}|\(\s*\))\s*;")
        for index, line in enumerate(lines):
            guarded = any(IS_VOID.search(near) for near in lines[max(0, index - 3):index + 1])
            if value.search(line) and not guarded:
                found(index, "void-value")
    return sorted(set(findings), key=lambda f: (f.line, f.pattern))


def scan_tree(root: Path = ROOT) -> list[Finding]:
    findings: list[Finding] = []
    for top in SCANNED:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            relative = path.relative_to(root).as_posix()
            findings += scan_text(path.read_text(encoding="utf-8", errors="replace"), relative)
    return findings


def main() -> int:
    findings = scan_tree(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT)
    for finding in findings:
        print(finding)
    print(f"portability scan: {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
