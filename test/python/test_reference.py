"""The reference (upstream MLIR's ExecutionEngine on L0) checked against numpy, op kind by op kind.

Every expected value is computed here in numpy, independently of MLIR: convolutions and pools
as sums over kernel offsets of strided slices. Integers and booleans must match exactly, f32
within rtol 1e-5, f16 within rtol 1e-3 (the reference runs f16 programs in f32 and rounds their
results once; the last tests check that promotion).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ipu_mlir.runtime.api import load_module
from ipu_mlir.runtime.reference import ReferenceInputError, ReferenceRunError, run_reference

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _same_data_in_any_order():
    global RNG
    RNG = np.random.default_rng(0)


def uniform(*shape: int, low: float = -1.0, high: float = 1.0, dtype=np.float32) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(dtype)


def integers(*shape: int, low: int = -100, high: int = 100, dtype=np.int32) -> np.ndarray:
    return RNG.integers(low, high, shape).astype(dtype)


def check(got: np.ndarray, want: np.ndarray, rtol: float = 1e-5) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if np.issubdtype(want.dtype, np.floating):
        # Relative to the result's magnitude: sums near zero lose digits in any order.
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max(initial=0))))
    else:
        np.testing.assert_array_equal(got, want)


def fill(shape: str, value: str = "0.0", element: str = "f32") -> str:
    """MLIR lines defining `%init`: a tensor of `shape` filled with `value`."""
    return (
        f"%fill_value = arith.constant {value} : {element}\n"
        f"  %empty = tensor.empty() : tensor<{shape}x{element}>\n"
        f"  %init = linalg.fill ins(%fill_value : {element}) outs(%empty : tensor<{shape}x{element}>) -> tensor<{shape}x{element}>"
    )


# --- contractions ------------------------------------------------------------------------------


def test_matmul():
    a, b = uniform(3, 5), uniform(5, 4)
    (y,) = run_reference(
        f"""
func.func @main(%a: tensor<3x5xf32>, %b: tensor<5x4xf32>) -> tensor<3x4xf32> {{
  {fill("3x4")}
  %y = linalg.matmul ins(%a, %b : tensor<3x5xf32>, tensor<5x4xf32>) outs(%init : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}}""",
        [a, b],
    )
    check(y, a @ b)


def test_matmul_accumulates_into_outs():
    a, b, c = uniform(3, 5), uniform(5, 4), uniform(3, 4)
    (y,) = run_reference(
        """
func.func @main(%a: tensor<3x5xf32>, %b: tensor<5x4xf32>, %c: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<3x5xf32>, tensor<5x4xf32>) outs(%c : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}""",
        [a, b, c],
    )
    check(y, c + a @ b)


def test_batch_matmul():
    a, b = uniform(2, 3, 5), uniform(2, 5, 4)
    (y,) = run_reference(
        f"""
func.func @main(%a: tensor<2x3x5xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x3x4xf32> {{
  {fill("2x3x4")}
  %y = linalg.batch_matmul ins(%a, %b : tensor<2x3x5xf32>, tensor<2x5x4xf32>) outs(%init : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}}""",
        [a, b],
    )
    check(y, a @ b)


def test_matvec_and_vecmat():
    m, v, u = uniform(3, 5), uniform(5), uniform(3)
    y, z = run_reference(
        f"""
func.func @main(%m: tensor<3x5xf32>, %v: tensor<5xf32>, %u: tensor<3xf32>) -> (tensor<3xf32>, tensor<5xf32>) {{
  {fill("3")}
  %zero5 = tensor.empty() : tensor<5xf32>
  %init5 = linalg.fill ins(%fill_value : f32) outs(%zero5 : tensor<5xf32>) -> tensor<5xf32>
  %y = linalg.matvec ins(%m, %v : tensor<3x5xf32>, tensor<5xf32>) outs(%init : tensor<3xf32>) -> tensor<3xf32>
  %z = linalg.vecmat ins(%u, %m : tensor<3xf32>, tensor<3x5xf32>) outs(%init5 : tensor<5xf32>) -> tensor<5xf32>
  return %y, %z : tensor<3xf32>, tensor<5xf32>
}}""",
        [m, v, u],
    )
    check(y, m @ v)
    check(z, u @ m)


def test_dot_gives_a_zero_d_result():
    a, b = uniform(7), uniform(7)
    (y,) = run_reference(
        """
func.func @main(%a: tensor<7xf32>, %b: tensor<7xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %y = linalg.dot ins(%a, %b : tensor<7xf32>, tensor<7xf32>) outs(%init : tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}""",
        [a, b],
    )
    check(y, np.array(np.dot(a, b), np.float32))


# --- fill, transpose, broadcast, reduce ---------------------------------------------------------


def test_fill_returns_its_non_zero_value():
    """A guard against a harness whose outputs silently stay zero."""
    (y,) = run_reference(
        f"""
func.func @main() -> tensor<2x3xf32> {{
  {fill("2x3", "2.5")}
  return %init : tensor<2x3xf32>
}}""",
        [],
    )
    check(y, np.full((2, 3), 2.5, np.float32))


def test_non_zero_constant_result():
    y, z = run_reference(
        """
func.func @main() -> (tensor<2x2xi32>, tensor<3xf32>) {
  %c = arith.constant dense<[[1, -2], [3, 2147483647]]> : tensor<2x2xi32>
  %s = arith.constant dense<-7.25> : tensor<3xf32>
  return %c, %s : tensor<2x2xi32>, tensor<3xf32>
}""",
        [],
    )
    check(y, np.array([[1, -2], [3, 2**31 - 1]], np.int32))
    check(z, np.full(3, -7.25, np.float32))


def test_transpose():
    x = uniform(2, 3, 4)
    (y,) = run_reference(
        """
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %e = tensor.empty() : tensor<4x2x3xf32>
  %y = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  return %y : tensor<4x2x3xf32>
}""",
        [x],
    )
    check(y, x.transpose(2, 0, 1))


def test_broadcast():
    x = uniform(3)
    (y,) = run_reference(
        """
func.func @main(%x: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %y = linalg.broadcast ins(%x : tensor<3xf32>) outs(%e : tensor<2x3x4xf32>) dimensions = [0, 2]
  return %y : tensor<2x3x4xf32>
}""",
        [x],
    )
    check(y, np.broadcast_to(x[None, :, None], (2, 3, 4)).copy())


def test_reduce_sum_and_max():
    x = uniform(3, 4, 5)
    total, largest = run_reference(
        f"""
func.func @main(%x: tensor<3x4x5xf32>) -> (tensor<4xf32>, tensor<3x4xf32>) {{
  {fill("4")}
  %minus_inf = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<3x4xf32>
  %init2 = linalg.fill ins(%minus_inf : f32) outs(%e2 : tensor<3x4xf32>) -> tensor<3x4xf32>
  %s = linalg.reduce {{ arith.addf }} ins(%x : tensor<3x4x5xf32>) outs(%init : tensor<4xf32>) dimensions = [0, 2]
  %m = linalg.reduce {{ arith.maximumf }} ins(%x : tensor<3x4x5xf32>) outs(%init2 : tensor<3x4xf32>) dimensions = [2]
  return %s, %m : tensor<4xf32>, tensor<3x4xf32>
}}""",
        [x],
    )
    check(total, x.sum(axis=(0, 2)))
    check(largest, x.max(axis=2))


# --- element-wise named ops ----------------------------------------------------------------------

POSITIVE = dict(low=0.5, high=2.0)
UNARY = {
    "exp": (np.exp, {}),
    "log": (np.log, POSITIVE),
    "abs": (np.abs, {}),
    "ceil": (np.ceil, dict(low=-3.0, high=3.0)),
    "floor": (np.floor, dict(low=-3.0, high=3.0)),
    "negf": (np.negative, {}),
    "reciprocal": (np.reciprocal, POSITIVE),
    "round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), dict(low=-3.0, high=3.0)),  # half away from zero
    "sqrt": (np.sqrt, POSITIVE),
    "rsqrt": (lambda x: 1 / np.sqrt(x), POSITIVE),
    "square": (np.square, {}),
    "tanh": (np.tanh, dict(low=-3.0, high=3.0)),
    "erf": (np.vectorize(math.erf), {}),
}
BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
    "powf": np.power,
}


@pytest.mark.parametrize("name", UNARY)
def test_unary_named_op(name):
    function, bounds = UNARY[name]
    x = uniform(4, 6, **bounds)
    (y,) = run_reference(
        f"""
func.func @main(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {{
  %e = tensor.empty() : tensor<4x6xf32>
  %y = linalg.{name} ins(%x : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}}""",
        [x],
    )
    check(y, function(x.astype(np.float64)).astype(np.float32))


@pytest.mark.parametrize("name", BINARY)
def test_binary_named_op(name):
    a, b = uniform(4, 6, **POSITIVE), uniform(4, 6, **POSITIVE)
    (y,) = run_reference(
        f"""
func.func @main(%a: tensor<4x6xf32>, %b: tensor<4x6xf32>) -> tensor<4x6xf32> {{
  %e = tensor.empty() : tensor<4x6xf32>
  %y = linalg.{name} ins(%a, %b : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}}""",
        [a, b],
    )
    check(y, BINARY[name](a.astype(np.float64), b.astype(np.float64)).astype(np.float32))


def test_elementwise_kind_and_map_and_arith_on_tensors():
    a, b = uniform(8), uniform(8)
    y, z, w = run_reference(
        """
func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.elementwise kind=#linalg.elementwise_kind<sub> ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e """
        """: tensor<8xf32>) -> tensor<8xf32>
  %z = linalg.map { math.absf } ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>)
  %w = arith.mulf %a, %b : tensor<8xf32>
  return %y, %z, %w : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}""",
        [a, b],
    )
    check(y, a - b)
    check(z, np.abs(a))
    check(w, a * b)


# --- convolutions and pools ----------------------------------------------------------------------


def window(x: np.ndarray, kh: int, kw: int, stride: tuple[int, int], dilation: tuple[int, int], out: tuple[int, int]) -> np.ndarray:
    """x[..., oh*sh + kh*dh, ow*sw + kw*dw] for every output position, on the last two axes."""
    top, left = kh * dilation[0], kw * dilation[1]
    return x[..., top : top + stride[0] * (out[0] - 1) + 1 : stride[0], left : left + stride[1] * (out[1] - 1) + 1 : stride[1]]


def conv_nchw_fchw(x, w, stride, dilation):
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    out = ((h - dilation[0] * (kh - 1) - 1) // stride[0] + 1, (wd - dilation[1] * (kw - 1) - 1) // stride[1] + 1)
    y = np.zeros((n, f) + out, np.float64)
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,fc->nfhw", window(x, i, j, stride, dilation, out), w[:, :, i, j])
    return y


def test_conv_2d_nchw_fchw_with_strides_and_dilations():
    x, w = uniform(2, 3, 9, 10), uniform(4, 3, 3, 2)
    (y,) = run_reference(
        f"""
func.func @main(%x: tensor<2x3x9x10xf32>, %w: tensor<4x3x3x2xf32>) -> tensor<2x4x3x4xf32> {{
  {fill("2x4x3x4")}
  %y = linalg.conv_2d_nchw_fchw {{dilations = dense<[2, 3]> : tensor<2xi64>, strides = dense<[2, 2]> : tensor<2xi64>}}
      ins(%x, %w : tensor<2x3x9x10xf32>, tensor<4x3x3x2xf32>) outs(%init : tensor<2x4x3x4xf32>) -> tensor<2x4x3x4xf32>
  return %y : tensor<2x4x3x4xf32>
}}""",
        [x, w],
    )
    want = conv_nchw_fchw(x.astype(np.float64), w.astype(np.float64), (2, 2), (2, 3))
    assert want.shape == (2, 4, 3, 4)
    check(y, want.astype(np.float32))


def test_conv_2d_nhwc_hwcf_with_strides_and_dilations():
    x, w = uniform(1, 11, 9, 3), uniform(3, 2, 3, 5)
    (y,) = run_reference(
        f"""
func.func @main(%x: tensor<1x11x9x3xf32>, %w: tensor<3x2x3x5xf32>) -> tensor<1x3x4x5xf32> {{
  {fill("1x3x4x5")}
  %y = linalg.conv_2d_nhwc_hwcf {{dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<[3, 2]> : tensor<2xi64>}}
      ins(%x, %w : tensor<1x11x9x3xf32>, tensor<3x2x3x5xf32>) outs(%init : tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32>
  return %y : tensor<1x3x4x5xf32>
}}""",
        [x, w],
    )
    # The same convolution in NCHW / FCHW terms, transposed back.
    want = conv_nchw_fchw(x.transpose(0, 3, 1, 2).astype(np.float64), w.transpose(3, 2, 0, 1).astype(np.float64), (3, 2), (2, 1))
    check(y, want.transpose(0, 2, 3, 1).astype(np.float32))


def test_depthwise_conv_2d_nchw_chw():
    x, w = uniform(2, 3, 7, 8), uniform(3, 3, 3)
    (y,) = run_reference(
        f"""
func.func @main(%x: tensor<2x3x7x8xf32>, %w: tensor<3x3x3xf32>) -> tensor<2x3x3x2xf32> {{
  {fill("2x3x3x2")}
  %y = linalg.depthwise_conv_2d_nchw_chw {{dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>}}
      ins(%x, %w : tensor<2x3x7x8xf32>, tensor<3x3x3xf32>) outs(%init : tensor<2x3x3x2xf32>) -> tensor<2x3x3x2xf32>
  return %y : tensor<2x3x3x2xf32>
}}""",
        [x, w],
    )
    want = np.zeros((2, 3, 3, 2))
    for i in range(3):
        for j in range(3):
            want += window(x.astype(np.float64), i, j, (2, 3), (1, 2), (3, 2)) * w[None, :, i, j, None, None]
    check(y, want.astype(np.float32))


@pytest.mark.parametrize("kind,init,combine", [("max", "0xFF800000", np.maximum), ("sum", "0.0", np.add)])
def test_pooling_nchw(kind, init, combine):
    x = uniform(2, 3, 8, 7)
    (y,) = run_reference(
        f"""
func.func @main(%x: tensor<2x3x8x7xf32>) -> tensor<2x3x3x2xf32> {{
  {fill("2x3x3x2", init)}
  %k = tensor.empty() : tensor<3x2xf32>
  %y = linalg.pooling_nchw_{kind} {{dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>}}
      ins(%x, %k : tensor<2x3x8x7xf32>, tensor<3x2xf32>) outs(%init : tensor<2x3x3x2xf32>) -> tensor<2x3x3x2xf32>
  return %y : tensor<2x3x3x2xf32>
}}""",
        [x],
    )
    windows = [window(x, i, j, (2, 3), (1, 2), (3, 2)) for i in range(3) for j in range(2)]
    want = windows[0]
    for other in windows[1:]:
        want = combine(want, other)
    check(y, want)


# --- linalg.generic ------------------------------------------------------------------------------


def test_generic_with_reduction_broadcast_and_transposed_maps():
    x, b, s, t = uniform(4, 6), uniform(6), uniform(), uniform(6, 4)
    total, largest = run_reference(
        f"""
#xy = affine_map<(i, j) -> (i, j)>
#yx = affine_map<(i, j) -> (j, i)>
#col = affine_map<(i, j) -> (j)>
#row = affine_map<(i, j) -> (i)>
#scalar = affine_map<(i, j) -> ()>
func.func @main(%x: tensor<4x6xf32>, %b: tensor<6xf32>, %s: tensor<f32>, %t: tensor<6x4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {{
  {fill("4")}
  %sum = linalg.generic {{indexing_maps = [#xy, #col, #scalar, #yx, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%x, %b, %s, %t : tensor<4x6xf32>, tensor<6xf32>, tensor<f32>, tensor<6x4xf32>) outs(%init : tensor<4xf32>) {{
  ^bb0(%xv: f32, %bv: f32, %sv: f32, %tv: f32, %acc: f32):
    %p = arith.mulf %xv, %bv : f32
    %e = math.exp %p : f32
    %q = arith.mulf %e, %sv : f32
    %r = arith.subf %q, %tv : f32
    %a = arith.addf %acc, %r : f32
    linalg.yield %a : f32
  }} -> tensor<4xf32>
  %minus_inf = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<4xf32>
  %init2 = linalg.fill ins(%minus_inf : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {{indexing_maps = [#yx, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%t : tensor<6x4xf32>) outs(%init2 : tensor<4xf32>) {{
  ^bb0(%tv: f32, %acc: f32):
    %m = arith.maximumf %acc, %tv : f32
    linalg.yield %m : f32
  }} -> tensor<4xf32>
  return %sum, %max : tensor<4xf32>, tensor<4xf32>
}}""",
        [x, b, s, t],
    )
    want = (np.exp(x.astype(np.float64) * b) * s - t.T).sum(axis=1)
    check(total, want.astype(np.float32))
    check(largest, t.max(axis=0))


# --- tensor ops ----------------------------------------------------------------------------------


@pytest.mark.parametrize("element,dimension", [("f32", 1), ("f16", 0)])
def test_softmax_is_decomposed(element, dimension):
    """linalg.softmax, which no lowering to loops takes, runs through its decomposition."""
    dtype = np.float32 if element == "f32" else np.float16
    x = uniform(5, 7, low=-4.0, high=4.0, dtype=dtype)
    (y,) = run_reference(
        f"""
func.func @main(%x: tensor<5x7x{element}>) -> tensor<5x7x{element}> {{
  %e = tensor.empty() : tensor<5x7x{element}>
  %y = linalg.softmax dimension({dimension}) ins(%x : tensor<5x7x{element}>) outs(%e : tensor<5x7x{element}>) -> tensor<5x7x{element}>
  return %y : tensor<5x7x{element}>
}}""",
        [x],
    )
    wide = x.astype(np.float64)
    exp = np.exp(wide - wide.max(axis=dimension, keepdims=True))
    check(y, (exp / exp.sum(axis=dimension, keepdims=True)).astype(dtype), rtol=1e-5 if element == "f32" else 1e-3)


def test_linalg_op_neither_structured_nor_aggregate_is_refused_at_its_location():
    with pytest.raises(ReferenceRunError) as failure:
        run_reference(
            """
func.func @main(%w: tensor<2x3x3x5xf32>) -> tensor<6x6x5x2xf32> {
  %e = tensor.empty() : tensor<6x6x5x2xf32>
  %t = linalg.winograd_filter_transform fmr(F_4_3) ins(%w : tensor<2x3x3x5xf32>) outs(%e : tensor<6x6x5x2xf32>) -> tensor<6x6x5x2xf32>
  return %t : tensor<6x6x5x2xf32>
}""",
            [uniform(2, 3, 3, 5)],
        )
    assert str(failure.value).startswith(
        "-:4:8: error: 'linalg.winograd_filter_transform' cannot be run by the reference: upstream neither lowers it"
    ), str(failure.value)


def test_ipu_op_is_refused_at_its_location():
    """An L1 file's `ipu.matmul`: the reference runs upstream dialects only, and says so there."""
    with pytest.raises(ReferenceRunError) as failure:
        run_reference(
            """
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %c = "ipu.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}""",
            [uniform(4, 8), uniform(8, 3)],
        )
    assert str(failure.value).startswith("-:3:8: error: 'ipu.matmul' is not an upstream MLIR op"), str(failure.value)


def test_tensor_slices_pad_reshapes_and_concat():
    x, y = uniform(6, 8), uniform(2, 3)
    sliced, inserted, padded, expanded, collapsed, joined = run_reference(
        """
func.func @main(%x: tensor<6x8xf32>, %y: tensor<2x3xf32>)
    -> (tensor<2x3xf32>, tensor<6x8xf32>, tensor<5x6xf32>, tensor<2x3x8xf32>, tensor<48xf32>, tensor<2x11xf32>) {
  %s = tensor.extract_slice %x[1, 2] [2, 3] [3, 2] : tensor<6x8xf32> to tensor<2x3xf32>
  %i = tensor.insert_slice %y into %x[4, 5] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<6x8xf32>
  %c = arith.constant 1.5 : f32
  %p = tensor.pad %y low[1, 2] high[2, 1] {
  ^bb0(%a: index, %b: index):
    tensor.yield %c : f32
  } : tensor<2x3xf32> to tensor<5x6xf32>
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 3, 8] : tensor<6x8xf32> into tensor<2x3x8xf32>
  %f = tensor.collapse_shape %x [[0, 1]] : tensor<6x8xf32> into tensor<48xf32>
  %top = tensor.extract_slice %x[0, 0] [2, 8] [1, 1] : tensor<6x8xf32> to tensor<2x8xf32>
  %j = tensor.concat dim(1) %top, %y : (tensor<2x8xf32>, tensor<2x3xf32>) -> tensor<2x11xf32>
  return %s, %i, %p, %e, %f, %j : tensor<2x3xf32>, tensor<6x8xf32>, tensor<5x6xf32>, tensor<2x3x8xf32>, tensor<48xf32>, tensor<2x11xf32>
}""",
        [x, y],
    )
    check(sliced, x[1:7:3, 2:8:2])
    want = x.copy()
    want[4:6, 5:8] = y
    check(inserted, want)
    check(padded, np.pad(y, ((1, 2), (2, 1)), constant_values=1.5))
    check(expanded, x.reshape(2, 3, 8))
    check(collapsed, x.reshape(48))
    check(joined, np.concatenate([x[:2], y], axis=1))


# --- constants -----------------------------------------------------------------------------------


def test_dense_and_dense_resource_constants():
    x = uniform(3, 4)
    weights = np.arange(1, 9, dtype=np.float32).reshape(4, 2)
    bias = np.array([0.5, -0.5], np.float32)
    filters = np.array([1, -1, 2, -2], np.int8)
    y, z, k = run_reference(
        """
func.func @main(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x4xf32>, tensor<4xi8>) {
  %w = arith.constant dense_resource<weights> : tensor<4x2xf32>
  %b = arith.constant dense_resource<bias> : tensor<2xf32>
  %k = arith.constant dense_resource<filters> : tensor<4xi8>
  %d = arith.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  %m = linalg.matmul ins(%x, %w : tensor<3x4xf32>, tensor<4x2xf32>) outs(%f : tensor<3x2xf32>) -> tensor<3x2xf32>
  %bb = linalg.broadcast ins(%b : tensor<2xf32>) outs(%e : tensor<3x2xf32>) dimensions = [0]
  %y = linalg.add ins(%m, %bb : tensor<3x2xf32>, tensor<3x2xf32>) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  %e4 = tensor.empty() : tensor<3x4xf32>
  %e134 = tensor.empty() : tensor<1x3x4xf32>
  %db = linalg.broadcast ins(%d : tensor<1x4xf32>) outs(%e134 : tensor<1x3x4xf32>) dimensions = [1]
  %dc = tensor.collapse_shape %db [[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
  %z = linalg.mul ins(%x, %dc : tensor<3x4xf32>, tensor<3x4xf32>) outs(%e4 : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y, %z, %k : tensor<3x2xf32>, tensor<3x4xf32>, tensor<4xi8>
}
{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F0000004000004040000080400000A0400000C0400000E04000000041",
      bias: "0x040000000000003F000000BF",
      filters: "0x0100000001FF02FE"
    }
  }
#-}""",
        [x],
    )
    check(y, x @ weights + bias)
    check(z, x * np.array([1, 2, 3, 4], np.float32))
    check(k, filters)


# --- element types -------------------------------------------------------------------------------


def test_i32_is_exact_beyond_float_precision():
    a, b = integers(3, 4, low=-(2**20), high=2**20), integers(4, 2, low=-(2**9), high=2**9)
    c = integers(3, 2, low=2**30 - 2**10, high=2**30)
    y, s = run_reference(
        f"""
func.func @main(%a: tensor<3x4xi32>, %b: tensor<4x2xi32>, %c: tensor<3x2xi32>) -> (tensor<3x2xi32>, tensor<3x2xi32>) {{
  {fill("3x2", "0", "i32")}
  %y = linalg.matmul ins(%a, %b : tensor<3x4xi32>, tensor<4x2xi32>) outs(%init : tensor<3x2xi32>) -> tensor<3x2xi32>
  %s = linalg.add ins(%c, %c : tensor<3x2xi32>, tensor<3x2xi32>) outs(%empty : tensor<3x2xi32>) -> tensor<3x2xi32>
  return %y, %s : tensor<3x2xi32>, tensor<3x2xi32>
}}""",
        [a, b, c],
    )
    check(y, a @ b)
    check(s, c + c)  # wraps around, as numpy's int32 does


def test_i8_conv_accumulates_in_i32():
    x, w = integers(1, 2, 5, 5, low=-128, high=128, dtype=np.int8), integers(3, 2, 2, 2, low=-128, high=128, dtype=np.int8)
    (y,) = run_reference(
        f"""
func.func @main(%x: tensor<1x2x5x5xi8>, %w: tensor<3x2x2x2xi8>) -> tensor<1x3x4x4xi32> {{
  {fill("1x3x4x4", "0", "i32")}
  %y = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
      ins(%x, %w : tensor<1x2x5x5xi8>, tensor<3x2x2x2xi8>) outs(%init : tensor<1x3x4x4xi32>) -> tensor<1x3x4x4xi32>
  return %y : tensor<1x3x4x4xi32>
}}""",
        [x, w],
    )
    check(y, conv_nchw_fchw(x.astype(np.int64), w.astype(np.int64), (1, 1), (1, 1)).astype(np.int32))


def test_i8_elementwise_wraps():
    a, b = integers(16, low=-128, high=128, dtype=np.int8), integers(16, low=-128, high=128, dtype=np.int8)
    y, m = run_reference(
        """
func.func @main(%a: tensor<16xi8>, %b: tensor<16xi8>) -> (tensor<16xi8>, tensor<16xi8>) {
  %e = tensor.empty() : tensor<16xi8>
  %y = linalg.add ins(%a, %b : tensor<16xi8>, tensor<16xi8>) outs(%e : tensor<16xi8>) -> tensor<16xi8>
  %m = linalg.max ins(%a, %b : tensor<16xi8>, tensor<16xi8>) outs(%e : tensor<16xi8>) -> tensor<16xi8>
  return %y, %m : tensor<16xi8>, tensor<16xi8>
}""",
        [a, b],
    )
    check(y, a + b)
    check(m, np.maximum(a, b))


def test_i1_from_cmp_select_and_boolean_inputs():
    a, b = uniform(4, 5), uniform(4, 5)
    mask = RNG.integers(0, 2, (4, 5)).astype(bool)
    greater, chosen, both, constant = run_reference(
        """
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%a: tensor<4x5xf32>, %b: tensor<4x5xf32>, %mask: tensor<4x5xi1>)
    -> (tensor<4x5xi1>, tensor<4x5xf32>, tensor<4x5xi1>, tensor<2xi1>) {
  %g = arith.cmpf ogt, %a, %b : tensor<4x5xf32>
  %s = arith.select %mask, %a, %b : tensor<4x5xi1>, tensor<4x5xf32>
  %e = tensor.empty() : tensor<4x5xi1>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %mask : tensor<4x5xi1>, tensor<4x5xi1>) outs(%e : tensor<4x5xi1>) {
  ^bb0(%p: i1, %q: i1, %out: i1):
    %r = arith.xori %p, %q : i1
    linalg.yield %r : i1
  } -> tensor<4x5xi1>
  %c = arith.constant dense<[true, false]> : tensor<2xi1>
  return %g, %s, %x, %c : tensor<4x5xi1>, tensor<4x5xf32>, tensor<4x5xi1>, tensor<2xi1>
}""",
        [a, b, mask],
    )
    check(greater, a > b)
    check(chosen, np.where(mask, a, b))
    check(both, (a > b) ^ mask)
    check(constant, np.array([True, False]))


def test_f16():
    a, b = uniform(16, dtype=np.float16), uniform(16, dtype=np.float16)
    y, r = run_reference(
        f"""
func.func @main(%a: tensor<16xf16>, %b: tensor<16xf16>) -> (tensor<16xf16>, tensor<4xf16>) {{
  %e = tensor.empty() : tensor<16xf16>
  %s = linalg.add ins(%a, %b : tensor<16xf16>, tensor<16xf16>) outs(%e : tensor<16xf16>) -> tensor<16xf16>
  %y = linalg.exp ins(%s : tensor<16xf16>) outs(%e : tensor<16xf16>) -> tensor<16xf16>
  %a2 = tensor.expand_shape %a [[0, 1]] output_shape [4, 4] : tensor<16xf16> into tensor<4x4xf16>
  {fill("4", "0.0", "f16")}
  %r = linalg.reduce {{ arith.addf }} ins(%a2 : tensor<4x4xf16>) outs(%init : tensor<4xf16>) dimensions = [1]
  return %y, %r : tensor<16xf16>, tensor<4xf16>
}}""",
        [a, b],
    )
    check(y, np.exp(a + b), rtol=1e-3)
    check(r, a.reshape(4, 4).sum(axis=1), rtol=1e-3)


LONG_F16_SUM = """
func.func @main(%x: tensor<4x4096xf16>) -> tensor<4xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<4xf16>
  %init = linalg.fill ins(%zero : f16) outs(%e : tensor<4xf16>) -> tensor<4xf16>
  %r = linalg.reduce { arith.addf } ins(%x : tensor<4x4096xf16>) outs(%init : tensor<4xf16>) dimensions = [1]
  return %r : tensor<4xf16>
}"""


def test_f16_runs_in_f32_and_rounds_once():
    """The issue's case: sums of 4096 values in [0, 1.15), about 2350. Added in f16 one at a
    time they come out near 2272; in f32 and rounded once, within half an f16 step (1) of the
    exact sum."""
    x = uniform(4, 4096, low=0.0, high=1.15, dtype=np.float16)
    exact = x.astype(np.float64).sum(axis=1)
    (wide,) = run_reference(LONG_F16_SUM, [x])
    assert wide.dtype == np.float16 and np.all(np.abs(wide - exact) <= 1.0), (wide, exact)
    (narrow,) = run_reference(LONG_F16_SUM, [x], f16_in_f32=False)
    np.testing.assert_array_equal(narrow, np.cumsum(x, axis=1, dtype=np.float16)[:, -1])  # one rounding per step
    assert np.all(exact - narrow > 50), (narrow, exact)


def test_f16_promotion_carries_constants_and_casts():
    """Scalar, dense and splat f16 constants become f32 ones; an extf from f16 to f32
    disappears; the program's own truncf into f16 (here from f64) still rounds to f16."""
    a, b = uniform(4, dtype=np.float16), uniform(4, dtype=np.float64)
    y, z = run_reference(
        """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4xf16>, %b: tensor<4xf64>) -> (tensor<4xf16>, tensor<4xf32>) {
  %dense = arith.constant dense<[0.5, -2.0, 0xFC00, 3.0]> : tensor<4xf16>
  %splat = arith.constant dense<1.5> : tensor<4xf16>
  %e = tensor.empty() : tensor<4xf16>
  %ef = tensor.empty() : tensor<4xf32>
  %y, %z = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b, %dense, %splat : tensor<4xf16>, tensor<4xf64>, tensor<4xf16>, tensor<4xf16>) outs(%e, %ef """
        """: tensor<4xf16>, tensor<4xf32>) {
  ^bb0(%x: f16, %w: f64, %d: f16, %s: f16, %o: f16, %of: f32):
    %third = arith.constant 0.333 : f16
    %t = arith.mulf %x, %third : f16
    %u = arith.addf %t, %s : f16
    %v = arith.maximumf %u, %d : f16
    %vf = arith.extf %v : f16 to f32
    %wide = arith.extf %x : f16 to f64
    %sum = arith.addf %wide, %w : f64
    %back = arith.truncf %sum : f64 to f16
    %r = arith.addf %back, %v : f16
    linalg.yield %r, %vf : f16, f32
  } -> (tensor<4xf16>, tensor<4xf32>)
  return %y, %z : tensor<4xf16>, tensor<4xf32>
}""",
        [a, b],
    )
    x = a.astype(np.float32)
    v = np.maximum(x * np.float32(np.float16(0.333)) + np.float32(1.5), np.array([0.5, -2.0, -np.inf, 3.0], np.float32))
    check(z, v, rtol=1e-6)  # no rounding to f16 in between: f32 throughout
    back = (a.astype(np.float64) + b).astype(np.float16).astype(np.float32)
    check(y, (back + v).astype(np.float16), rtol=1e-6)


def test_f16_bit_casts_run_in_f16():
    """The promotion cannot retype a bit cast: the program runs in f16, as written."""
    bits = np.array([0x3C00, 0xC000, 0x7BFF, 0x0001], np.uint16).view(np.int16)  # 1, -2, 65504, the smallest subnormal
    (y,) = run_reference(
        """
func.func @main(%x: tensor<4xi16>) -> tensor<4xf16> {
  %h = arith.bitcast %x : tensor<4xi16> to tensor<4xf16>
  %y = arith.addf %h, %h : tensor<4xf16>
  return %y : tensor<4xf16>
}""",
        [bits],
    )
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y, bits.view(np.float16) * 2)  # 65504 * 2 overflows to inf, as in f16


def test_truncf_to_bf16_rounds_as_ieee_keeping_subnormals():
    """f32 -> bf16 as ml_dtypes (and PyTorch) round: to nearest even, subnormals kept. LLVM's
    `fptrunc` to bfloat on a host with AVX512-BF16 (`vcvtneps2bf16`) flushed them to 0 (1e-40
    gave 0, not 9.18e-41: fuzz_control seed 2370); arith-expand's bf16 expansion is exact."""
    import ml_dtypes

    halves = (np.arange(1 << 12, dtype=np.uint32) << 20) | 0x8000  # ties, at every exponent and sign
    subnormals = np.arange(1 << 12, dtype=np.uint32) * 0x801  # below 2^-126, some of them ties
    x = np.concatenate([halves, halves | 0x10000, subnormals, subnormals | 0x80000000]).view(np.float32)
    x = x[~np.isnan(x)]
    (y,) = run_reference(
        f"""
func.func @main(%x: tensor<{x.size}xf32>) -> tensor<{x.size}xbf16> {{
  %y = arith.truncf %x : tensor<{x.size}xf32> to tensor<{x.size}xbf16>
  return %y : tensor<{x.size}xbf16>
}}""",
        [x],
    )
    np.testing.assert_array_equal(y.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_f64_and_i64():
    x, n = uniform(5, dtype=np.float64), integers(5, low=-(2**40), high=2**40, dtype=np.int64)
    y, m = run_reference(
        """
func.func @main(%x: tensor<5xf64>, %n: tensor<5xi64>) -> (tensor<5xf64>, tensor<5xi64>) {
  %e = tensor.empty() : tensor<5xf64>
  %y = linalg.tanh ins(%x : tensor<5xf64>) outs(%e : tensor<5xf64>) -> tensor<5xf64>
  %ei = tensor.empty() : tensor<5xi64>
  %m = linalg.mul ins(%n, %n : tensor<5xi64>, tensor<5xi64>) outs(%ei : tensor<5xi64>) -> tensor<5xi64>
  return %y, %m : tensor<5xf64>, tensor<5xi64>
}""",
        [x, n],
    )
    check(y, np.tanh(x), rtol=1e-12)
    check(m, n * n)


# --- functions, results, inputs ------------------------------------------------------------------


def test_multiple_results_including_an_input_twice_and_a_callee():
    x = uniform(2, 3)
    first, second, third, doubled = run_reference(
        """
func.func private @double(%t: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %d = linalg.add ins(%t, %t : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %e = tensor.empty() : tensor<2x3xf32>
  %n = linalg.negf ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %d = func.call @double(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %x, %n, %x, %d : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}""",
        [x],
    )
    check(first, x)
    check(second, -x)
    check(third, x)
    check(doubled, 2 * x)


def test_inputs_are_not_modified_even_when_the_program_writes_in_place():
    x = uniform(3, 4)
    saved = x.copy()
    (y,) = run_reference(
        """
func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %y = linalg.exp ins(%x : tensor<3x4xf32>) outs(%x : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}""",
        [x],
    )
    check(y, np.exp(x))
    np.testing.assert_array_equal(x, saved)


def test_non_contiguous_inputs_are_read_in_logical_order():
    x = uniform(4, 3)
    (y,) = run_reference(
        """
func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %y = linalg.negf ins(%x : tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}""",
        [x.T],
    )
    check(y, -x.T)


NEGATE = """module attributes {ipu.target = "tiny"} {
func.func @negate(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.negf ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
}
"""


def test_modules_paths_and_text(tmp_path):
    x = uniform(4)
    path = tmp_path / "negate.mlir"
    path.write_text(NEGATE)
    module = load_module(NEGATE)
    before = str(module)
    for source in (NEGATE, path, str(path), module):
        (y,) = run_reference(source, [x], entry="negate")
        check(y, -x)
    assert str(module) == before


# --- errors --------------------------------------------------------------------------------------


def test_wrong_number_of_inputs():
    with pytest.raises(ReferenceInputError, match=r"@negate takes 1 input, got 2"):
        run_reference(NEGATE, [uniform(4), uniform(4)], entry="negate")


def test_wrong_shape_names_the_input():
    with pytest.raises(ReferenceInputError, match=r"input #0 of @negate: expected shape \(4,\) float32, got shape \(2, 2\) float32"):
        run_reference(NEGATE, [uniform(2, 2)], entry="negate")


def test_wrong_dtype_names_the_input():
    with pytest.raises(ValueError, match=r"input #0 of @negate: expected shape \(4,\) float32, got shape \(4,\) float64"):
        run_reference(NEGATE, [np.zeros(4)], entry="negate")


def test_missing_entry():
    with pytest.raises(ReferenceRunError, match=r"no function @main in the module \(functions: @negate\)"):
        run_reference(NEGATE, [uniform(4)])


def test_missing_file(tmp_path):
    with pytest.raises(ReferenceRunError, match=r"cannot read '.*nothing.mlir': No such file"):
        run_reference(tmp_path / "nothing.mlir", [])


def test_parse_error_has_its_location():
    with pytest.raises(ReferenceRunError, match=r"^-:1:\d+: error: cannot parse the module: "):
        run_reference("func.func @main( {", [])


def test_unsupported_argument_type():
    with pytest.raises(ReferenceRunError, match=r"argument #1 of @main has type tensor<4xf8E3M4>"):
        run_reference(
            """
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf8E3M4>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}""",
            [uniform(4), uniform(4)],
        )


def test_lowering_failure_names_the_pass_the_op_and_its_location():
    with pytest.raises(ReferenceRunError) as failure:
        run_reference(
            """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = tosa.abs %a : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}""",
            [uniform(4)],
        )
    message = str(failure.value)
    assert message.startswith("-:3:8: error: lowering to LLVM failed in pass 'one-shot-bufferize"), message
    assert "tosa.abs" in message


def test_outputs_the_program_does_not_write_are_an_error():
    """`tensor.empty` has undefined contents: returning it must not look like zeros."""
    with pytest.raises(ReferenceRunError, match=r"result #0 of @main is not entirely written by the program"):
        run_reference(
            """
func.func @main() -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}""",
            [],
        )


def test_torch_mlir_imports_after_the_reference_ran():
    """Loading the runner utilities registers LLVM's options; torch-mlir, imported after, used to
    register them again and abort the process (docs/mlir-notes.md). A fresh process, so the
    suite's own import order cannot hide it."""
    import subprocess
    import sys

    script = (
        "import numpy as np\n"
        "from ipu_mlir.runtime.reference import run_reference\n"
        "src = 'func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }'\n"
        "from mlir import ir\n"
        "with ir.Context():\n"
        "    print(run_reference(ir.Module.parse(src), [np.ones(2, np.float32)])[0])\n"
        "import torch_mlir.fx\n"
        "print('imported')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "imported" in done.stdout, done.stderr[-500:]
