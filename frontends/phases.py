"""The phases of a run (export, compile, load, run, check) timed and said, with a progress line
on a terminal for the long ones.

    phases = Phases(print)
    with phases.phase("export"):
        ...
    # prints "export:            12.47 s"; phases.seconds == {"export": 12.47}

While a phase runs past `PROGRESS_AFTER` seconds and stderr is a terminal, a line there counts
the seconds (`export... 7 s`) and is erased when the phase ends: redirected output and logs
never see it.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

__all__ = ["PROGRESS_AFTER", "Phases"]

PROGRESS_AFTER = 2.0  # seconds: shorter phases pass without a progress line
_TICK = 0.5


class Phases:
    """Times named phases; `say` (e.g. print) gets `name: seconds [detail]` after each."""

    def __init__(self, say: Callable[[str], None] | None = None, stream: TextIO | None = None) -> None:
        self.say = say
        self.stream = stream
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def phase(self, name: str, detail: str = "") -> Iterator[None]:
        start = time.perf_counter()
        with _progress_line(name, self.stream or sys.stderr, start):
            yield
        self.seconds[name] = time.perf_counter() - start
        self.report(name, detail)

    def report(self, name: str, detail: str = "") -> None:
        if self.say is not None:
            self.say(f"{name + ':':<19}{self.seconds[name]:.2f} s" + (f" ({detail})" if detail else ""))


@contextlib.contextmanager
def _progress_line(name: str, stream: TextIO, start: float) -> Iterator[None]:
    if not _is_terminal(stream):
        yield
        return
    done = threading.Event()
    shown = threading.Event()

    def count() -> None:
        if done.wait(PROGRESS_AFTER):
            return
        while not done.is_set():
            with contextlib.suppress(OSError, ValueError):
                stream.write(f"\r{name}... {time.perf_counter() - start:.0f} s")
                stream.flush()
                shown.set()
            done.wait(_TICK)

    counter = threading.Thread(target=count, name=f"progress {name}", daemon=True)
    counter.start()
    try:
        yield
    finally:
        done.set()
        counter.join()
        if shown.is_set():
            with contextlib.suppress(OSError, ValueError):
                stream.write("\r\033[K")  # the line erased: what follows starts clean
                stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
