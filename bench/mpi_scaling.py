"""The simulator on MPI ranks (issue 26 point 6): the wall time of a program spanning the 2 IPUs
it is sharded over (an MLP on an m2000, ipu-shard{ipus=2}) on one process and on 2 MPI ranks of
this machine, the parallel efficiency, and the outputs compared byte for byte.

    .venv/bin/python bench/mpi_scaling.py [--quick] [--repeat 3] [--iterations 1 8] [--training]

Each side runs in a process of its own (`--rank`): it loads the program (every rank plans all
of it), then per count of device iterations runs once (the checked run) and times `repeat`
steady runs (Poplar's Repeat, PopTorch's deviceIterations), the ranks starting each run
together. A sharded model is a pipeline: with one iteration the second IPU waits for the
first's activations, so the ranks overlap only across iterations. docs/many-ipus.md reads
the figures and projects a POD64 across hosts.

`--training`: replicated training instead (trainingModel, replicationFactor 2 on an m2000: an
MLP with MSE and SGD), one process running both replicas (runtime/replicated.py: a thread
each) against 2 ranks (one replica each, the all-reduce's ring as messages); the timed unit is
a call of `--iterations` micro-batches (deviceIterations), the first call (compile and load)
untimed; the losses and parameters compared byte for byte.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MPIEXEC = Path(sys.executable).parent / "mpiexec"


def mlp_text(width: int, layers: int, batch: int) -> str:
    """L0: `layers` dense layers, width x width, each with a ReLU; the weights are arguments."""
    t, w = f"tensor<{batch}x{width}xf32>", f"tensor<{width}x{width}xf32>"
    body, x = [], "%x"
    for i in range(layers):
        body += [
            f"%e{i} = tensor.empty() : {t}",
            f"%z{i} = linalg.fill ins(%zero : f32) outs(%e{i} : {t}) -> {t}",
            f"%m{i} = linalg.matmul ins({x}, %w{i} : {t}, {w}) outs(%z{i} : {t}) -> {t}",
            f'%h{i} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}'
            f" ins(%m{i} : {t}) outs(%e{i} : {t}) {{",
            "^bb0(%a: f32, %o: f32):",
            "  %r = arith.maximumf %a, %zero : f32",
            "  linalg.yield %r : f32",
            f"}} -> {t}",
        ]
        x = f"%h{i}"
    arguments = ", ".join([f"%x: {t}", *[f"%w{i}: {w}" for i in range(layers)]])
    head = ["#id = affine_map<(d0, d1) -> (d0, d1)>", f"func.func @main({arguments}) -> {t} {{", "%zero = arith.constant 0.0 : f32"]
    return "\n".join([*head, *body, f"return {x} : {t}", "}"])


def compile_program(text: str, path: Path) -> None:
    """The L3 program of `text` on an m2000, its layers sharded over 2 IPUs, written to `path`."""
    from mlir import ir

    from ipu_mlir.dialects import make_context
    from ipu_mlir.lowering.pass_registry import build_pass_manager
    from ipu_mlir.lowering.pipelines import default_pipeline

    with make_context():
        module = ir.Module.parse(text)
        build_pass_manager(default_pipeline("m2000").replace(",ipu-shard,", ",ipu-shard{ipus=2},")).run(module.operation)
        path.write_text(str(module))


def rank_main(program: Path, iterations: list[int], repeat: int, out: Path) -> None:
    """One side: load, then per count of iterations one checked run and `repeat` timed runs;
    rank 0 prints the figures as JSON (messages and bytes: rank 0's sends per run) and saves
    the last run's outputs to `out`."""
    from ipu_mlir.runtime import api, distributed

    world = distributed.start() if distributed.launched_size() > 1 else None
    start = time.perf_counter()
    simulator = api.load_simulator(program)
    figures = {"load_s": time.perf_counter() - start, "cycles": simulator.profile.cycles, "runs": {}}
    for count in iterations:
        inputs = [np.stack([x] * count) for x in api.random_inputs(simulator.arguments, 0)]
        simulator.run(inputs, iterations=count)  # the checked run
        times, sent = [], (world.messages, world.bytes) if world else (0, 0)
        for _ in range(repeat):
            if world is not None:
                world.comm.Barrier()
            start = time.perf_counter()
            outputs = simulator.run(inputs, iterations=count)
            times.append(time.perf_counter() - start)
        messages, bytes_ = ((world.messages - sent[0]) / repeat, (world.bytes - sent[1]) / repeat) if world else (0, 0)
        figures["runs"][count] = {"run_s": statistics.median(times), "messages": messages, "bytes": bytes_}
    if world is None or world.rank == 0:
        np.savez(out, *outputs)
        print(json.dumps(figures))


def training_rank_main(quick: bool, iterations: int, repeat: int, out: Path) -> None:
    """One side of `--training`: compile and load in the first call (untimed), then `repeat`
    timed calls; rank 0 prints the figures as JSON and saves the losses and parameters."""
    import torch

    from ipu_mlir.frontends import torch as ipu_torch
    from ipu_mlir.runtime import distributed

    world = distributed.start() if distributed.launched_size() > 1 else None
    width, layers, batch = (128, 2, 16) if quick else (512, 4, 64)
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[module for _ in range(layers) for module in (torch.nn.Linear(width, width), torch.nn.ReLU())])
    options = ipu_torch.Options().replicationFactor(2).deviceIterations(iterations).target("m2000")
    trained = ipu_torch.trainingModel(_WithMSE(model), options=options, optimizer=torch.optim.SGD(model.parameters(), lr=0.01))
    generator = torch.Generator().manual_seed(1)
    x, y = (torch.randn(iterations * 2 * batch, width, generator=generator) for _ in range(2))
    start = time.perf_counter()
    losses = [trained(x, y).numpy()]
    first, times = time.perf_counter() - start, []
    for _ in range(repeat):
        if world is not None:
            world.comm.Barrier()
        start = time.perf_counter()
        losses.append(trained(x, y).numpy())
        times.append(time.perf_counter() - start)
    trained.copyWeightsToHost()
    if world is None or world.rank == 0:
        np.savez(out, *losses, *(value.numpy() for value in model.state_dict().values()))
        print(json.dumps({"first_s": first, "run_s": statistics.median(times), "cycles": trained.profile.cycles}))


class _WithMSE:
    """Made an nn.Module subclass on first use (torch is imported lazily): the model's MSE to a target."""

    def __new__(cls, model):  # noqa: ANN001, ANN204
        import torch

        class WithMSE(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, x, y):  # noqa: ANN001, ANN202
                return torch.nn.functional.mse_loss(self.model(x), y)

        return WithMSE()


def _run(command: list[str]) -> subprocess.CompletedProcess:
    """`command` with stdin a pipe held open and never written (MPICH Hydra's stdin trap,
    docs/many-ipus.md)."""
    read_end, write_end = os.pipe()
    try:
        return subprocess.run(command, stdin=read_end, capture_output=True, text=True, timeout=3600)
    finally:
        os.close(read_end)
        os.close(write_end)


def _both_sides(command: list[str], folder: str) -> tuple[dict, bool]:
    """`command` (this script in a rank's role) run alone and on 2 MPI ranks, each writing its
    outputs to `folder`: each side's last JSON line, and whether the outputs are the same bytes."""
    sides = {}
    for ranks in (1, 2):
        launcher = [str(MPIEXEC), "-n", str(ranks)] if ranks > 1 else []
        done = _run([*launcher, *command, "--out", str(Path(folder) / f"out{ranks}.npz")])
        if done.returncode:
            raise SystemExit(f"mpi_scaling: {ranks} rank(s) failed: {done.stderr.strip().splitlines()[-1:]}")
        sides[ranks] = json.loads(done.stdout.strip().splitlines()[-1])
    one, two = (np.load(Path(folder) / f"out{ranks}.npz") for ranks in (1, 2))
    return sides, all(one[name].tobytes() == two[name].tobytes() for name in one.files)


def measure_training(quick: bool, repeat: int, iterations: int) -> dict:
    """`--training`: both sides; the call times, speedup and efficiency; the same bytes?"""
    command = [sys.executable, __file__, "--training", "--rank", "-", "--repeat", str(repeat), "--iterations", str(iterations)]
    with tempfile.TemporaryDirectory(prefix="mpi-bench-") as folder:
        sides, same = _both_sides([*command, *(["--quick"] if quick else [])], folder)
    width, layers, batch = (128, 2, 16) if quick else (512, 4, 64)
    t1, t2 = sides[1]["run_s"], sides[2]["run_s"]
    return {
        "program": f"replicated training, 2 replicas x MLP {layers} x ({batch}x{width} @ {width}x{width} + ReLU), MSE, SGD, m2000",
        "iterations": iterations,
        "run_1_s": t1,
        "run_2_s": t2,
        "speedup": t1 / t2,
        "efficiency": t1 / (2 * t2),
        "first_1_s": sides[1]["first_s"],
        "first_2_s": sides[2]["first_s"],
        "same_bytes": same,
        "same_cycles": sides[1]["cycles"] == sides[2]["cycles"],
    }


def measure(quick: bool, repeat: int, iterations: list[int]) -> dict:
    """Both sides on the same program: per count of iterations the run times, speedup and
    efficiency; the load times; whether the outputs are the same bytes."""
    width, layers, batch = (256, 4, 64) if quick else (1024, 8, 256)
    with tempfile.TemporaryDirectory(prefix="mpi-bench-") as folder:
        program = Path(folder) / "mlp.l3.mlir"
        compile_program(mlp_text(width, layers, batch), program)
        command = [sys.executable, __file__, "--rank", str(program), "--repeat", str(repeat), "--iterations", *map(str, iterations)]
        sides, same = _both_sides(command, folder)
    runs = {}
    for count in iterations:
        t1, t2 = sides[1]["runs"][str(count)]["run_s"], sides[2]["runs"][str(count)]["run_s"]
        runs[count] = {"run_1_s": t1, "run_2_s": t2, "speedup": t1 / t2, "efficiency": t1 / (2 * t2)}
        runs[count] |= {key: sides[2]["runs"][str(count)][key] for key in ("messages", "bytes")}
    return {
        "program": f"MLP {layers} x ({batch}x{width} @ {width}x{width} + ReLU) f32, m2000 sharded over 2 IPUs",
        "load_1_s": sides[1]["load_s"],
        "load_2_s": sides[2]["load_s"],
        "runs": runs,
        "same_outputs": same,
        "same_cycles": sides[1]["cycles"] == sides[2]["cycles"],
    }


def rows(quick: bool, repeat: int, row) -> list[dict]:  # noqa: ANN001 (bench/run.py's row)
    """bench/run.py's mpi section: a row per count of iterations, 2 ranks against one process."""
    r = measure(quick, repeat, [1, 4] if quick else [1, 8])
    out = []
    for count, run in r["runs"].items():
        figure = (
            f"1 process {run['run_1_s']:.3f} s, 2 ranks {run['run_2_s']:.3f} s: speedup {run['speedup']:.2f}, "
            f"efficiency {run['efficiency']:.0%}; load {r['load_1_s']:.1f} s / {r['load_2_s']:.1f} s; "
            f"outputs {'identical' if r['same_outputs'] else 'DIFFER'}"
        )
        input_ = f"{r['program']}, {count} iteration{'s' * (count > 1)}"
        met = r["same_outputs"] and r["same_cycles"]
        raw = {**run, "iterations": count, "load_1_s": r["load_1_s"], "load_2_s": r["load_2_s"], "same_outputs": r["same_outputs"]}
        out.append(
            row("mpi", "simulation wall time on 2 MPI ranks", input_, figure, 1 / run["speedup"], "1 process", "same bytes", met, **raw)
        )
    t = measure_training(quick, repeat, 2 if quick else 4)
    figure = (
        f"1 process {t['run_1_s']:.3f} s, 2 ranks {t['run_2_s']:.3f} s a call: speedup {t['speedup']:.2f}, "
        f"efficiency {t['efficiency']:.0%}; first call (compile, load) {t['first_1_s']:.1f} s / {t['first_2_s']:.1f} s; "
        f"losses and parameters {'identical' if t['same_bytes'] else 'DIFFER'}"
    )
    input_ = f"{t['program']}, {t['iterations']} micro-batches a call"
    met = t["same_bytes"] and t["same_cycles"]
    out.append(row("mpi", "simulation wall time on 2 MPI ranks", input_, figure, 1 / t["speedup"], "1 process", "same bytes", met, **t))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small MLP (seconds)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per side (the median is kept)")
    parser.add_argument("--iterations", type=int, nargs="+", default=[1, 8], help="device iterations per run, one timing each")
    parser.add_argument("--training", action="store_true", help="replicated training (2 replicas) rather than a sharded program")
    parser.add_argument("--rank", type=Path, default=None, help=argparse.SUPPRESS)  # one side, in its own process
    parser.add_argument("--out", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rank is not None and args.training:
        training_rank_main(args.quick, args.iterations[0], args.repeat, args.out)
    elif args.rank is not None:
        rank_main(args.rank, args.iterations, args.repeat, args.out)
    elif args.training:
        print(json.dumps(measure_training(args.quick, args.repeat, args.iterations[0]), indent=1))
    else:
        print(json.dumps(measure(args.quick, args.repeat, args.iterations), indent=1))


if __name__ == "__main__":
    main()
