"""`ipu.matmul`'s kernel (dialects/ops/matmul.py `Product`) writing its product straight into a
vertex group's output view (`Product.into`, `CompiledCodelet.into`, `VertexGroup.direct`):
the same bytes as a new result copied in, and refused wherever they could differ."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.ops.matmul import Product
from ipu_mlir.frontends.api import load_simulator
from ipu_mlir.runtime import codelet as codelet_module
from ipu_mlir.runtime.codelet import compile_codelet

RNG = np.random.default_rng(3)
CONTEXT = make_context()


def grid_operands(dtype=np.float32):
    """A (2, 1, 3) x (1, 4, 3) tile grid of 5x6 @ 6x7 products: lhs shared along the second
    axis, rhs along the first, as a matmul cut over m, n and k gives them."""
    lhs = (RNG.standard_normal((2, 1, 3, 5, 6)) * 4).astype(dtype)
    rhs = (RNG.standard_normal((1, 4, 3, 6, 7)) * 4).astype(dtype)
    return lhs, rhs


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_into_writes_the_bytes_of_a_new_product(dtype):
    lhs, rhs = grid_operands(dtype)
    kernel = Product(np.dtype(dtype), np.dtype(dtype))
    # the output as a vertex group sees it: each tile's box dense, tiles apart in a larger buffer
    buffer = np.full((2, 4, 3, 5 * 7 + 3), 7, dtype)
    out = buffer[..., 3:].reshape(2, 4, 3, 5, 7)
    assert kernel.into(lhs, rhs, out)
    assert out.tobytes() == kernel(lhs, rhs).tobytes()
    assert (buffer[..., :3] == 7).all()  # nothing outside the boxes


def test_into_refuses_casts_and_layouts_a_new_result_does_not_have():
    lhs, rhs = grid_operands(np.float16)
    out = np.zeros((2, 4, 3, 5, 7), np.float16)
    assert not Product(np.dtype(np.float16), np.dtype(np.float16)).into(lhs, rhs, out)  # f16 sums in f32
    assert not out.any()
    bits = np.zeros((2, 4, 3, 5, 7), bool)
    assert not Product(np.dtype(bool), np.dtype(bool)).into(lhs > 0, rhs > 0, bits)  # i1 sums in i64
    lhs, rhs = grid_operands()
    f32 = Product(np.dtype(np.float32), np.dtype(np.float32))
    spread = np.zeros((2, 4, 3, 5, 14), np.float32)[..., ::2]  # columns apart: numpy's own loop, not BLAS
    assert not f32.into(lhs, rhs, spread) and not spread.any()
    assert not f32.into(lhs, rhs, np.zeros((2, 4, 3, 5, 7), np.float64))


def codelet(text: str, batch_rank: int = 3):
    with CONTEXT:
        module = ir.Module.parse(text)  # kept alive while its function compiles
        return compile_codelet(module.body.operations[0], batch_rank)


ONE_MATMUL = """func.func @f(%a: tensor<5x6xf32>, %b: tensor<6x7xf32>) -> tensor<5x7xf32> {
  %0 = "ipu.matmul"(%a, %b) : (tensor<5x6xf32>, tensor<6x7xf32>) -> tensor<5x7xf32>
  return %0 : tensor<5x7xf32>
}"""

MATMUL_THEN_ADD = """func.func @f(%a: tensor<5x6xf32>, %b: tensor<6x7xf32>) -> tensor<5x7xf32> {
  %0 = "ipu.matmul"(%a, %b) : (tensor<5x6xf32>, tensor<6x7xf32>) -> tensor<5x7xf32>
  %1 = arith.addf %0, %0 : tensor<5x7xf32>
  return %1 : tensor<5x7xf32>
}"""


def test_a_codelet_of_one_matmul_writes_into_its_output():
    lhs, rhs = grid_operands()
    compiled = codelet(ONE_MATMUL)
    out = np.empty((2, 4, 3, 5, 7), np.float32)
    assert compiled.into([lhs, rhs], out)
    assert out.tobytes() == compiled([lhs, rhs])[0].tobytes()
    replicated = np.zeros((2, 1, 3, 5, 7), np.float32)  # a buffer holding one copy along the grid's second axis
    assert not compiled.into([lhs, rhs], replicated) and not replicated.any()
    assert not codelet(MATMUL_THEN_ADD).into([lhs, rhs], out)  # the sum is not the product


def test_later_runs_write_products_in_place_with_the_bytes_of_the_checked_run(monkeypatch):
    """Later runs write each product through the writer `CompiledCodelet.writer` made once
    (steps.VertexGroup.prepare); where it refuses, through the checked path, the same bytes."""
    from test_replicas import MLP

    written = []
    writer = codelet_module.CompiledCodelet.writer

    def recording(self, inputs, output, **options):  # noqa: ANN001, ANN202, ANN003
        write = writer(self, inputs, output, **options)
        if write is None:
            return None
        return lambda: written.append(write()) or written[-1]

    monkeypatch.setattr(codelet_module.CompiledCodelet, "writer", recording)
    simulator = load_simulator(MLP)
    inputs = [RNG.standard_normal(shape).astype(dtype) for shape, dtype in simulator.arguments]
    checked = [a.tobytes() for a in simulator.run(inputs)]
    assert not any(written)  # the checked run reads and writes through its checks
    assert [a.tobytes() for a in simulator.run(inputs)] == checked
    assert any(written)
    monkeypatch.setattr(codelet_module.CompiledCodelet, "writer", lambda *args, **options: None)
    refused = load_simulator(MLP)
    assert [a.tobytes() for a in refused.run(inputs)] == checked
    assert [a.tobytes() for a in refused.run(inputs)] == checked
