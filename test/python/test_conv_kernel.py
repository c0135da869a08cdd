"""`ipu.conv`'s kernel (dialects/ops/conv.py) on each of its paths, over a grid of tiles whose
operands broadcast as a vertex group's do (the input the same along one grid axis, the filter
along another): im2col; a 1 x 1 convolution with stride 1 and no padding, which multiplies
the input in place, also when the input is a strided view of tile memory; a depthwise one
with stride 1 copying runs over whole padded rows. Against the
convolution by its definition, one tile at a time; and the same bits on every call. Then
`Im2col.into`, writing the product straight into a vertex group's output view: the bytes of a
new result copied in, refused wherever they could differ."""

from __future__ import annotations

import numpy as np
import pytest
from test_codelet import _conv_reference, codelet, conv, tensor

from ipu_mlir.dialects.ops.conv import Im2col
from ipu_mlir.frontends.api import load_simulator

RNG = np.random.default_rng(11)

CASES = [  # input, filter, strides, dilations, padding, groups
    ((1, 8, 5, 6), (6, 8, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0), 1),  # pointwise: the input is its columns
    ((2, 6, 4, 3), (4, 3, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0), 2),  # pointwise, grouped, two images
    ((1, 8, 5, 6), (6, 8, 1, 1), (2, 2), (1, 1), (0, 0, 0, 0), 1),  # 1 x 1 with a stride: im2col
    ((1, 4, 5, 6), (3, 4, 1, 1), (1, 1), (1, 1), (1, 0, 0, 1), 1),  # 1 x 1 with padding: im2col
    ((1, 3, 9, 9), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    ((1, 6, 9, 8), (6, 1, 3, 3), (1, 1), (1, 1), (1, 0, 1, 1), 6),  # depthwise, rows of 8 f32: runs
    ((2, 4, 9, 9), (8, 1, 3, 3), (1, 1), (2, 1), (0, 1, 2, 0), 4),  # two filters a channel, dilated: runs
    ((1, 3, 5, 6), (3, 1, 3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 3),  # rows of 4 f32, copied fast: im2col
    ((1, 3, 7, 7), (3, 1, 3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 3),  # strided: im2col
    ((1, 1, 9, 9), (4, 1, 7, 7), (1, 1), (1, 1), (1, 1, 1, 1), 1),  # one channel, 4 filters (a weight gradient): im2col
]


def reference(x, w, strides, dilations, padding, groups):
    """The convolution of each grid point's input and filter, the grid broadcast."""
    grid = np.broadcast_shapes(x.shape[:2], w.shape[:2])
    xs, ws = (np.broadcast_to(a, (*grid, *a.shape[2:])).reshape(-1, *a.shape[2:]) for a in (x, w))
    out = [_conv_reference(a, b, strides, dilations, padding, groups) for a, b in zip(xs, ws)]
    return np.stack(out).reshape(*grid, *out[0].shape)


@pytest.mark.parametrize("input_shape,filter_shape,strides,dilations,padding,groups", CASES)
def test_conv_kernel_on_a_broadcast_grid(input_shape, filter_shape, strides, dilations, padding, groups):
    kernel = codelet(conv(input_shape, filter_shape, strides, dilations, padding, groups), batch_rank=2)
    # the input varies along grid axis 0 only, the filter along axis 1 only; the input is a
    # strided view (every other row of a larger buffer), as tile memory hands it over
    memory = RNG.standard_normal((3, 1, 2, *input_shape)).astype(np.float32)
    x = memory[:, :, 0]
    w = RNG.standard_normal((1, 4, *filter_shape)).astype(np.float32)
    (got,) = kernel([x, w])
    expected = reference(x, w, strides, dilations, padding, groups)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    (again,) = kernel([x.copy(), w.copy()])
    np.testing.assert_array_equal(got, again)


@pytest.mark.parametrize("filters", [3, 1])
def test_a_weight_gradient_multiplies_im2col_columns_not_runs(filters):
    """A weight gradient's convolution on a tile: one input channel (the activation's), many
    filters (the output gradient's channels), taps as large as the output gradient (ResNet's
    56 x 56 for a 3 x 3 filter). The runs path would multiply (oh - 1) * wp + ow columns a
    filter where im2col has oh * ow (ResNet-18's: 119 against 9, 2 s of a 3.6 s training
    step): it takes im2col, its columns laid out (oh * ow, taps) and multiplied transposed
    (BLAS packs rows of kw faster than rows of ow), bit for bit that product; with one filter
    a tile too, not the compiled depthwise kernel's taps one by one (9x slower)."""
    kernel = codelet(conv((1, 1, 14, 14), (filters, 1, 14, 14), (1, 1), (1, 1), (1, 1, 1, 1), 1), batch_rank=2)
    im2col = kernel._direct[0]
    x = RNG.standard_normal((2, 1, 1, 1, 14, 14)).astype(np.float32)
    w = RNG.standard_normal((1, 5, filters, 1, 14, 14)).astype(np.float32)
    (got,) = kernel([x, w])
    columns = im2col._columns(x)
    assert not im2col._by_runs(x) and columns.shape[-2:] == (14 * 14, 9) and columns.strides[-2] == 4
    product = np.matmul(im2col._filters(w), columns)
    assert got.tobytes() == product.reshape(got.shape).tobytes()
    np.testing.assert_allclose(got, reference(x, w, (1, 1), (1, 1), (1, 1, 1, 1), 1), rtol=1e-4, atol=1e-4)


def test_pointwise_conv_equals_its_matmul():
    """A 1 x 1 convolution is the filter matrix times the input's (c, h * w) rows: the same
    product, bit for bit, as an `ipu.matmul` of those operands."""
    (f, c, h, w) = (5, 7, 3, 4)
    x = RNG.standard_normal((3, 1, c, h, w)).astype(np.float32)
    k = RNG.standard_normal((3, f, c, 1, 1)).astype(np.float32)
    (got,) = codelet(conv((1, c, h, w), (f, c, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0), 1))([x, k])
    text = f"""func.func @f(%a: {tensor((f, c), np.float32)}, %b: {tensor((c, h * w), np.float32)}) -> {tensor((f, h * w), np.float32)} {{
  %0 = "ipu.matmul"(%a, %b) : ({tensor((f, c), np.float32)}, {tensor((c, h * w), np.float32)}) -> {tensor((f, h * w), np.float32)}
  return %0 : {tensor((f, h * w), np.float32)}
}}"""
    (product,) = codelet(text)([k.reshape(3, f, c), x.reshape(3, c, h * w)])
    np.testing.assert_array_equal(got.reshape(3, f, h * w), product)


@pytest.mark.parametrize("input_shape,filter_shape,strides,dilations,padding,groups", CASES)
def test_into_writes_the_bytes_of_a_new_result(input_shape, filter_shape, strides, dilations, padding, groups):
    """`Im2col.into` through `CompiledCodelet.into`, into an output as a vertex group sees it
    (each tile's box dense, tiles apart in a larger buffer): the bytes of a new result, and
    nothing outside the boxes; the runs path (its product has columns it drops) refuses, where
    the compiled depthwise kernel (f32, f64: dialects/ops/depthwise.py) does not take it."""
    kernel = codelet(conv(input_shape, filter_shape, strides, dilations, padding, groups), batch_rank=2)
    x = RNG.standard_normal((3, 1, *input_shape)).astype(np.float32)
    w = RNG.standard_normal((1, 4, *filter_shape)).astype(np.float32)
    (new,) = kernel([x, w])
    buffer = np.full((3, 4, new[0, 0].size + 3), 7, np.float32)
    out = buffer[..., 3:].reshape(new.shape)
    runs = kernel._direct[0]._by_runs(x) and kernel._direct[0].planes is None
    assert kernel.into([x, w], out) == (not runs)
    if runs:
        assert (buffer == 7).all()
    else:
        assert out.tobytes() == new.tobytes()
        assert (buffer[..., :3] == 7).all()


def _transposed(array: np.ndarray) -> np.ndarray:
    """`array`'s values with its last two axes the other way round in memory: reshapes that
    merge them copy."""
    return np.ascontiguousarray(array.swapaxes(-1, -2)).swapaxes(-1, -2)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("input_shape,filter_shape,strides,dilations,padding,groups", CASES)
def test_into_again_on_the_same_arrays_reads_their_new_values(input_shape, filter_shape, strides, dilations, padding, groups, layout):
    """A vertex group hands `Im2col.into` the same views of tile memory every run, new values
    in them: the views it made of them the first time must still read those values (an
    im2col's columns are copied anew, and so are operands a reshape copies), each run the
    bytes of a new result."""
    compiled = codelet(conv(input_shape, filter_shape, strides, dilations, padding, groups), batch_rank=2)
    kernel = compiled._direct[0]
    x = RNG.standard_normal((3, 1, *input_shape)).astype(np.float32)
    w = RNG.standard_normal((1, 4, *filter_shape)).astype(np.float32)
    if layout == "transposed":
        x, w = _transposed(x), _transposed(w)
    out = np.zeros(compiled([x, w])[0].shape, np.float32)
    for _ in range(3):
        if not kernel.into(x, w, out):
            return  # the runs path: test_into_writes_the_bytes_of_a_new_result
        assert out.tobytes() == compiled([x.copy(), w.copy()])[0].tobytes()
        x[...], w[...] = RNG.standard_normal(x.shape), RNG.standard_normal(w.shape)


def test_into_refuses_casts_and_layouts_a_new_result_does_not_have():
    compiled = codelet(conv((1, 3, 9, 9), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1), batch_rank=2)
    x = RNG.standard_normal((2, 1, 1, 3, 9, 9)).astype(np.float32)
    w = RNG.standard_normal((1, 3, 4, 3, 3, 3)).astype(np.float32)
    kernel = compiled._direct[0]
    spread = np.zeros((2, 3, 1, 4, 9, 18), np.float32)[..., ::2]  # columns apart: numpy's own loop, not BLAS
    assert not kernel.into(x, w, spread) and not spread.any()
    apart = np.zeros((2, 3, 1, 4, 10, 9), np.float32)[..., :9, :]  # rows apart: not one (oh * ow) row per filter
    assert not kernel.into(x, w, apart) and not apart.any()
    assert not kernel.into(x, w, np.zeros((2, 3, 1, 4, 9, 9), np.float64))
    f16 = codelet(conv((1, 3, 9, 9), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1).replace("f32", "f16"), batch_rank=2)
    out = np.zeros((2, 3, 1, 4, 9, 9), np.float16)
    assert not f16.into([x.astype(np.float16), w.astype(np.float16)], out) and not out.any()  # f16 sums in f32


CONVS = """
module attributes {ipu.target = "tiny"} {
  func.func @main(%x: tensor<1x8x12x12xf32>, %w: tensor<16x8x3x3xf32>, %p: tensor<8x16x1x1xf32>) -> tensor<1x8x12x12xf32> {
    %zero = arith.constant 0.0 : f32
    %pad = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<1x8x12x12xf32> to tensor<1x8x14x14xf32>
    %e = tensor.empty() : tensor<1x16x12x12xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
    %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%pad, %w : tensor<1x8x14x14xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
    %e2 = tensor.empty() : tensor<1x8x12x12xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x8x12x12xf32>) -> tensor<1x8x12x12xf32>
    %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%c, %p : tensor<1x16x12x12xf32>, tensor<8x16x1x1xf32>) outs(%f2 : tensor<1x8x12x12xf32>) -> tensor<1x8x12x12xf32>
    return %y : tensor<1x8x12x12xf32>
  }
}
"""


def test_later_runs_write_convolutions_in_place_with_the_bytes_of_the_checked_run(monkeypatch):
    written = []
    into = Im2col.into
    monkeypatch.setattr(Im2col, "into", lambda *args, **kw: written.append(into(*args, **kw)) or written[-1])
    simulator = load_simulator(CONVS)
    inputs = [RNG.standard_normal(shape).astype(dtype) for shape, dtype in simulator.arguments]
    checked = [a.tobytes() for a in simulator.run(inputs)]
    assert not any(written)  # the checked run reads and writes through its checks
    assert [a.tobytes() for a in simulator.run(inputs)] == checked
    assert any(written)
    monkeypatch.setattr(Im2col, "into", lambda *args, **kw: False)
    assert [a.tobytes() for a in simulator.run(inputs)] == checked
