"""Embedding lookups (`ipu.gather`) from PyTorch, tables cut by rows across tiles, against
PyTorch; out-of-range indices stop the run with torch-mlir's own bounds-check message."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch  # the test extra installs torch and torch-mlir
from mlir import ir
from torch_mlir import fx

from ipu_mlir.dialects.ops.gather import Gather
from ipu_mlir.frontends import api
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.runtime.memory import SimulationError
from ipu_mlir.target.element_types import numpy_float


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


class RowsThenSum(torch.nn.Module):
    """A message-passing step: rows `x[src]` (torch-mlir wraps a negative index first), then
    summed into their destinations."""

    def __init__(self, columns: int):
        super().__init__()
        self.lin = torch.nn.Linear(columns, columns)

    def forward(self, x, src, dst):
        return torch.zeros_like(x).index_add(0, dst, self.lin(x)[src])


def test_row_gather_behind_the_negative_index_wrap_is_a_row_lookup():
    """`x[idx]` planned as a lookup of whole rows: before, the wrap hid the row and the gather
    read one element per point (5000 x 32 nodes, 20,000 edges: 1,475,072 bytes on a tile of
    gc200 at GNN scale, refused); negative indices count from the end as in PyTorch."""
    torch.manual_seed(0)
    nodes, edges, columns = 5000, 20000, 32
    model = RowsThenSum(columns).eval()
    x, src, dst = torch.randn(nodes, columns), torch.randint(-nodes, nodes, (edges,)), torch.randint(0, nodes, (edges,))
    text = str(fx.export_and_import(model, x, src, dst, output_type="linalg-on-tensors", func_name="main"))
    simulator = api.load_simulator(text, target="gc200")
    (out,) = simulator.run([x.numpy(), src.numpy(), dst.numpy()])
    np.testing.assert_allclose(out, model(x, src, dst).detach().numpy(), rtol=1e-4, atol=1e-5)
    module = api.load_module(text)
    with module.context, ir.Location.unknown():
        build_pass_manager("builtin.module(ipu-convert-tm-tensor,ipu-convert-to-ipu)").run(module.operation)
        function = module.body.operations[0]
        tables = [str(op.operands[0].type) for op in function.regions[0].blocks[0].operations if op.operation.name == "ipu.gather"]
    assert tables == [f"tensor<{nodes}x{columns}xf32>"], tables  # whole rows of the table, not one element per point


def _numpy_lookup(table, indices, rows, batch):
    """The kernel's result as numpy's masks and fancy indexing give it (its code before the
    compiled lookup): each tile's rows of the indices it holds, zeros elsewhere."""
    tiles = np.broadcast_shapes(table.shape[:batch], indices.shape[:batch], rows.shape[:batch])
    count, columns = table.shape[batch:]
    points = indices.shape[batch:]
    wanted = np.broadcast_to(indices, tiles + points).reshape(*tiles, -1).astype(np.int64)
    local = wanted - np.broadcast_to(rows[..., :1], (*tiles, 1)).astype(np.int64)
    held = np.nonzero((local >= 0) & (local < count))
    result = np.zeros((*local.shape, columns), table.dtype)
    result[held] = table[(*(axis if n > 1 else 0 for axis, n in zip(held, table.shape[:batch])), local[held])]
    return result.reshape(*tiles, *points, columns)


# (table's batch shape, indices' batch shape, rows' batch shape, rows a tile, columns, points)
LAYOUTS = [
    ((1, 1, 7, 5), (1, 2, 1, 1), (1, 1, 1, 5), 9, 1, (1, 13)),  # GPT-2's: columns cut, rows cut, two index halves
    ((3, 1), (1, 4), (3, 1), 11, 3, (5,)),
    ((1,), (6,), (1,), 40, 2, (2, 3)),  # one table on every tile
    ((2, 3), (2, 3), (2, 3), 4, 5, (7,)),  # nothing broadcast
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "bool", "float64"])
def test_lookup_kernel_gives_numpys_bytes(layout, dtype):
    """The compiled lookup against numpy's, on broadcast tile grids and a strided table view,
    with indices below, inside and above each tile's rows, NaN payloads and -0.0 kept."""
    table_batch, index_batch, rows_batch, count, columns, points = layout
    batch, rng = len(table_batch), np.random.default_rng(count)
    holder = np.dtype(numpy_float(dtype) or dtype)
    raw = rng.integers(0, 2 ** (8 * holder.itemsize) - 1, (*table_batch, count, columns + 1), dtype=np.uint64)
    bits = np.dtype(f"u{holder.itemsize}")
    table = (raw.astype(bits) if dtype != "bool" else (raw & 1).astype(np.uint8)).view(holder)[..., 1:]  # strided: a column dropped
    total = math.prod(rows_batch) * count
    indices = rng.integers(-3, total + 3, (*index_batch, *points))
    firsts = (np.arange(math.prod(rows_batch)) * count).reshape(rows_batch)
    rows = firsts[..., None] + np.arange(count)
    got = Gather().kernel(None, batch)(table, indices, rows)
    expected = _numpy_lookup(table, indices, rows, batch)
    assert got.dtype == expected.dtype and got.shape == expected.shape and got.tobytes() == expected.tobytes()
    assert np.count_nonzero(expected.view(bits)) > 0 and np.count_nonzero(expected.view(bits) == 0) > 0
