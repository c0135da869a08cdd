"""`ipu.scatter` (dialects/ops/scatter.py): its kernel against a plain loop, its cost linear in
the updates, and index_put's overwrite of duplicate indices. test_tm_tensor.py runs the
scatters torch-mlir exports through it against PyTorch and the ExecutionEngine reference
(which runs the linalg-only, quadratic rewrite: two independent forms)."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # the test extra installs torch and torch-mlir
from mlir import ir
from test_tm_tensor import IndexPut

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.ops import record_of
from ipu_mlir.frontends import api
from ipu_mlir.frontends import torch as ipu_torch
from ipu_mlir.target import load_target

SCATTER = """
func.func @main(%u: {updates}, %p: tensor<{n}xi64>, %r: tensor<{rows}xi64>) -> {result} {{
  %s = "ipu.scatter"(%u, %p, %r) {{combiner = "{combiner}"}} : ({updates}, tensor<{n}xi64>, tensor<{rows}xi64>) -> {result}
  return %s : {result}
}}
"""


def _op(n: int, d: int, rows: int, element: str, combiner: str):
    updates, result = f"tensor<{n}x{d}x{element}>", f"tensor<{rows}x{d}x{element}>"
    module = ir.Module.parse(SCATTER.format(n=n, rows=rows, updates=updates, result=result, combiner=combiner))
    return module, next(iter(module.body.operations[0].regions[0].blocks[0].operations))


def _loop(updates, positions, lo, rows, fold, start):
    """The sequential loop the kernel must equal, one tile holding rows [lo, lo + rows)."""
    result = np.full((rows, updates.shape[1]), start, updates.dtype)
    for n, p in enumerate(positions):
        if lo <= p < lo + rows:
            result[p - lo] = fold(result[p - lo], updates[n])
    return result


@pytest.mark.parametrize(
    "element,combiner,fold,start",
    [
        ("f32", "arith.addf", np.add, 0.0),
        ("f16", "arith.addf", np.add, 0.0),
        ("i32", "arith.addi", np.add, 0),
        ("i64", "arith.maxsi", np.maximum, np.iinfo(np.int64).min),
    ],
)
def test_kernel_folds_each_tile_s_updates_in_order(element: str, combiner: str, fold, start) -> None:
    """Three tiles (a leading tile axis), each holding 5 of 15 rows and the same 40 updates
    (a size-1 tile axis, broadcast), duplicates and out-of-range positions among them: each
    tile equals the loop bit for bit, and a second call gives the same bytes."""
    rng = np.random.default_rng(1)
    with make_context(), ir.Location.unknown():
        _, op = _op(40, 3, 5, element, combiner)
        kernel = record_of(op).kernel(op, 1)
    dtype = np.dtype({"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64}[element])
    updates = (rng.standard_normal((1, 40, 3)) * 100).astype(dtype)
    positions = rng.integers(-2, 17, (1, 40))
    rows = np.arange(15).reshape(3, 5)
    got = kernel(updates, positions, rows)
    assert got.shape == (3, 5, 3) and got.dtype == dtype
    for tile in range(3):
        np.testing.assert_array_equal(got[tile], _loop(updates[0], positions[0], 5 * tile, 5, fold, dtype.type(start)))
    assert kernel(updates, positions, rows).tobytes() == got.tobytes()


def test_work_is_linear_in_the_updates() -> None:
    """Doubling the updates about doubles a tile's work; doubling the rows it holds adds only
    their fill (the generic it replaces compared every update with every row)."""
    target = load_target("gc200")
    with make_context(), ir.Location.unknown():
        _, op = _op(4096, 1, 4096, "f32", "arith.addf")
        record = record_of(op)
        base = record.work(op, (4096, 1, 4096), target)
        twice_updates = record.work(op, (4096, 1, 8192), target)
        twice_rows = record.work(op, (8192, 1, 4096), target)
    assert 1.5 * base < twice_updates < 2.1 * base
    assert twice_rows < 1.5 * base


def test_overwrite_with_duplicates_takes_the_last_update_as_the_reference_does() -> None:
    """PyTorch leaves index_put's choice among duplicate indices unspecified; torch-mlir's loop
    (and the reference, and ipu.scatter) takes the last update naming a row."""
    x, rows, values = torch.randn(6, 8), torch.tensor([2, 4, 2, -2, 0]), torch.randn(5, 8)
    compiled = ipu_torch.compile(IndexPut(False), x, rows, values, target="tiny")
    got = compiled(x, rows, values).numpy()
    reference = api.reference_outputs(compiled.imported, [x.numpy(), rows.numpy(), values.numpy()], "main")[0]
    expected = x.numpy().copy()
    expected[[0, 2, 4]] = values.numpy()[[4, 2, 3]]
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(reference, expected)
