"""The console scripts' guard: their exit statuses and how every error becomes one line on
stderr. Light on purpose (no numpy or scipy): iocpbench-ab imports it before its heavy parts, so
an early Ctrl-C is "interrupted", not a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from .load import InputError

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_INCONCLUSIVE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def guarded_call(prog: str, call: Callable[[], int],
                 interrupts: tuple[type[BaseException], ...] = (KeyboardInterrupt,)) -> int:
    """Runs a console script's body: bad input, an interrupt, a closed pipe, an unwritable
    output and any other error each become one line on stderr and its exit status."""
    try:
        return call()
    except InputError as err:
        print(f"{prog}: error: {_one_line(str(err))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except interrupts:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `iocpbench-compare ... | head`: the reader left; not an error of ours. Point stdout
        # at devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as err:  # output paths: unwritable directory, full disk
        where = f" {err.filename}" if err.filename else ""
        print(f"{prog}: error: cannot write{where}: {err.strerror or err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as err:
        if os.environ.get("IOCPBENCH_DEBUG"):
            raise
        print(f"{prog}: error: unexpected {type(err).__name__}: {_one_line(str(err))} "
              "(set IOCPBENCH_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_BAD_INPUT
