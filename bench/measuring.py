"""What every section of `make bench` (bench/run.py) measures with: a result row, printed as it
is measured (`row`), the interleaved medians of a comparison (`medians`), PyTorch on one
thread (`one_thread`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

import simulator_vs_numpy
import torch


def medians(sides: list[Callable[[], object]], repeat: int) -> list[float]:
    """Median wall seconds of each side over `repeat` rounds, each round running every side once."""
    return [statistics.median(record) for record in simulator_vs_numpy.interleaved(sides, repeat)]


def row(section: str, what: str, input_: str, figure: str, ratio: float | None, peer: str, goal: str = "-", met=None, **raw) -> dict:
    """One result, printed as it is measured: the progress line."""
    print(f"[bench]   {input_} vs {peer}: {figure}" + ("" if ratio is None else f" (ratio {ratio:.3g})"), flush=True)
    return dict(section=section, what=what, input=input_, figure=figure, ratio=ratio, peer=peer, goal=goal, met=met, raw=raw)


def one_thread(step: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return step()
        finally:
            torch.set_num_threads(threads)

    return run
