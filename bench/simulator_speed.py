"""Simulator speed on zoo models (issue 12): load, first run, second run, steady runs, against
PyTorch eager on one thread, side by side in one process.

    .venv/bin/python bench/simulator_speed.py [--models resnet18 bert_encoder] [--size 128]
        [--layers 1] [--target gc200] [--repeat 15] [--cache /tmp/ipu-speed] [--profile]

Each model is exported and compiled once and its L3 program cached as `CACHE/<model>.mlir`
(export and compile are not what this measures; bench/zoo_models.py times them), then loaded
from the file: `load` (parse excluded: verify, plan, checks, weights into tile memory), the
first run, the second run, and the steady run (best of `--repeat`, interleaved with eager).
`--profile` prints cProfile's top functions of one steady run.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path

import numpy as np
import torch

from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.frontends import zoo
from ipu_mlir.runtime.api import load_module
from ipu_mlir.runtime.simulator import Simulator


def program_file(name: str, args: argparse.Namespace, module, inputs) -> Path:
    path = args.cache / f"{name}-{args.size}-{args.layers}-{args.target}.mlir"
    if not path.exists():
        imported = torch_frontend.export(module, *inputs)
        program = torch_frontend.compile_program(imported, args.target, module)
        args.cache.mkdir(parents=True, exist_ok=True)
        path.write_text(str(program), encoding="utf-8")
    return path


def clock(step) -> tuple[object, float]:
    start = time.perf_counter()
    result = step()
    return result, time.perf_counter() - start


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
                times[key].append(clock(step)[1])
    expected = expected if isinstance(expected, tuple) else (expected,)
    error = max(float(np.abs(f - e.numpy()).max() / np.abs(e.numpy()).max()) for f, e in zip(first, expected))
    same = all(np.array_equal(a, b) for a, b in zip(first, second))
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(simulator.run, arrays)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    run, eager = min(times["sim"]), min(times["eager"])
    return dict(model=name, load=load, first=first_s, second=second_s, run=run, eager=eager, ratio=run / eager, error=error, same=same)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["resnet18", "bert_encoder"], choices=sorted(zoo.MODELS))
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--layers", type=int, default=1, help="transformers' layer count")
    parser.add_argument("--target", default="gc200")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ipu-speed"))
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
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
