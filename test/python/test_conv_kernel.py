"""`ipu.conv`'s kernel (dialects/ops/conv.py) on each of its paths, over a grid of tiles whose
operands broadcast as a vertex group's do (the input the same along one grid axis, the filter
along another): im2col; a 1 x 1 convolution with stride 1 and no padding, which multiplies
the input in place, also when the input is a strided view of tile memory; a depthwise one
with stride 1 copying runs over whole padded rows. Against the
convolution by its definition, one tile at a time; and the same bits on every call."""

from __future__ import annotations

import numpy as np
import pytest
from test_codelet import _conv_reference, codelet, conv, tensor

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
