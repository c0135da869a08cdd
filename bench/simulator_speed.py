"""Simulator speed on zoo models (issue 12): load, first run, second run, steady runs, against
PyTorch eager on one thread, side by side in one process.

    .venv/bin/python bench/simulator_speed.py [--models resnet18 bert_encoder] [--size 128]
        [--layers 1] [--target gc200] [--repeat 15] [--cache /tmp/ipu-speed] [--profile] [--breakdown]
    .venv/bin/python bench/simulator_speed.py --small [--repeat 31]

Each model is exported and compiled once and its L3 program cached as `CACHE/<model>.mlir`
(export and compile are not what this measures; bench/zoo_models.py times them), then loaded
from the file: `load` (parse excluded: verify, plan, checks, weights into tile memory), the
first run, the second run (which plans the later runs: `Simulator`), and the steady run (best of `--repeat`, interleaved with eager).
Steady runs are CPU time (`time.process_time`: the 2 cores here are shared, so wall time
measures the neighbours), numpy's BLAS on one thread as eager's (OPENBLAS_NUM_THREADS=1 unless
set: two BLAS threads on a busy machine spin, and process time counts both).
`--profile` prints cProfile's top functions of one steady run, `--breakdown` where a steady
run's time goes: exchange copies, vertex groups by codelet (its name without digits), host
streams.

`--small` measures the fixed cost small programs pay instead (issue 27, point 6: small blocks
within 3x eager): a GPT-2 block and a BERT-style block at hidden 128 (one layer, seq 128, 2
heads; GPT-2's vocabulary 1,000) compiled as a user does (`frontends.torch.compile`: export,
compile, load; the program cache keyed by name) and called with torch tensors, steady runs
interleaved with eager's, medians of `--repeat` CPU times; and a 10-layer MLP (batch 4, width
16: next to no work) as the cost of a run per program of that depth. The load average is
printed beside them: the ratios move with it.

Issue 27 point 6, `--small --repeat 21` at 5b5c41d (before) and 56a8acb (after: short runs
of partial sums summed element by element from compact tables, runtime/partials_in_place.py;
`ipu.gather`'s lookup one compiled pass, dialects/ops/gather.py; codelet calls checked once at
load, `CompiledCodelet.writer`), the two trees run alternately five times each (load average
10-11 on 2 cores), medians of the five medians, ms:

| program | before | eager | x eager | after | eager | x eager |
|---|---|---|---|---|---|---|
| GPT-2 block d128 | 15.48 | 2.77 | 5.59 | 11.18 | 2.58 | 4.34 |
| BERT block d128 | 11.64 | 1.98 | 6.16 | 8.35 | 1.88 | 4.43 |
| MLP 10 layers: fixed cost | 1.04 | | | 0.83 | | |

Outputs and cycles are the same bytes as before. The goal, 3x eager, is missed.

A second round, at 9872c4b (before) and 3651c54 (after: a compiled body's flat views kept per
view, runtime/fused.py; one np.errstate a run instead of one a vertex group, and no second
`into` for a group whose writer writes nothing, runtime/steps.py; a fill's broadcast kept and
body values already spread viewed, not broadcast, runtime/codelet.py and generic_body.py; the
lookup's indices copied once, dialects/ops/gather.py), the two trees run alternately four
times each (`--small`'s blocks, 21 steady runs each, load average 8-11), medians of the four
medians, ms:

| program | before | eager | x eager | after | eager | x eager |
|---|---|---|---|---|---|---|
| GPT-2 block d128 | 12.30 | 2.80 | 4.27 | 11.09 | 2.70 | 4.05 |
| BERT block d128 | 8.67 | 2.05 | 4.25 | 7.57 | 1.87 | 3.90 |

Outputs and profiles are byte-equal. With GPT-2's causal mask compiled too (01124f2: a select of
a constant, runtime/fused.py), four more rounds against 9872c4b (load 6.5-8): GPT-2 11.44 / 2.58
= 4.48x -> 11.24 / 2.69 = 4.11x, BERT 8.34 / 1.95 = 4.46x -> 7.54 / 1.71 = 4.35x; the medians of
each round's fastest run, less moved by the neighbours: GPT-2 10.47 -> 9.96 ms, BERT 7.45 ->
6.61 ms. The 10-layer MLP's fixed cost did not move (0.9-1.9 ms either tree, noise). Where a
steady run of the GPT-2 block goes (`--breakdown`'s kinds at 9872c4b, CPU ms of a 12.1 ms run at
load 4): 53 generic vertex groups 4.4, 22 matmul groups 2.1, 18 sums of partials in place 1.8, 3
lookups 1.2 and their 4 sums 0.4, 225 copies 0.9, host streams 0.4. cProfile over 40 runs: BLAS
products (`Product.into`) 15%, the compiled partial sums 15%, numpy's element-wise ops of
uncompiled bodies 8%, the rest Python between numpy calls. The floor is the plan's, not the
interpreter's: without any generic group a run is 7.0 ms, 2.6x eager (2.7 ms), so 3x leaves the
53 groups 1.1 ms, 20 us each, where a group's Python alone (views, checks, the calls around its
kernel) is 20-40 us whatever its size. What stands in the way: the per-tile products (1,136 BLAS
calls of 28x32 by 32x14 in one group; one call over all tiles would add in another order), k cut
over 8-32 tiles (each product leaves that many partials to add: eager adds none), the lookup's
128 token ids broadcast to all 1,280 tiles of the table (82K lookups where eager makes 128), and
bodies still run op by op (the layer norms' mixed f64/f32 bodies with rsqrt, f64 sums and
variances, exp): compiling them whole, reductions in numpy's pairwise order, would take 2-3 ms
off at most (an estimate: their 4.4 ms less 20-40 us a group). The second run still plans the
later runs (`Simulator`): 0.22-0.34 s CPU for the GPT-2 block, of which (cProfile) tile classes
39%, the later `Planner` 28%, eliding copies of partial sums 25%; unchanged this round.

A third round (issue 27 points 1, 3 and 6), at 5a75d60 (before) and after this branch's
dispatch changes (runtime/simulator.py: inputs checked without building messages, a run
resetting only its non-resident buffers; runtime/streams.py: host streams of the later plan
prepared once), the two trees run alternately four times each (`--small --repeat 11`, load
average 11-14), medians of the four medians, ms:

| program | before | eager | x eager | after | eager | x eager |
|---|---|---|---|---|---|---|
| GPT-2 block d128 | 10.92 | 2.70 | 4.04 | 10.82 | 2.49 | 4.35 |
| BERT block d128 | 8.53 | 2.12 | 4.02 | 7.60 | 1.77 | 4.31 |
| MLP 10 layers: fixed cost | 0.91 | | | 0.44 | | |

Outputs are the same bytes. The 10-layer program's fixed cost is under the 1 ms of point 6
(its 21 input checks were 0.33 ms, its 21 streams 0.5 -> 0.3 ms); the blocks' ratios move with
eager's time between rounds (1.6-3.1 ms), their own run by 0.1 ms (GPT-2: the logits' stream
0.3 -> 0.03 ms) to 0.9 ms. Point 1, the plan for small ops: by the cost model the spread cuts
are the cheaper ones, so the plan stays (test/python/test_small_plans.py). The GPT-2 block's
128 x 128 x 384 matmul simulated alone on gc200: 2,714 cycles on its chosen 1,440 tiles (24, 13,
16: k cut 8 ways; ipu-plan's estimate 2,250), 7,019 on 384 tiles, 8,841 on 256, 22,047 on 96;
its lookup of 128 ids in 1,000 rows: 1,612 cycles on 1,280 tiles, 4,624 on 160, 34,052 on 5
(rows whole per tile), 10,618 on one. Whole blocks with every matmul capped at fewer tiles:
GPT-2 28,231 cycles (as planned) -> 37,572 at 736 tiles, 53,681 at 368, 95,141 at 128; BERT
19,190 -> 26,419 at 736, 42,996 at 256; capping the lookups, 28,231 -> 28,910 at 640 tiles,
37,151 at 128. Fewer, larger products would make the simulator faster and the device slower.
Point 3, one load: each plan is built once (test/python/test_one_load.py counts them): the
checked one at load, the later one at the second run, kept for every run after. The later plan
costs GPT-2's block 0.17 s (tile classes 0.072, its planner walk 0.060, the elision 0.024; load
0.50 s, first run 0.69 s) and BERT's 0.10 s (load 0.33 s, first run 0.53 s); made at load it
would delay every first result, `ipu-run`'s single run included, by that much.

Issue 12 on gc200, steady run ms (CPU time, best of 5 interleaved with eager; `--size 224`,
resnet18 at 128; transformers `--layers 12`), at 8bf262e and at c398c39 (reductions by
runtime/reduce.py, run-invariant steps at load, output item views made once, dense
per-channel operands). Between rounds on this shared machine a ratio moves by about 0.3.

| model | before | eager | x eager | after | eager | x eager |
|---|---|---|---|---|---|---|
| resnet18 (128) | 200.2 | 24.6 | 8.1 | 165.6 | 27.0 | 6.1 |
| resnet50 | 909.1 | 124.8 | 7.3 | 983.8 | 133.5 | 7.4 |
| mobilenet_v2 | 238.3 | 20.8 | 11.4 | 215.8 | 22.3 | 9.7 |
| alexnet | 177.9 | 30.8 | 5.8 | 182.5 | 33.1 | 5.5 |
| bert_encoder (12 layers) | 1822.2 | 498.0 | 3.7 | 1770.2 | 509.0 | 3.5 |
| gpt2 (12 layers) | 1974.6 | 809.4 | 2.4 | 1903.7 | 827.4 | 2.3 |

The same runtime on programs recompiled at 1c90c3b (the planner now cuts convolutions'
filters: far fewer partial sums): resnet18 92.7 ms / eager 27.6 = 3.4x (8bf262e's runtime on
that program 106.1 = 3.8x), resnet50 468.1 / 139.7 = 3.3x, mobilenet_v2 133.5 / 20.1 = 6.6x,
alexnet 139.8 / 30.9 = 4.5x (cache `--cache` anew to measure a new compiler).

Where the time goes after, on the 8bf262e programs (`--breakdown`, ms of a run): ResNet-50 conv vertex groups 598,
combining partial sums with batch norm 224, copying partial sums 142, other copies 51;
BERT-12 matmuls 821, element-wise generics (GELU's erf, softmax, layer norm) 567, copying
partial sums 180, combining them 133, other copies 114. The kernels (dialects/ops/conv.py,
matmul.py) and the plan's partial sums are what is left: see issue 12.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads its BLAS

import argparse  # noqa: E402
import contextlib  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from ipu_mlir.frontends import torch as torch_frontend  # noqa: E402
from ipu_mlir.frontends import zoo  # noqa: E402
from ipu_mlir.lowering.pipelines import compile_module  # noqa: E402
from ipu_mlir.runtime import partials_in_place, steps, streams  # noqa: E402
from ipu_mlir.runtime.api import load_module  # noqa: E402
from ipu_mlir.runtime.simulator import Simulator  # noqa: E402

# kinds of steps: what `--breakdown` sums a run's time by
KINDS = {
    steps.Copy: lambda step: "exchange copy" + (" of partial sums" if "partials" in step.dest.name else ""),
    steps.VertexGroup: lambda group: "vertex group " + re.sub(r"\d+", "", group.codelet),
    partials_in_place.SumInPlace: lambda group: "vertex group " + re.sub(r"\d+", "", group.codelet) + " (partials in place)",
    partials_in_place.FusedSumInPlace: lambda group: "vertex group " + re.sub(r"\d+", "", group.codelet) + " (partials in place)",
    streams.HostToDevice: lambda stream: "host to device",
    streams.DeviceToHost: lambda stream: "device to host",
}


def program_file(name: str, args: argparse.Namespace, module, inputs) -> Path:
    path = args.cache / f"{name}-{args.size}-{args.layers}-{args.target}.mlir"
    if not path.exists():
        imported = torch_frontend.export(module, *inputs)
        program = torch_frontend.compile_program(imported, args.target, module)
        args.cache.mkdir(parents=True, exist_ok=True)
        path.write_text(str(program), encoding="utf-8")
    return path


def clock(step, timer=time.perf_counter) -> tuple[object, float]:
    start = timer()
    result = step()
    return result, timer() - start


@contextlib.contextmanager
def per_kind(totals: dict):
    """Adds each step's CPU time to `totals[kind]` = [count, seconds] while inside."""
    originals = {cls: cls.run for cls in KINDS}

    def timed(cls, run):
        def wrapper(self, *args):
            start = time.process_time()
            run(self, *args)
            total = totals[KINDS[cls](self)]
            total[0] += 1
            total[1] += time.process_time() - start

        return wrapper

    try:
        for cls, run in originals.items():
            cls.run = timed(cls, run)
        yield totals
    finally:
        for cls, run in originals.items():
            cls.run = run


def breakdown(simulator: Simulator, arrays: list, rounds: int = 3) -> None:
    totals = defaultdict(lambda: [0, 0.0])
    with per_kind(totals):
        _, total = clock(lambda: [simulator.run(arrays) for _ in range(rounds)], time.process_time)
    print(f"steady run {total / rounds * 1e3:.1f} ms CPU, of which:")
    for kind, (count, seconds) in sorted(totals.items(), key=lambda item: -item[1][1])[:20]:
        print(f"  {seconds / rounds * 1e3:8.1f} ms  {count // rounds:5d} x  {kind}")


def measure(name: str, args: argparse.Namespace) -> dict:
    layers = args.layers if zoo.MODELS[name].kind == "text" else None
    module, inputs = zoo.build(name, size=args.size, layers=layers)
    path = program_file(name, args, module, inputs)
    program = load_module(str(path))
    simulator, load = clock(lambda: Simulator(program))
    arrays = [value.detach().numpy() for value in inputs]
    first, first_s = clock(lambda: simulator.run(arrays))
    second, second_s = clock(lambda: simulator.run(arrays))
    times = {"sim": [], "eager": []}
    with torch.no_grad():
        expected = module(*inputs)
        for _ in range(args.repeat):
            for key, step in (("sim", lambda: simulator.run(arrays)), ("eager", lambda: module(*inputs))):
                times[key].append(clock(step, time.process_time)[1])
    expected = expected if isinstance(expected, tuple) else (expected,)
    error = max(float(np.abs(f - e.numpy()).max() / np.abs(e.numpy()).max()) for f, e in zip(first, expected))
    same = all(np.array_equal(a, b) for a, b in zip(first, second))
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(simulator.run, arrays)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    if args.breakdown:
        breakdown(simulator, arrays)
    run, eager = min(times["sim"]), min(times["eager"])
    return dict(model=name, load=load, first=first_s, second=second_s, run=run, eager=eager, ratio=run / eager, error=error, same=same)


# the small blocks of `--small`: (zoo model, its options)
SMALL_BLOCKS = {
    "GPT-2 block d128": ("gpt2", dict(size=128, layers=1, hidden=128, heads=2, vocab=1000)),
    "BERT block d128": ("bert_encoder", dict(size=128, layers=1, hidden=128, heads=2)),
}


def small_block(title: str, repeat: int) -> dict:
    name, options = SMALL_BLOCKS[title]
    module, inputs = zoo.build(name, **options)
    key = f"{name} " + " ".join(f"{k} {v}" for k, v in sorted(options.items()))
    compiled = torch_frontend.compile(module, *inputs, cache_key=key)
    times = {"sim": [], "eager": []}
    with torch.no_grad():
        expected, got = module(*inputs), compiled(*inputs)
        compiled(*inputs)  # the second run plans the later ones
        for _ in range(repeat):
            for key, step in (("sim", lambda: compiled(*inputs)), ("eager", lambda: module(*inputs))):
                times[key].append(clock(step, time.process_time)[1])
    expected, got = (x if isinstance(x, tuple) else (x,) for x in (expected, got))
    error = max(float((g - e).abs().max() / e.abs().max()) for g, e in zip(got, expected))
    run, eager = (float(np.median(times[key])) for key in ("sim", "eager"))
    return dict(model=title, run=run, eager=eager, ratio=run / eager, error=error)


def mlp_fixed_cost(repeat: int, layers: int = 10) -> float:
    """Median CPU seconds of a steady run of bench/simulator_vs_numpy.py's MLP at batch 4,
    width 16: what a run of a program `layers` deep costs beyond its work."""
    from simulator_vs_numpy import model  # bench/: the script's own directory

    module = load_module(model(layers, 4, 16, "gc200"))
    with module.context:
        compile_module(module)
    simulator = Simulator(module)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype(dtype) for shape, dtype in simulator.arguments]
    simulator.run(arrays)
    simulator.run(arrays)
    return float(np.median([clock(lambda: simulator.run(arrays), time.process_time)[1] for _ in range(repeat * 4)]))


def small(args: argparse.Namespace) -> None:
    print("| program | steady run ms (median) | eager ms (median) | x eager | rel. error |")
    print("|---|---|---|---|---|")
    for title in SMALL_BLOCKS:
        r = small_block(title, args.repeat)
        print(f"| {title} | {r['run'] * 1e3:.2f} | {r['eager'] * 1e3:.2f} | {r['ratio']:.2f} | {r['error']:.1e} |", flush=True)
    print(f"| MLP 10 layers (batch 4, width 16): fixed cost | {mlp_fixed_cost(args.repeat) * 1e3:.2f} | | | |")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min) on {os.cpu_count()} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["resnet18", "bert_encoder"], choices=sorted(zoo.MODELS))
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--layers", type=int, default=1, help="transformers' layer count")
    parser.add_argument("--target", default="gc200")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ipu-speed"))
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--breakdown", action="store_true", help="a steady run's time per kind of step")
    parser.add_argument("--small", action="store_true", help="small blocks' steady runs against eager, medians (issue 27)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.small:
        return small(args)
    print("| model | load s | first run s | second run s | steady run ms | eager ms | x eager | rel. error | runs equal |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.models:
        r = measure(name, args)
        print(
            f"| {r['model']} | {r['load']:.2f} | {r['first']:.2f} | {r['second']:.2f} | {r['run'] * 1e3:.1f} | "
            f"{r['eager'] * 1e3:.1f} | {r['ratio']:.1f} | {r['error']:.1e} | {r['same']} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
