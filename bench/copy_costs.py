"""Where a steady run's copies spend their time (issue 12): bytes or Python.

    .venv/bin/python bench/copy_costs.py [--models mobilenet_v2 bert_encoder] [--size 128]
        [--layers 1] [--cache /tmp/ipu-speed] [--repeat 5]

For each kind of copy of the later (unchecked) plan, exchange copies and copies of partial
sums (as `simulator_speed.py --breakdown` names them): copies and pieces a run, bytes written,
and three times, each the best of `--repeat` passes over the run's copies in plan order:
- `copies`: `Copy.run` as a steady run calls it;
- `Python`: the same calls on one-item views of the same pieces (what is left is the cost of
  the calls, not of the bytes);
- `memcpy`: `np.copyto` of as many contiguous bytes as each copy writes.
Then the copies' time by the size of their pieces' items (the runs contiguous in both sides
that `regions.item_views` makes one item), against memcpy's.

Programs are cached as simulator_speed.py caches them (`--cache`, `--size` and `--layers`: the
same files; MobileNetV2 at full size takes `--size 224`).

At 432e652 on gc200 (2 shared cores, 19:00 UTC; busy, so read the ratios, not the ms):
MobileNetV2 224, exchange: 567 copies, 1 piece each, 35.6 MB, copies 15 ms, Python 0.4 ms,
memcpy 6.5 ms; 14.2 MB of it in single 4-byte elements (4.5 ms against 0.6 ms memcpy) and
8.5 MB in 12-byte items (2.6 against 0.3): strided gathers of small items, not calls. Partial
sums: 108 copies, 51 MB, 7.4 ms against 7.4 ms memcpy. BERT-base, one layer: exchange 772
copies, 11.8 MB, 2.2 ms against 2.3 ms memcpy; partial sums 122 copies, 64 MB, 9.7 against
8.0 ms. zoo.build's default BERT-base (12 layers, bench/run.py's): exchange 19,868 copies, 142 MB, 47 ms against 40 ms
memcpy, about 0.6 us of Python a copy; partial sums 1,464 copies, 765 MB, 173 against 106 ms.
A compiled (numba) strided copy of the same pieces, one call a copy, with the axes in the
destination's order, the source's, or the smallest stride innermost, was slower than numpy
in total (MobileNetV2 exchange 17-21 ms against 15, partial sums 15-20 against 7; faster
only on 12-byte items, by 15%); so was one over blocks of the two innermost axes for the
4-byte elements. Carving the bound arrays out of one arena on huge pages changed nothing
measurable (numpy already advises huge pages for arrays of 4 MiB and more)."""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads its BLAS

import argparse  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import simulator_speed  # noqa: E402

from ipu_mlir.frontends import zoo  # noqa: E402
from ipu_mlir.runtime import steps  # noqa: E402
from ipu_mlir.runtime.api import load_module  # noqa: E402
from ipu_mlir.runtime.simulator import Simulator  # noqa: E402


def later_copies(plan_steps: list, times: int = 1):
    """(copy, runs of it per run) of a plan, loops' bodies as often as they repeat."""
    for step in plan_steps:
        if isinstance(step, steps.Repeat):
            yield from later_copies(step.steps, times * step.count)
        elif isinstance(step, steps.Copy):
            yield step, times


def best(run, repeat: int) -> float:
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return min(seconds)


def report(kind: str, copies: list, repeat: int) -> None:
    pieces = [piece for copy, _ in copies for piece in copy.fixed]
    written = [sum(dest.nbytes for dest, _ in copy.fixed) for copy, _ in copies]
    count = sum(times for _, times in copies)

    def calls(views):
        def run():
            for (copy, times), fixed in zip(copies, views):
                copy.fixed = fixed
                for _ in range(times):
                    copy.run([], False)

        return run

    kept = [copy.fixed for copy, _ in copies]
    one = [[(d[(slice(0, 1),) * d.ndim], s[(slice(0, 1),) * s.ndim]) if d.ndim else (d, s) for d, s in fixed] for fixed in kept]
    full, python = best(calls(kept), repeat), best(calls(one), repeat)
    for (copy, _), fixed in zip(copies, kept):  # the copies' own views back
        copy.fixed = fixed
    pairs = [(np.empty(n, np.uint8), np.ones(n, np.uint8), times) for n, (_, times) in zip(written, copies)]
    memcpy = best(lambda: [np.copyto(a, b) for a, b, times in pairs for _ in range(times)], repeat)
    print(
        f"{kind}: {count} copies, {len(pieces)} pieces, {sum(written) / 1e6:.1f} MB; "
        f"copies {full * 1e3:.2f} ms, Python {python * 1e3:.2f} ms, memcpy {memcpy * 1e3:.2f} ms"
    )
    by_item = defaultdict(lambda: [0, 0, 0.0, 0.0])  # item bytes -> pieces, bytes, copies' s, memcpy s
    for dest, source in pieces:
        target, origin = np.empty(dest.nbytes, np.uint8), np.ones(dest.nbytes, np.uint8)
        total = by_item[min(dest.dtype.itemsize, 64)]
        total[0] += 1
        total[1] += dest.nbytes
        total[2] += best(partial(dest.__setitem__, Ellipsis, source), repeat)
        total[3] += best(partial(np.copyto, target, origin), repeat)
    for item, (n, size, seconds, copy_seconds) in sorted(by_item.items()):
        label = f"{item} B" if item < 64 else ">= 64 B"
        print(f"  items {label:>7}: {n:5d} pieces {size / 1e6:7.2f} MB  {seconds * 1e3:7.2f} ms (memcpy {copy_seconds * 1e3:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["mobilenet_v2", "bert_encoder"], choices=sorted(zoo.MODELS))
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--layers", type=int, default=1, help="transformers' layer count")
    parser.add_argument("--target", default="gc200")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ipu-speed"))
    args = parser.parse_args()
    for name in args.models:
        module, inputs = zoo.build(name, size=args.size, layers=args.layers if zoo.MODELS[name].kind == "text" else None)
        simulator = Simulator(load_module(str(simulator_speed.program_file(name, args, module, inputs))))
        arrays = [value.detach().numpy() for value in inputs]
        simulator.run(arrays)
        simulator.run(arrays)
        copies = list(later_copies(simulator._later.steps))
        gathers = sum(times for copy, times in copies if copy.fixed is None)  # not strided: one gather and scatter
        copies = [(copy, times) for copy, times in copies if copy.fixed is not None]
        print(f"{name} (size {args.size}): {gathers} copies a run by gather and scatter, not counted below")
        for kind in ("exchange copy", "exchange copy of partial sums"):
            chosen = [(copy, times) for copy, times in copies if simulator_speed.KINDS[steps.Copy](copy) == kind]
            if chosen:
                report(kind, chosen, args.repeat)


if __name__ == "__main__":
    main()
