#!/usr/bin/env python3
"""Print docs/port-semantics.md's table of which conformance tests kill which mutant.

Runs the conformance suite (no fail-fast) once per mutant of the emulated port and prints a
Markdown table: one row per test, one column per mutant, "x" where the test failed against it.

    .venv/bin/python tests/port/mutant_table.py build/<name>/tests/port_conformance_test
"""
from __future__ import annotations

import re
import subprocess
import sys

FAILED = re.compile(r"^\[  FAILED  \] Backends/Conformance\.(T\d+)_\w+/emulated", re.M)
TEST = re.compile(r"^Backends/Conformance\.$|^  (T\d+)_\w+/emulated", re.M)


def tests_of(binary: str) -> list[str]:
    listing = subprocess.run([binary, "--gtest_list_tests", "--gtest_filter=*/emulated"],
                             capture_output=True, text=True, check=True).stdout
    return [m for m in TEST.findall(listing) if m]


def killers(binary: str, mutant: str) -> set[str]:
    run = subprocess.run([binary, f"--mutant={mutant}", "--gtest_brief=1"],
                         capture_output=True, text=True, timeout=600)
    return set(FAILED.findall(run.stdout))


def table(tests: list[str], kills: dict[str, set[str]]) -> str:
    mutants = list(kills)
    lines = ["| test | " + " | ".join(mutants) + " |",
             "| --- |" + " --- |" * len(mutants)]
    for test in tests:
        lines.append(f"| {test} | " + " | ".join("x" if test in kills[m] else "" for m in mutants) + " |")
    lines.append("| **killed by** | " + " | ".join(str(len(kills[m])) for m in mutants) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: mutant_table.py PORT_CONFORMANCE_TEST", file=sys.stderr)
        return 2
    binary = argv[1]
    mutants = subprocess.run([binary, "--list-mutants"], capture_output=True, text=True,
                             check=True).stdout.split()
    kills = {m: killers(binary, m) for m in mutants}
    print(table(tests_of(binary), kills))
    survivors = [m for m in mutants if not kills[m]]
    if survivors:
        print("surviving mutants: " + ", ".join(survivors), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
