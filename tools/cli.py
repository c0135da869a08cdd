"""What every command-line tool does around its `main`: Ctrl-C and SIGTERM end it with a
one-line message and the shell's status for the signal (130, 143), never a traceback; an
error no check foresaw ends it with one line naming the exception (a bug to report), status 1;
and `signals_held` keeps those signals off a block of work that must not be cut in half
(publishing a run's files).
"""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

# The shell's exit status for a process ended by signal N is 128 + N.
_STATUS = {signal.SIGINT: 128 + signal.SIGINT, signal.SIGTERM: 128 + signal.SIGTERM}
_HELD = (signal.SIGINT, signal.SIGTERM)


class Terminated(BaseException):
    """SIGTERM, raised like KeyboardInterrupt is for SIGINT: `finally` blocks run."""


def tool(prog: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Decorates a tool's `main(argv=None)`. Run as a command (`argv` None), SIGTERM raises
    `Terminated`; interruptions and unforeseen exceptions become one line on stderr."""

    def decorate(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(argv: list[str] | None = None, **kwargs) -> int:
            name = kwargs.get("prog", prog)  # ipu-compile runs ipu-opt's main under its own name
            if argv is None and Path(sys.argv[0]).name == prog:  # the command, not a test calling main()
                signal.signal(signal.SIGTERM, _raise_terminated)
            try:
                return main(argv, **kwargs)
            except KeyboardInterrupt:
                return _stop(name, "interrupted", _STATUS[signal.SIGINT])
            except Terminated:
                return _stop(name, "terminated", _STATUS[signal.SIGTERM])
            except RecursionError:
                return _stop(name, "error: the input nests too deeply (Python's recursion limit)", 1)
            except MemoryError:
                return _stop(name, "error: out of memory", 1)
            except Exception as error:  # the last line of defence: one line, no traceback
                return _stop(name, f"internal error: {type(error).__name__}: {error} (please report it with the input)", 1)

        return run

    return decorate


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends, then act as they would have: the block
    runs whole. (Python-level handlers, not the thread's signal mask: a signal may reach any
    of numba's or BLAS's threads, and Python then acts on it in the main thread.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, frame: arrived.append(signum)) for signum in _HELD}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if arrived:
            signal.raise_signal(arrived[0])


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


def _stop(prog: str, message: str, status: int) -> int:
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    first_line = message.splitlines()[0] if message else message
    sys.stderr.write(f"{prog}: {first_line}\n")
    return status
