"""Embedding lookups (`ipu.gather`) from PyTorch, tables cut by rows across tiles, against
PyTorch; out-of-range indices stop the run with torch-mlir's own bounds-check message."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # the test extra installs torch and torch-mlir
from torch_mlir import fx

from ipu_mlir.frontends import api
from ipu_mlir.runtime.memory import SimulationError


class Embed(torch.nn.Module):
    def __init__(self, rows: int, columns: int):
        super().__init__()
        self.table = torch.nn.Embedding(rows, columns)

    def forward(self, ids):
        return self.table(ids) * 2.0


def _export(rows: int, columns: int, ids: torch.Tensor) -> tuple[Embed, str]:
    torch.manual_seed(rows)
    model = Embed(rows, columns).eval()
    return model, str(fx.export_and_import(model, ids, output_type="linalg-on-tensors", func_name="main"))


@pytest.mark.parametrize("rows,columns,target", [(50, 8, "tiny"), (1000, 64, "tiny"), (3000, 96, "gc200")])
def test_embedding_matches_pytorch(rows, columns, target):
    ids = torch.randint(0, rows, (2, 16))
    ids[0, :3] = torch.tensor([0, rows - 1, rows // 2])  # both ends of the table
    model, text = _export(rows, columns, ids)
    simulator = api.load_simulator(text, target=target)
    (out,) = simulator.run([ids.numpy()])
    np.testing.assert_array_equal(out, model(ids).detach().numpy())
    assert simulator.run([ids.numpy()])[0].tobytes() == out.tobytes()  # the run sharing replicas


def test_table_larger_than_a_tile_is_cut_by_rows():
    rows, columns = 1000, 64  # 256 KB of f32 on tiny's 64 KB tiles
    ids = torch.randint(0, rows, (1, 8))
    _, text = _export(rows, columns, ids)
    simulator = api.load_simulator(text, target="tiny")
    assert max(simulator.profile.memory_per_tile) < 65536


@pytest.mark.parametrize("bad,message", [(-1, "index must be larger or equal to 0"), (50, "index must be smaller than dim size")])
def test_out_of_range_index_fails_with_torch_mlirs_message(bad, message):
    ids = torch.randint(0, 50, (2, 4))
    _, text = _export(50, 8, ids)
    simulator = api.load_simulator(text, target="tiny")
    ids[1, 2] = bad
    with pytest.raises(SimulationError, match=rf"'cf.assert' failed on 1 of 8 elements: \"{message}\""):
        simulator.run([ids.numpy()])
