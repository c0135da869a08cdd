"""`ipu.conv`'s kernel adding a depthwise convolution's taps one by one (`Im2col._add_taps`,
dialects/ops/conv.py, and for f32 and f64 its compiled twin, dialects/ops/depthwise.py) on odd
shapes: strides, dilations, padding on one side, several filters a group, two images, f16
summed in f32, i32 wrapping. Against the convolution by its definition and against the
matrix-product path the kernel takes otherwise; and the same bytes whichever axes the operands
share and whatever the output's layout, as the checked first run (each tile its own copy) and
later runs (shared copies, an output view in tile memory) must give; the compiled kernel's
bytes those of numpy's taps."""

from __future__ import annotations

import numpy as np
import pytest
from test_codelet import _conv_reference, codelet, conv

RNG = np.random.default_rng(12)

CASES = [  # input, filter, strides, dilations, padding, groups
    ((1, 3, 7, 7), (3, 1, 3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 3),  # MobileNetV2's strided depthwise
    ((1, 4, 9, 5), (4, 1, 3, 3), (2, 1), (1, 1), (1, 0, 0, 1), 4),  # strided rows only, padded on two sides
    ((2, 2, 6, 11), (6, 1, 3, 2), (1, 3), (2, 1), (0, 2, 1, 0), 2),  # three filters a channel, two images, dilated
    ((1, 5, 8, 5), (5, 1, 3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 5),  # stride 1, 6 x 3 outputs: few positions
    ((1, 1, 5, 4), (1, 1, 2, 2), (1, 1), (1, 1), (0, 0, 0, 0), 1),  # one channel, one filter, no groups
    ((1, 2, 9, 9), (2, 1, 5, 5), (3, 3), (1, 2), (2, 2, 2, 2), 2),  # 5 x 5, dilated in w
]


def kernel_of(text: str):
    compiled = codelet(text, batch_rank=2)
    return compiled, compiled._direct[0]


def operands(input_shape, filter_shape, dtype):
    """The input varying along grid axis 0 only, the filter along axis 1 only, as a vertex
    group's operands are when each tile row reads one piece of the input."""
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-(2**12), 2**12, (3, 1, *input_shape)).astype(dtype), RNG.integers(
            -(2**12), 2**12, (1, 4, *filter_shape)
        ).astype(dtype)
    return (RNG.standard_normal((3, 1, *input_shape)).astype(dtype), RNG.standard_normal((1, 4, *filter_shape)).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
@pytest.mark.parametrize("input_shape,filter_shape,strides,dilations,padding,groups", CASES)
def test_taps_against_the_definition_and_the_product(input_shape, filter_shape, strides, dilations, padding, groups, dtype):
    text = conv(input_shape, filter_shape, strides, dilations, padding, groups).replace(
        "f32", {np.float32: "f32", np.float16: "f16", np.int32: "i32"}[dtype]
    )
    compiled, kernel = kernel_of(text)
    assert kernel.taps_added
    x, w = operands(input_shape, filter_shape, dtype)
    (got,) = compiled([x, w])
    assert got.dtype == dtype and got.shape[:2] == (3, 4)
    grid = [(a, b) for a in range(3) for b in range(4)]
    expected = np.stack(
        [_conv_reference(x[a, 0].astype(np.float64), w[0, b].astype(np.float64), strides, dilations, padding, groups) for a, b in grid]
    )
    expected = expected.reshape(got.shape)
    assert (kernel.planes is not None) == (dtype == np.float32)  # compiled: f32 and f64
    kernel.taps_added, kernel.planes = False, None  # the same kernel by its matrix products (im2col or runs)
    (product,) = compiled([x, w])
    if dtype == np.int32:  # exact sums, well inside i32: every path gives the same integers
        np.testing.assert_array_equal(got, expected.astype(np.int64))
        np.testing.assert_array_equal(got, product)
    else:
        tolerance = 2e-2 if dtype == np.float16 else 1e-5
        np.testing.assert_allclose(got.astype(np.float64), expected, rtol=tolerance, atol=tolerance)
        np.testing.assert_allclose(got, product, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("input_shape,filter_shape,strides,dilations,padding,groups", CASES)
def test_taps_give_the_same_bytes_in_any_layout(input_shape, filter_shape, strides, dilations, padding, groups, dtype):
    """Shared operands (size-1 grid axes) or each tile's own copy; a new result or one written
    into a strided view of a larger buffer: the same bytes, as the checked and later runs."""
    text = conv(input_shape, filter_shape, strides, dilations, padding, groups).replace("f32", "f16" if dtype == np.float16 else "f32")
    compiled, kernel = kernel_of(text)
    x, w = operands(input_shape, filter_shape, dtype)
    (shared,) = compiled([x, w])
    (copied,) = compiled([np.repeat(x, 4, axis=1), np.repeat(w, 3, axis=0)])  # every tile its own
    assert copied.tobytes() == shared.tobytes()
    # the output's boxes apart in a larger buffer, their rows apart, their columns spread
    n, f, oh, ow = shared.shape[2:]
    buffer = np.full((3, 4, n, f, oh + 1, 2 * ow), 7, dtype)
    out = buffer[:, :, :, :, 1:, ::2]
    assert compiled.into([x, w], out)
    assert out.tobytes() == shared.tobytes()
    assert (buffer[..., 0, :] == 7).all() and (buffer[..., 1::2] == 7).all()


def test_taps_only_where_few_outputs_or_strides():
    """Stride 1 with many outputs a tile and channel keeps the matrix products (the taps'
    passes cost more there, measured on MobileNetV2); a grouped convolution of several
    channels a group, or one group of several filters, never adds taps."""
    many = conv((1, 3, 9, 10), (3, 1, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 3)  # 9 x 10 outputs
    assert not kernel_of(many)[1].taps_added
    grouped = conv((1, 4, 7, 7), (4, 2, 3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 2)
    assert not kernel_of(grouped)[1].taps_added
    # one input channel on a tile of an ordinary convolution (AlexNet's 11 x 11 stem, stride
    # 4, cut to one channel a tile): one product of 16 filters, 2.3x faster than 121 x 16 passes
    stem = conv((1, 1, 25, 25), (16, 1, 11, 11), (4, 4), (1, 1), (2, 2, 0, 0), 1)
    compiled, kernel = kernel_of(stem)
    assert not kernel.taps_added
    x, w = operands((1, 1, 25, 25), (16, 1, 11, 11), np.float32)
    (got,) = compiled([x, w])
    for a, b in [(0, 0), (2, 3)]:
        expected = _conv_reference(x[a, 0].astype(np.float64), w[0, b].astype(np.float64), (4, 4), (1, 1), (2, 2, 0, 0), 1)
        np.testing.assert_allclose(got[a, b], expected.reshape(got.shape[2:]), rtol=1e-5, atol=1e-5)


DEPTHWISE = CASES + [
    ((1, 6, 9, 8), (6, 1, 3, 3), (1, 1), (1, 1), (1, 0, 1, 1), 6),  # stride 1, 8 x 6 outputs: numpy's runs path
    ((1, 3, 5, 6), (3, 1, 3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 3),  # rows of 4 f32: numpy's im2col path
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("input_shape,filter_shape,strides,dilations,padding,groups", DEPTHWISE)
def test_compiled_planes_give_numpys_taps_bytes(input_shape, filter_shape, strides, dilations, padding, groups, dtype):
    """The compiled kernel (dialects/ops/depthwise.py) sums as `_add_taps` does, so their bytes
    are equal, whichever axes the operands share, into a strided output view as well."""
    text = conv(input_shape, filter_shape, strides, dilations, padding, groups).replace("f32", "f64" if dtype == np.float64 else "f32")
    compiled, kernel = kernel_of(text)
    assert kernel.planes is not None
    x, w = operands(input_shape, filter_shape, dtype)
    (got,) = compiled([x, w])
    taps = kernel._add_taps(x, w, np.empty_like(got))
    assert got.tobytes() == taps.tobytes()
    n, f, oh, ow = got.shape[2:]
    buffer = np.full((3, 4, n, f, oh + 1, 2 * ow), 7, dtype)
    out = buffer[:, :, :, :, 1:, ::2]
    xs, ws = np.repeat(x, 4, axis=1), np.repeat(w, 3, axis=0)
    assert kernel.planes(xs, ws, out)
    assert out.tobytes() == got.tobytes() and (buffer[..., 0, :] == 7).all() and (buffer[..., 1::2] == 7).all()
    # the same arrays again (a vertex group's views, every later run), new values in them
    doubled, negated = compiled([2 * xs, ws])[0].tobytes(), compiled([2 * xs, -ws])[0].tobytes()
    assert kernel.planes(xs, ws, out)
    xs *= 2
    assert kernel.planes(xs, ws, out) and out.tobytes() == doubled
    assert kernel.planes(xs, -ws, out) and out.tobytes() == negated


def test_compiled_planes_refuse_what_they_do_not_take():
    """A negative stride, an output overlapping an operand, another element type: False and
    nothing written; the kernel's numpy taps then give the result, with the same bytes."""
    compiled, kernel = kernel_of(conv(*CASES[0]))
    x, w = operands(*CASES[0][:2], np.float32)
    flipped = x[..., ::-1, :]  # rows read backwards: a negative stride
    (expected,) = compiled([flipped.copy(), w])
    out = np.zeros_like(expected)
    assert not kernel.planes(flipped, w, out) and not out.any()
    assert not kernel.planes(x.astype(np.float64), w.astype(np.float64), out.astype(np.float64))
    memory = np.zeros(x.size + out.size - 1, np.float32)  # the last output element is the input's first
    inside = memory[: out.size].reshape(out.shape)
    assert not kernel.planes(memory[-x.size :].reshape(x.shape), w, inside) and not inside.any()
    (again,) = compiled([flipped, w])
    assert again.tobytes() == expected.tobytes()
