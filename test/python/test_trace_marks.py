"""The training step's trace marks nodes with their phase and layer through torch's global
`torch.fx.traceback.current_meta` (frontends/joint_trace.py); a trace an error stops must not
leave a mark there for the next model's nodes, by which ipu-shard places parameters."""

from __future__ import annotations

import gc

import pytest
import torch
from torch.fx import traceback

from ipu_mlir.frontends.options import Options
from ipu_mlir.frontends.torch import trainingModel
from ipu_mlir.target.diagnostics import IpuError


class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # the trace stops here, inside the submodule's forward
            return x
        return -x


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(4, 8), DataDependent(), torch.nn.Linear(8, 2))

    def forward(self, x, y):
        return torch.nn.functional.mse_loss(self.layers(x), y)


def test_a_refused_trace_leaves_no_marks():
    before = dict(traceback.current_meta)
    model = Model()
    trained = trainingModel(model, Options(), torch.optim.SGD(model.parameters(), lr=0.1))
    with pytest.raises(IpuError, match="cannot trace the training step"):
        trained(torch.randn(4, 4), torch.randn(4, 2))
    del trained  # the suspended marks of the stopped forward, if any, are closed when collected
    gc.collect()
    assert traceback.current_meta == before
