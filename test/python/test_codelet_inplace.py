"""Element-wise generic bodies written into buffers they own (runtime/inplace.py), compares and
selects run as one max or min (semantics.compare_select), and `CompiledCodelet.into` for
codelets ending in an element-wise generic: the same bytes as a new array per op, with NaN
payloads, signed zeros, f16, integers and i1; never a write into an argument or a value read
after."""

from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pytest
from test_codelet import codelet, generic

from ipu_mlir.dialects.ops.out_kernels import compare_select, out_kernel
from ipu_mlir.dialects.ops.semantics import _CMPF, select
from ipu_mlir.runtime.inplace import broadcast_shape

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # references compute on NaN and inf on purpose

BITS = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}
NAMES = {np.float16: "f16", np.float32: "f32", np.float64: "f64"}
RNG = np.random.default_rng(12)


def awkward(shape, dtype) -> np.ndarray:
    """Random floats with every special value a max or min can get wrong: NaNs of both signs
    (one signaling, one with a payload), signed zeros and infinities, subnormals, the constants."""
    values = (RNG.standard_normal(shape) * 4).astype(dtype)
    flat = values.reshape(-1)
    tiny = np.finfo(dtype).tiny / 2
    special = np.array([0.0, -0.0, 6.0, -6.0, -2.0, 2.0, np.inf, -np.inf, tiny, -tiny, np.nan, np.nan], dtype)
    flat[: special.size] = special
    bits = flat.view(BITS[dtype])
    quiet, width = {np.float16: (0x7E01, 16), np.float32: (0x7FC00123, 32), np.float64: (0x7FF8000000000123, 64)}[dtype]
    signaling = {np.float16: 0x7C05, np.float32: 0x7F800005, np.float64: 0x7FF0000000000005}[dtype]
    bits[special.size - 2] = signaling
    bits[special.size - 1] = quiet | (1 << (width - 1))
    return values


def same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_compare_select_as_max_or_min_gives_the_bytes_of_compare_then_select(dtype):
    signaling = awkward((257,), dtype)
    quieted = quiet_nans(signaling)
    found = 0
    for predicate, x_first, x_when_true, value, quiet in itertools.product(
        range(16), (True, False), (True, False), (0.0, -0.0, 6.0, -2.0, np.inf, np.nan), (False, True)
    ):
        c = np.array([value], dtype)
        kernel = compare_select(predicate, x_first, x_when_true, c, quiet)
        if kernel is None:
            continue
        found += 1
        x = quieted if quiet else signaling
        condition = _CMPF[predicate](x, c) if x_first else _CMPF[predicate](c, x)
        want = select(condition, x, c) if x_when_true else select(condition, c, x)
        assert same_bytes(kernel(x, c), want), (predicate, x_first, x_when_true, value)
        into = x.copy()
        assert kernel(into, c, out=into) is into and same_bytes(into, want)  # in place
    # ReLU (x > 0 ? x : 0) and ReLU6's upper bound (6 < x ? 6 : x) are among them
    assert compare_select(2, True, True, np.array([0.0], dtype)) is not None
    assert compare_select(4, False, False, np.array([6.0], dtype)) is not None
    assert compare_select(9, True, True, np.array([0.0], dtype), quiet=True) is not None  # ResNet's (ugt)
    assert found >= 140


def quiet_nans(x: np.ndarray) -> np.ndarray:
    """`x` with its signaling NaNs quieted, as IEEE arithmetic leaves them."""
    quiet = x.copy()
    bits = quiet.view(BITS[x.dtype.type])
    bit = {2: 0x0200, 4: 0x00400000, 8: 0x0008000000000000}[x.itemsize]
    bits[np.isnan(x)] |= bit
    return quiet


def test_compare_select_refuses_what_no_max_or_min_gives():
    zero, negative_zero, nan = (np.array([v], np.float32) for v in (0.0, -0.0, np.nan))
    assert compare_select(3, True, True, zero) is None  # x >= 0 ? x : 0 keeps -0.0: no max does
    assert compare_select(9, True, True, zero) is None  # unordered: NaN + 0 would quiet a signaling NaN
    assert compare_select(10, True, True, zero, quiet=True) is None  # x uge 0 ? x : 0 keeps -0.0
    assert compare_select(2, True, True, negative_zero) is None
    assert compare_select(2, True, True, nan) is None
    assert compare_select(1, True, True, zero) is None  # oeq is no max or min
    assert compare_select(2, True, True, np.array([0.0, 1.0], np.float32)) is None


def test_out_kernel_takes_exactly_rounded_ufuncs_of_the_result_type_only():
    f16, f32, i8 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.int8)
    assert out_kernel(np.add, [f16, f16], f16) is np.add
    assert out_kernel(np.greater, [f32, f32], np.dtype(bool)) is np.greater
    assert out_kernel(np.add, [i8, i8], i8) is np.add
    assert out_kernel(np.add, [f16, f16], f32) is None  # numpy would cast into the out array
    assert out_kernel(np.exp, [f32], f32) is None  # not exactly rounded: another layout, another loop
    assert out_kernel(select, [np.dtype(bool), f32, f32], f32) is None


def batch_norm_relu6(t: str, shape=(4, 6)) -> str:
    """(x - mean[c]) * a[c] * b[c] + beta[c], ReLU6 as MobileNetV2's (cmpf ogt / select, then
    cmpf olt with the constant first / select)."""
    tensor_text = f"tensor<{shape[0]}x{shape[1]}x{t}>"
    channel = f"tensor<{shape[0]}x{t}>"
    body = f"""  ^bb0(%xi: {t}, %mi: {t}, %ai: {t}, %bi: {t}, %betai: {t}, %o: {t}):
    %0 = arith.subf %xi, %mi : {t}
    %1 = arith.mulf %0, %ai : {t}
    %2 = arith.mulf %1, %bi : {t}
    %3 = arith.addf %2, %betai : {t}
    %4 = arith.cmpf ogt, %3, %zero : {t}
    %5 = arith.select %4, %3, %zero : {t}
    %6 = arith.cmpf olt, %six, %5 : {t}
    %7 = arith.select %6, %six, %5 : {t}
    linalg.yield %7 : {t}"""
    op = generic(
        ["(d0, d1) -> (d0, d1)"] + ["(d0, d1) -> (d0)"] * 4 + ["(d0, d1) -> (d0, d1)"],
        ["parallel", "parallel"],
        [("%x", tensor_text)] + [(f"%{n}", channel) for n in ("m", "a", "b", "beta")],
        [("%e", tensor_text)],
        body,
        tensor_text,
    )
    return f"""func.func @f(%x: {tensor_text}, %m: {channel}, %a: {channel}, %b: {channel}, %beta: {channel}) -> {tensor_text} {{
  %zero = arith.constant 0.0 : {t}
  %six = arith.constant 6.0 : {t}
  %e = tensor.empty() : {tensor_text}
  %r = {op}
  return %r : {tensor_text}
}}"""


def batch_norm_relu6_reference(x, m, a, b, beta):
    """Op by op in x's type, the selects as np.where: the bytes MLIR gives."""
    with np.errstate(all="ignore"):
        y = (x - m[..., None]) * a[..., None] * b[..., None] + beta[..., None]
    zero, six = y.dtype.type(0), y.dtype.type(6)
    y = np.where(y > zero, y, zero)
    return np.where(six < y, six, y)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("tiles", [3, 16])
def test_batch_norm_relu6_in_place_and_into_an_output_view(dtype, tiles):
    kernel = codelet(batch_norm_relu6(NAMES[dtype]))
    x = awkward((tiles, 4, 6), dtype)
    params = [(RNG.standard_normal((1, 4)) + 1).astype(dtype) for _ in range(4)]
    params[0][0, 0] = np.nan  # a NaN channel: ReLU6 makes it 0
    before = [p.tobytes() for p in [x, *params]]
    want = batch_norm_relu6_reference(x, *params)
    (got,) = kernel([x, *params])
    assert same_bytes(got, want)
    rows = np.full((tiles, 40), 7, dtype)  # tile rows longer than a result: a strided view
    output = rows[:, 3:27].reshape(tiles, 4, 6)
    assert kernel.into([x, *params], output)
    assert same_bytes(np.ascontiguousarray(output), want)
    assert (rows[:, :3] == 7).all() and (rows[:, 27:] == 7).all()
    assert [p.tobytes() for p in [x, *params]] == before  # arguments are never written


def test_into_takes_its_own_input_seen_the_same_way_only_and_refuses_another_type():
    kernel = codelet(batch_norm_relu6("f32"))
    x = awkward((3, 4, 6), np.float32)
    params = [np.ones((1, 4), np.float32) for _ in range(4)]
    (want,) = kernel([x, *params])
    y = x.copy()
    assert kernel.into([y, *params], y)  # in place over its own input (a device variable's update)
    assert same_bytes(y, want)
    rows = np.concatenate([x, x[:, :, :1]], axis=2)  # the output one element past the input
    kept = rows.copy()
    assert not kernel.into([rows[:, :, :6], *params], rows[:, :, 1:])
    assert same_bytes(rows, kept)
    assert not kernel.into([x, *params], np.zeros((3, 4, 6), np.float64))
    assert not kernel.into([x, *params], np.zeros((2, 4, 6), np.float32))


COMBINE_THEN_BODY = """func.func @f(%p: tensor<3x4x6xf32>, %m: tensor<4xf32>, %r: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %sum = SUM
  %e2 = tensor.empty() : tensor<4x6xf32>
  %y = BODY
  return %y : tensor<4x6xf32>
}"""


def combine_then_body() -> str:
    total = generic(
        ["(d0, d1, d2) -> (d0, d1, d2)", "(d0, d1, d2) -> (d1, d2)"],
        ["reduction", "parallel", "parallel"],
        [("%p", "tensor<3x4x6xf32>")],
        [("%init", "tensor<4x6xf32>")],
        "  ^bb0(%in: f32, %out: f32):\n    %0 = arith.addf %in, %out : f32\n    linalg.yield %0 : f32",
        "tensor<4x6xf32>",
    )
    body = generic(
        ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)", "(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0, d1)"],
        ["parallel", "parallel"],
        [("%sum", "tensor<4x6xf32>"), ("%m", "tensor<4xf32>"), ("%r", "tensor<4x6xf32>")],
        [("%e2", "tensor<4x6xf32>")],
        "  ^bb0(%s: f32, %mm: f32, %res: f32, %o: f32):\n    %0 = arith.subf %s, %mm : f32\n    %1 = arith.addf %0, %res : f32"
        "\n    %2 = arith.cmpf ogt, %1, %zero : f32\n    %3 = arith.select %2, %1, %zero : f32\n    linalg.yield %3 : f32",
        "tensor<4x6xf32>",
    )
    return COMBINE_THEN_BODY.replace("SUM", total).replace("BODY", body)


def test_partial_sums_combined_then_a_body_in_the_sums_own_array():
    # the sum of partials is a new array read only by the body: its ops write into it, and
    # signed zeros keep the init's rule (-0.0 + 0.0 = +0.0 before the ReLU)
    kernel = codelet(combine_then_body())
    partials = awkward((5, 3, 4, 6), np.float32)
    partials[:, :, 0, 0] = -0.0
    m, residual = RNG.standard_normal((1, 4)).astype(np.float32), awkward((5, 4, 6), np.float32)
    before = [a.tobytes() for a in (partials, m, residual)]
    with np.errstate(all="ignore"):
        total = ((partials[:, 0] + partials[:, 1]) + partials[:, 2]) + np.float32(0)
        y = (total - m[..., None]) + residual
    want = np.where(y > 0, y, np.float32(0))
    (got,) = kernel([partials, m, residual])
    assert same_bytes(got, want)
    output = np.empty((5, 4, 6), np.float32)
    assert kernel.into([partials, m, residual], output) and same_bytes(output, want)
    assert [a.tobytes() for a in (partials, m, residual)] == before


def two_generics(first_body: str, first_results: int, second_input: str, returned: str) -> str:
    t = "tensor<4x6xf32>"
    first = generic(
        ["(d0, d1) -> (d0, d1)"] * (1 + first_results),
        ["parallel", "parallel"],
        [("%x", t)],
        [("%e", t)] * first_results,
        first_body,
        t if first_results == 1 else f"({', '.join([t] * first_results)})",
    )
    second = generic(
        ["(d0, d1) -> (d0, d1)"] * 2,
        ["parallel", "parallel"],
        [(second_input, t)],
        [("%e", t)],
        "  ^bb0(%a: f32, %o: f32):\n    %0 = arith.mulf %a, %a : f32\n    linalg.yield %0 : f32",
        t,
    )
    names = "%v" if first_results == 1 else f"%v:{first_results}"
    types = ", ".join([t] * returned.count("%"))
    return f"""func.func @f(%x: {t}) -> ({types}) {{
  %e = tensor.empty() : {t}
  {names} = {first}
  %w = {second}
  return {returned} : {types}
}}"""


def test_a_value_yielded_twice_is_not_overwritten_through_its_twin():
    # %v#0 and %v#1 are one array: squaring %v#0 in place would change %v#1
    body = "  ^bb0(%ai: f32, %o: f32, %o2: f32):\n    %0 = arith.addf %ai, %ai : f32\n    linalg.yield %0, %0 : f32, f32"
    kernel = codelet(two_generics(body, 2, "%v#0", "%v#1, %w"))
    x = awkward((3, 4, 6), np.float32)
    twice, square = kernel([x])
    assert same_bytes(twice, x + x) and same_bytes(square, (x + x) * (x + x))


def test_an_argument_passed_through_a_generic_is_not_overwritten_by_the_next():
    body = "  ^bb0(%a: f32, %o: f32):\n    linalg.yield %a : f32"
    kernel = codelet(two_generics(body, 1, "%v", "%w"))
    x = awkward((3, 4, 6), np.float32)
    kept = x.copy()
    (square,) = kernel([x])
    assert same_bytes(square, kept * kept) and same_bytes(x, kept)


def test_a_bitcast_of_a_value_keeps_its_bytes_when_the_value_is_last_read_after():
    # %c is %a's last reader: writing it into %a's array would change the bitcast %b, a view
    t = "tensor<4x6xf32>"
    op = generic(
        ["(d0, d1) -> (d0, d1)"] * 4,
        ["parallel", "parallel"],
        [("%x", t), ("%y", t)],
        [("%ei", "tensor<4x6xi32>"), ("%e", t)],
        "  ^bb0(%p: f32, %q: f32, %o: i32, %o2: f32):\n    %a = arith.addf %p, %q : f32\n    %b = arith.bitcast %a : f32 to i32"
        "\n    %c = arith.mulf %a, %a : f32\n    linalg.yield %b, %c : i32, f32",
        f"(tensor<4x6xi32>, {t})",
    )
    text = f"""func.func @f(%x: {t}, %y: {t}) -> (tensor<4x6xi32>, {t}) {{
  %ei = tensor.empty() : tensor<4x6xi32>
  %e = tensor.empty() : {t}
  %r:2 = {op}
  return %r#0, %r#1 : tensor<4x6xi32>, {t}
}}"""
    x, y = awkward((3, 4, 6), np.float32), awkward((3, 4, 6), np.float32)
    bits, square = codelet(text)([x, y])
    assert same_bytes(bits, (x + y).view(np.int32)) and same_bytes(square, (x + y) * (x + y))


@pytest.mark.parametrize("dtype, t", [(np.int8, "i8"), (np.int32, "i32"), (np.bool_, "i1")])
def test_integer_and_i1_bodies_in_place(dtype, t):
    # i8 wraps; i1 addi is xor and muli and, computed through int8 views (no out= kernel)
    text = binary(
        t,
        f"    %a = arith.addi %p, %q : {t}\n    %b = arith.muli %a, %q : {t}"
        f"\n    %c = arith.xori %b, %a : {t}\n    %d = arith.subi %c, %p : {t}\n    linalg.yield %d : {t}",
    )
    if dtype == np.bool_:
        x, y = RNG.integers(0, 2, (3, 4, 6)).astype(bool), RNG.integers(0, 2, (3, 4, 6)).astype(bool)
        a = x ^ y
        want = ((a & y) ^ a) ^ x
    else:
        x, y = (RNG.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (3, 4, 6), dtype=dtype) for _ in range(2))
        a = x + y
        want = ((a * y) ^ a) - x
    kernel = codelet(text)
    (got,) = kernel([x, y])
    assert same_bytes(got, want)
    output = np.empty((3, 4, 6), dtype)
    assert kernel.into([x, y], output) and same_bytes(output, want)


def test_a_reduction_over_size_one_loops_combines_its_init_without_writing_the_input():
    # fold returns a view of the input when every reduced loop has size 1: the init is then
    # combined into a new array, not into the argument
    op = generic(
        ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d1)"],
        ["reduction", "parallel"],
        [("%x", "tensor<1x6xf32>")],
        [("%init", "tensor<6xf32>")],
        "  ^bb0(%a: f32, %o: f32):\n    %0 = arith.addf %a, %o : f32\n    linalg.yield %0 : f32",
        "tensor<6xf32>",
    )
    text = f"""func.func @f(%x: tensor<1x6xf32>, %init: tensor<6xf32>) -> tensor<6xf32> {{
  %r = {op}
  return %r : tensor<6xf32>
}}"""
    x, init = awkward((3, 1, 6), np.float32), awkward((3, 6), np.float32)
    kept = x.copy()
    (got,) = codelet(text)([x, init])
    assert same_bytes(got, x[:, 0] + init) and same_bytes(x, kept)


def test_a_codelet_with_an_assert_has_no_into():
    # a failed cf.assert is located by the vertex group's run, which `into` would bypass
    t = "tensor<4x6xf32>"
    op = generic(
        ["(d0, d1) -> (d0, d1)"] * 2,
        ["parallel", "parallel"],
        [("%x", t)],
        [("%e", t)],
        '  ^bb0(%a: f32, %o: f32):\n    %c = arith.cmpf oge, %a, %a : f32\n    cf.assert %c, "NaN"\n'
        "    %0 = arith.addf %a, %a : f32\n    linalg.yield %0 : f32",
        t,
    )
    text = f"""func.func @f(%x: {t}) -> {t} {{
  %e = tensor.empty() : {t}
  %r = {op}
  return %r : {t}
}}"""
    x = awkward((3, 4, 6), np.float32)[:, :, :]
    x[np.isnan(x)] = 1.0
    kernel = codelet(text)
    assert not kernel.into([x], np.empty((3, 4, 6), np.float32))
    assert same_bytes(kernel([x])[0], x + x)


def partial_sums(with_init: bool, combiner: str = "arith.addf") -> str:
    """A combine of partial sums as the planner emits it: onto a zero fill, or onto an init."""
    op = generic(
        ["(d0, d1, d2) -> (d0, d1, d2)", "(d0, d1, d2) -> (d1, d2)"],
        ["reduction", "parallel", "parallel"],
        [("%p", "tensor<3x4x6xf32>")],
        [("%init", "tensor<4x6xf32>")],
        f"  ^bb0(%in: f32, %out: f32):\n    %0 = {combiner} %in, %out : f32\n    linalg.yield %0 : f32",
        "tensor<4x6xf32>",
    )
    init = (
        ""
        if with_init
        else """  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
"""
    )
    arguments = "%p: tensor<3x4x6xf32>" + (", %init: tensor<4x6xf32>" if with_init else "")
    return f"""func.func @f({arguments}) -> tensor<4x6xf32> {{
{init}  %r = {op}
  return %r : tensor<4x6xf32>
}}"""


def test_partial_sums_combined_straight_into_an_output_view():
    partials = awkward((5, 3, 4, 6), np.float32)
    partials[:, :, 0, 0] = -0.0  # -0.0 + -0.0 + -0.0 + 0.0: the zero fill makes it +0.0
    with np.errstate(all="ignore"):
        want = ((partials[:, 0] + partials[:, 1]) + partials[:, 2]) + np.float32(0)
    kernel = codelet(partial_sums(False))
    assert same_bytes(kernel([partials])[0], want)
    rows = np.full((5, 30), 7, np.float32)
    output = rows[:, 2:26].reshape(5, 4, 6)
    assert kernel.into([partials], output)
    assert same_bytes(np.ascontiguousarray(output), want) and (rows[:, :2] == 7).all() and (rows[:, 26:] == 7).all()


def test_partial_sums_onto_an_init_refuse_an_output_over_the_init():
    partials, init = awkward((5, 3, 4, 6), np.float32), awkward((5, 4, 6), np.float32)
    kernel = codelet(partial_sums(True, "arith.maximumf"))
    want = np.maximum(np.maximum(np.maximum(partials[:, 0], partials[:, 1]), partials[:, 2]), init)
    kept = init.copy()
    assert not kernel.into([partials, init], init)  # the init read where the result is written: the caller copies
    assert same_bytes(init, kept)
    output = np.empty((5, 4, 6), np.float32)
    assert kernel.into([partials, init], output) and same_bytes(output, want)


def test_a_batch_norm_allocates_one_result_and_nothing_into_an_output():
    # eight ops over 1 MB: each used to make a new array; now the first op's array (or the
    # output `into` gives) takes every later result
    x = awkward((1024, 4, 64), np.float32)
    params = [np.ones((1, 4), np.float32) for _ in range(4)]
    text = batch_norm_relu6("f32", (4, 64))
    kernel = codelet(text)
    output = np.empty_like(x)
    kernel([x, *params])  # shapes checked once
    tracemalloc.start()
    try:
        kernel([x, *params])
        _, called = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        assert kernel.into([x, *params], output)
        _, into = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert called < 1.5 * x.nbytes and into < 0.1 * x.nbytes, (called, into)


def test_broadcast_shape_is_numpys_on_shapes_that_broadcast():
    for _ in range(500):
        full = tuple(int(n) for n in RNG.integers(1, 4, RNG.integers(0, 5)))
        shapes = [tuple(1 if RNG.random() < 0.4 else n for n in full[RNG.integers(0, len(full) + 1) :]) for _ in range(3)]
        assert broadcast_shape(shapes) == np.broadcast_shapes(*shapes), shapes


def relu(t: str, argument: bool) -> str:
    """ResNet's ReLU, `x ugt 0 ? x : 0`, of a sum (its NaNs quiet) or of the argument itself."""
    x = "%p" if argument else "%s"
    return binary(
        t,
        f"    %s = arith.addf %p, %q : {t}\n    %c = arith.cmpf ugt, {x}, %zero : {t}"
        f"\n    %r = arith.select %c, {x}, %zero : {t}\n    linalg.yield %r : {t}",
        f"  %zero = arith.constant 0.0 : {t}\n",
    )


def binary(t: str, body: str, prelude: str = "") -> str:
    """@f(%x, %y) of two tensor<4x6xT>: one element-wise generic, its block arguments %p, %q
    (and %o), running `body`; `prelude` defines values the body reads from outside."""
    tt = f"tensor<4x6x{t}>"
    op = generic(
        ["(d0, d1) -> (d0, d1)"] * 3,
        ["parallel", "parallel"],
        [("%x", tt), ("%y", tt)],
        [("%e", tt)],
        f"  ^bb0(%p: {t}, %q: {t}, %o: {t}):\n{body}",
        tt,
    )
    return f"""func.func @f(%x: {tt}, %y: {tt}) -> {tt} {{
{prelude}  %e = tensor.empty() : {tt}
  %r = {op}
  return %r : {tt}
}}"""


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("argument", [False, True])
def test_an_unordered_relu_keeps_nan_bits_of_a_sum_or_an_argument(dtype, argument):
    # a sum's NaNs are quiet: max and +0.0; the argument may hold a signaling NaN (awkward's),
    # which adding +0.0 would quiet: compare and select
    x, y = awkward((3, 4, 6), dtype), RNG.standard_normal((3, 4, 6)).astype(dtype)
    y[0, 0, :] = 0.0  # NaN + 0 keeps the NaN's payload
    with np.errstate(all="ignore"):
        s = x + y
        v = x if argument else s
        want = np.where((v > 0) | np.isnan(v), v, dtype(0))
    (got,) = codelet(relu(NAMES[dtype], argument))([x, y])
    assert same_bytes(got, want)
