"""`python -m iocpbench_analysis charts|report|compare|answer|ab|controllers|fidelity ...`: the console scripts without installing."""

from __future__ import annotations

import sys

from .cli import TOOLS


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in TOOLS:
        print(f"usage: python -m iocpbench_analysis {{{','.join(TOOLS)}}} ARGS... (see --help of each)", file=sys.stderr)
        return 2
    return TOOLS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
