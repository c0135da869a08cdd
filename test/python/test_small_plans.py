"""Small ops spread over the chip (issue 27, point 1): a 128 x 128 x 384 matmul and a lookup of
128 ids in a 1,000-row table are cut over about 1,300 tiles, their summed loop (k, the table's
rows) cut too, so partial sums exist where PyTorch has none. poplin's planner keeps the cut
with the fewest cycles; ipu-plan's estimate (lowering/plan.py `_Prices`) does the same, and the
simulator's cost model agrees: each cut pinned onto fewer tiles here is slower on the simulated
device (bench/simulator_speed.py's docstring has the numbers), so the plan stays spread."""

from __future__ import annotations

import math

import pytest
from mlir import ir

from ipu_mlir.dialects.attrs import PARTITION_ATTR
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import STEPS
from ipu_mlir.runtime.api import load_module
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target import load_target

MATMUL = """
func.func @main(%a: tensor<128x128xf32>, %b: tensor<128x384xf32>) -> tensor<128x384xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x384xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x384xf32>) -> tensor<128x384xf32>
  %c = linalg.matmul ins(%a, %b : tensor<128x128xf32>, tensor<128x384xf32>) outs(%f : tensor<128x384xf32>) -> tensor<128x384xf32>
  return %c : tensor<128x384xf32>
}
"""

# torch-mlir's embedding: the table's row at each id, as ipu-convert-to-ipu finds it
LOOKUP = """
func.func @main(%table: tensor<1000x128xf32>, %ids: tensor<1x128xi64>) -> tensor<1x128x128xf32> {
  %e = tensor.empty() : tensor<1x128x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<1x128xi64>) outs(%e : tensor<1x128x128xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<1000x128xf32>
    linalg.yield %v : f32
  } -> tensor<1x128x128xf32>
  return %r : tensor<1x128x128xf32>
}
"""


def _cycles(source: str, op_name: str, pinned: tuple[int, ...] | None) -> tuple[int, int]:
    """The simulated cycles of `source` on gc200 with its `op_name` op's blocks `pinned` (None:
    as ipu-plan chooses), and the tiles that op is cut over."""
    module = load_module(source)
    plan = STEPS.index("ipu-plan")
    with module.context:
        build_pass_manager("builtin.module(ipu-set-target{target=gc200}," + ",".join(STEPS[:plan]) + ")").run(module.operation)
        for op in _ops(module, op_name):
            if pinned:
                op.attributes[PARTITION_ATTR] = ir.DenseI64ArrayAttr.get(list(pinned))
        build_pass_manager("builtin.module(ipu-plan)").run(module.operation)
        (op,) = _ops(module, op_name)
        parts = math.prod(list(ir.DenseI64ArrayAttr(op.attributes["ipu.tiles"]))[1::2])
        build_pass_manager("builtin.module(" + ",".join(STEPS[plan + 1 :]) + ")").run(module.operation)
        return Simulator(module, load_target("gc200"), verified=True).profile.cycles, parts


def _ops(module: ir.Module, name: str) -> list[ir.OpView]:
    (function,) = module.body.operations  # L1 / L2: the entry alone
    return [op for op in function.regions[0].blocks[0].operations if op.operation.name == name]


# Cuts over fewer tiles, each loop's blocks (matmul: m, n, k; lookup: batch, ids, columns, rows)
@pytest.mark.parametrize(
    ("source", "op_name", "fewer"),
    [
        (MATMUL, "ipu.matmul", [(32, 24, 32), (16, 16, 64), (16, 32, 128), (128, 384, 128)]),
        (LOOKUP, "ipu.gather", [(1, 64, 8, 200), (1, 128, 128, 200), (1, 128, 128, 1000)]),
    ],
    ids=["matmul", "lookup"],
)
def test_small_ops_spread_over_the_chip_cost_the_fewest_simulated_cycles(source, op_name, fewer):
    chosen, tiles = _cycles(source, op_name, None)
    assert tiles > 1000  # spread over most of gc200's 1,472 tiles
    for blocks in fewer:
        cycles, parts = _cycles(source, op_name, blocks)
        assert parts < tiles and cycles > chosen, (blocks, parts, cycles, chosen)
