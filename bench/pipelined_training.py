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
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn

import ipu_mlir.frontends.torch as ipu_torch

WIDTH, ROWS, IPUS = 1024, 256, 4


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(WIDTH, WIDTH) for _ in range(IPUS))

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return nn.functional.mse_loss(x, target)


def step_cycles(pipelined: bool, accumulation: int) -> tuple[int, float]:
    """(simulated cycles of one step, seconds to compile) for the MLP."""
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
    return model.profile.cycles, time.perf_counter() - start  # the call's runs: one step either way


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accumulation", type=int, nargs="+", default=[7, 14], help="micro-batches a step (>= 2 x 4 - 1)")
    args = parser.parse_args()
    print("| G | sharded step | pipelined step | speedup | bubble (ideal) | bubble (measured) | first call, sharded / pipelined |")
    print("|---|---|---|---|---|---|---|")
    for accumulation in args.accumulation:
        sharded, sharded_s = step_cycles(False, accumulation)
        pipelined, pipelined_s = step_cycles(True, accumulation)
        ideal = (2 * IPUS - 2) / (accumulation + 2 * IPUS - 2)
        measured = 1 - sharded / IPUS / pipelined
        print(
            f"| {accumulation} | {sharded:,} | {pipelined:,} | {sharded / pipelined:.2f} | {ideal:.0%} | {measured:.0%} "
            f"| {sharded_s:.1f} s / {pipelined_s:.1f} s |",
            flush=True,
        )


if __name__ == "__main__":
    main()
