"""Pipelined training (issue 26): one step of an MLP over the 4 IPUs of an m2000, sharded (the
micro-batches one after another, each through every IPU) against pipelined (PopART's order,
lowering/pipeline_training.py), simulated cycles, and the pipeline's bubble.

    .venv/bin/python bench/pipelined_training.py [--accumulation G ...]

The model: 4 layers, each a 256x1024 by 1024x1024 f32 matmul and a ReLU (one layer an IPU by
BeginBlock), MSE, SGD with momentum; micro-batch 256 rows. A step is G micro-batches and one
update. Sharded, a run is one micro-batch (the update made on the last, docs/training.md) and the
call (one step) G runs; pipelined, a run is the step. The profile's cycles are the call's. The bubble: the ideal one of PopART's
pipeline, (2S - 2) / (G + 2S - 2) with S IPUs (each IPU idle 2S - 2 of the G + 2S - 2 cycles,
the stages assumed alike), beside the measured one, 1 - (sharded step / S) / pipelined step: the
share of the pipelined step the IPUs would not need if the sharded step's work were spread
evenly over them.

A second table decomposes the pipelined step from its profile (docs/many-ipus.md, "The
bubble"): the compute of its supersteps (each its slowest tile's, the IPUs in step), what the
busiest IPU computes on its own tiles (the IPUs' supersteps paired as they are, a lower
bound), the exchange phases carrying IPU-Link traffic, the other exchange phases, the syncs.
A third splits the pipelined step of the first G by pipeline cycle (the supersteps between two
link phases of their own, ipu-schedule's): each cycle's cycles, its link phase, its compute
beside what the busiest IPU computes on its own tiles in it, the IPUs computing in it.

`--sizes G ...` instead measures the pipelined step's size at each G, each in a process of its
own (its peak resident memory its own): the ops of the front end's step (L0: one micro-batch in
a loop over G - 1, the last after it, frontends/accumulation_loop.py) and of the compiled
program (L3), the seconds to
trace and import, to compile and load, and the step's cycles.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np
import torch
from torch import nn

import ipu_mlir.frontends.torch as ipu_torch
from ipu_mlir.runtime.profile import Profile

WIDTH, ROWS, IPUS = 1024, 256, 4


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(WIDTH, WIDTH) for _ in range(IPUS))

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return nn.functional.mse_loss(x, target)


def ops(operation) -> int:
    """The ops in `operation`'s regions, a generic's body not counted."""
    return sum(
        1 + (ops(op.operation) if op.operation.name != "linalg.generic" else 0)
        for region in operation.regions
        for block in region.blocks
        for op in block.operations
    )


def size(accumulation: int) -> dict:
    """The pipelined step's size at `accumulation` micro-batches (run in a process of its own)."""
    torch.manual_seed(0)
    net = Net()
    for ipu, layer in enumerate(net.layers[1:], start=1):
        ipu_torch.BeginBlock(layer, ipu_id=ipu)
    options = ipu_torch.Options().target("m2000").setExecutionStrategy(ipu_torch.PipelinedExecution())
    options.Training.gradientAccumulation(accumulation)
    model = ipu_torch.trainingModel(net, options=options, optimizer=torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9))
    model(torch.randn(ROWS * accumulation, WIDTH), torch.randn(ROWS * accumulation, WIDTH))
    return {
        "G": accumulation,
        "L0 ops": ops(model.step.module.operation),
        "L3 ops": ops(model.program.operation),
        "trace + import": f"{model.timings['export']:.1f} s",
        "compile + load": f"{model.timings['compile_and_load']:.1f} s",
        "peak resident": f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB",
        "cycles a step": model.profile.cycles,
    }


def sizes(accumulations: list[int]) -> None:
    rows = [
        json.loads(subprocess.run([sys.executable, __file__, "--size-of", str(g)], check=True, capture_output=True, text=True).stdout)
        for g in accumulations
    ]
    print("| " + " | ".join(rows[0]) + " |")
    print("|---" * len(rows[0]) + "|")
    for row in rows:
        print("| " + " | ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in row.values()) + " |", flush=True)


def step_cycles(pipelined: bool, accumulation: int) -> tuple[Profile, float]:
    """(the profile of one step, seconds to compile) for the MLP."""
    torch.manual_seed(0)
    net = Net()
    for ipu, layer in enumerate(net.layers[1:], start=1):
        ipu_torch.BeginBlock(layer, ipu_id=ipu)
    strategy = ipu_torch.PipelinedExecution() if pipelined else ipu_torch.ShardedExecution()
    options = ipu_torch.Options().target("m2000").setExecutionStrategy(strategy)
    options.Training.gradientAccumulation(accumulation)
    model = ipu_torch.trainingModel(net, options=options, optimizer=torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9))
    start = time.perf_counter()
    model(torch.randn(ROWS * accumulation, WIDTH), torch.randn(ROWS * accumulation, WIDTH))
    return model.profile, time.perf_counter() - start  # the call's runs: one step either way


def decomposition(profile: Profile) -> dict[str, int]:
    """The step's cycles by kind: the supersteps' sums, each counted `repeat` times, times the
    call's runs (sharded: one a micro-batch, all alike; pipelined: one)."""
    tiles_per_ipu = profile.num_tiles // profile.num_ipus
    own = np.zeros(profile.num_ipus, np.int64)  # each IPU's compute: its slowest tile's, per superstep
    parts = dict.fromkeys(("compute", "link phases", "other exchange", "sync"), 0)
    for step in profile.steps:
        if step.compute_cycles_per_tile is not None:
            own += step.compute_cycles_per_tile.reshape(profile.num_ipus, tiles_per_ipu).max(axis=1) * step.repeat
        parts["compute"] += step.compute_cycles * step.repeat
        parts["link phases" if step.link_flows else "other exchange"] += step.exchange_cycles * step.repeat
        parts["sync"] += step.sync_cycles * step.repeat
    runs = profile.iterations
    return {"step": profile.cycles, **{k: v * runs for k, v in parts.items()}, "busiest IPU's own compute": int(own.max()) * runs}


def by_cycle(profile: Profile) -> list[dict]:
    """The pipelined step's supersteps split at each link phase of its own (an exchange-only
    superstep over the IPU-Links, which opens a pipeline cycle): per cycle, its cycles, its link
    phase's, its compute (each superstep's slowest tile), the busiest IPU's own compute, the
    on-IPU exchange and syncs, and which IPUs compute."""
    tiles_per_ipu = profile.num_tiles // profile.num_ipus
    rows: list[dict] = []
    row = None
    for step in profile.steps:
        if row is None or (step.link_flows and step.compute_cycles_per_tile is None):
            row = {"cycles": 0, "link phase": 0, "compute": 0, "own": np.zeros(profile.num_ipus, np.int64), "other": 0, "supersteps": 0}
            rows.append(row)
        row["cycles"] += step.cycles * step.repeat
        row["supersteps"] += step.repeat
        if step.link_flows and step.compute_cycles_per_tile is None:
            row["link phase"] += step.cycles * step.repeat
            continue
        row["compute"] += step.compute_cycles * step.repeat
        row["other"] += (step.exchange_cycles + step.sync_cycles) * step.repeat
        if step.compute_cycles_per_tile is not None:
            row["own"] += step.compute_cycles_per_tile.reshape(profile.num_ipus, tiles_per_ipu).max(axis=1) * step.repeat
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accumulation", type=int, nargs="+", default=[7, 14], help="micro-batches a step (>= 2 x 4 - 1)")
    parser.add_argument("--sizes", type=int, nargs="+", help="measure the pipelined step's size at these G instead")
    parser.add_argument("--size-of", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.size_of:
        print(json.dumps(size(args.size_of)))
        return
    if args.sizes:
        sizes(args.sizes)
        return
    print("| G | sharded step | pipelined step | speedup | bubble (ideal) | bubble (measured) | first call, sharded / pipelined |")
    print("|---|---|---|---|---|---|---|")
    parts, traced = {}, None
    for accumulation in args.accumulation:
        sharded_profile, sharded_s = step_cycles(False, accumulation)
        pipelined_profile, pipelined_s = step_cycles(True, accumulation)
        sharded, pipelined = sharded_profile.cycles, pipelined_profile.cycles
        parts[accumulation] = (decomposition(sharded_profile), decomposition(pipelined_profile))
        traced = traced or (accumulation, by_cycle(pipelined_profile))
        ideal = (2 * IPUS - 2) / (accumulation + 2 * IPUS - 2)
        measured = 1 - sharded / IPUS / pipelined
        print(
            f"| {accumulation} | {sharded:,} | {pipelined:,} | {sharded / pipelined:.2f} | {ideal:.0%} | {measured:.0%} "
            f"| {sharded_s:.1f} s / {pipelined_s:.1f} s |",
            flush=True,
        )
    names = list(next(iter(parts.values()))[0])
    print("\n| G, execution | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for accumulation, both in parts.items():
        for label, cycles in zip(("sharded", "pipelined"), both):
            print(f"| {accumulation}, {label} | " + " | ".join(f"{cycles[name]:,}" for name in names) + " |")
    accumulation, rows = traced
    update = accumulation + 2 * IPUS - 2
    print(f"\nG = {accumulation}, pipelined, by pipeline cycle ({update}: the update; after it, the results crossing to the host):")
    columns = ("cycle", "supersteps", "cycles", "link phase", "compute", "busiest IPU's own compute", "on-IPU exchange and syncs")
    print("| " + " | ".join(columns) + " | IPUs computing (own compute) |")
    print("|---|---|---|---|---|---|---|---|")
    for index, row in enumerate(rows):
        own = ", ".join(f"{ipu}: {int(c):,}" for ipu, c in enumerate(row["own"]) if c)
        print(
            f"| {index} | {row['supersteps']} | {row['cycles']:,} | {row['link phase']:,} | {row['compute']:,} "
            f"| {int(row['own'].max()):,} | {row['other']:,} | {own} |"
        )


if __name__ == "__main__":
    main()
