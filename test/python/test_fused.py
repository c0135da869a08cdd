"""Element-wise bodies run as one compiled pass (runtime/fused.py): the same bytes as numpy's
op by op path (Fused.plan refused) on NaNs of both signs and payloads, signed zeros,
infinities and subnormals, in f32 and f64, for constants on either side, operands broadcast
along loops and tiles, outputs written into strided views; bodies it does not take run as
before."""

from __future__ import annotations

import numpy as np
import pytest
from test_codelet import codelet, generic
from test_codelet_inplace import NAMES, awkward, same_bytes

from ipu_mlir.runtime import fused as fused_module

RNG = np.random.default_rng(5)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf on purpose

# bodies over (%x: the element, %c: its channel's value, %r: another element, %o); each line an op
BODIES = {
    "bias and ReLU6": [
        "%0 = arith.addf %x, %c",
        "%1 = arith.cmpf ogt, %0, %zero",
        "%2 = arith.select %1, %0, %zero",
        "%3 = arith.cmpf olt, %six, %2",
        "%4 = arith.select %3, %six, %2",
    ],
    "residual": ["%0 = arith.addf %c, %x", "%1 = arith.addf %r, %0"],
    "constants either side": [
        "%0 = arith.subf %x, %c",
        "%1 = arith.divf %0, %r",
        "%2 = arith.subf %two, %1",
        "%3 = arith.divf %two, %2",
        "%4 = arith.mulf %3, %two",
        "%5 = arith.addf %two, %4",
        "%6 = arith.subf %5, %two",
        "%7 = arith.divf %6, %two",
    ],
    "unordered clamps": [
        "%0 = arith.mulf %x, %r",
        "%1 = arith.cmpf ugt, %0, %zero",
        "%2 = arith.select %1, %0, %zero",
        "%3 = arith.cmpf ult, %2, %two",
        "%4 = arith.select %3, %2, %two",
    ],
    "clamps not at zero": [
        "%0 = arith.subf %x, %r",
        "%1 = arith.cmpf olt, %0, %two",
        "%2 = arith.select %1, %0, %two",
        "%3 = arith.cmpf oge, %2, %minus",
        "%4 = arith.select %3, %2, %minus",
    ],
    "ReLU's backward mask": ["%0 = arith.cmpf ule, %x, %zero", "%1 = arith.select %0, %zero, %r"],
    "selects on compares": [
        "%0 = arith.addf %x, %r",
        "%1 = arith.cmpf ogt, %0, %minus",
        "%2 = arith.select %1, %0, %r",
        "%3 = arith.cmpf uno, %2, %c",
        "%4 = arith.select %3, %two, %2",
        "%5 = arith.cmpf oge, %two, %x",
        "%6 = arith.select %5, %4, %c",
    ],
}
PREDICATES = ["oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno"]


def body_codelet(lines: list[str], t: str) -> str:
    shape, channel = f"tensor<4x6x{t}>", f"tensor<4x{t}>"
    typed = [f"{line} : {t}" for line in lines]
    last = lines[-1].split(" = ")[0]
    body = (
        f"  ^bb0(%x: {t}, %c: {t}, %r: {t}, %o: {t}):\n" + "\n".join(f"    {line}" for line in typed) + f"\n    linalg.yield {last} : {t}"
    )
    op = generic(
        ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)", "(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0, d1)"],
        ["parallel", "parallel"],
        [("%xs", shape), ("%cs", channel), ("%rs", shape)],
        [("%e", shape)],
        body,
        shape,
    )
    return f"""func.func @f(%xs: {shape}, %cs: {channel}, %rs: {shape}) -> {shape} {{
  %zero = arith.constant 0.0 : {t}
  %six = arith.constant 6.0 : {t}
  %two = arith.constant 2.5 : {t}
  %minus = arith.constant -1.5 : {t}
  %e = tensor.empty() : {shape}
  %y = {op}
  return %y : {shape}
}}"""


def spread(shape, dtype) -> np.ndarray:
    """`awkward` values, the special ones anywhere."""
    size = int(np.prod(shape))
    values = awkward((max(size, 12),), dtype)
    RNG.shuffle(values)
    return values[:size].reshape(shape)


@pytest.fixture
def taken(monkeypatch):
    """How many calls ran compiled (a test that never reached the pass would pass too)."""
    calls = []
    original = fused_module.Fused.__call__
    monkeypatch.setattr(fused_module.Fused, "__call__", lambda self, *a: calls.append(original(self, *a)) or calls[-1])
    return calls


def op_by_op(text: str, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(fused_module.Fused, "plan", staticmethod(lambda *a: None))
        return codelet(text)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(BODIES))
def test_fused_bodies_give_numpys_bytes(name, dtype, taken, monkeypatch):
    check_layouts(body_codelet(BODIES[name], NAMES[dtype]), dtype, taken, monkeypatch)


@pytest.mark.parametrize("predicate", PREDICATES)
def test_every_compare_a_select_reads_gives_numpys_bytes(predicate, taken, monkeypatch):
    """Each arith.cmpf predicate of two elements, and of a constant and an element (swapped
    into the element's compare), choosing for a select: NaNs, signed zeros, infinities."""
    lines = [f"%0 = arith.cmpf {predicate}, %x, %r", "%1 = arith.select %0, %x, %c"]
    lines += [f"%2 = arith.cmpf {predicate}, %two, %1", "%3 = arith.select %2, %r, %1"]
    lines += [f"%4 = arith.cmpf {predicate}, %3, %zero", "%5 = arith.select %4, %3, %c"]
    check_layouts(body_codelet(lines, "f32"), np.float32, taken, monkeypatch)


# f32 erf (semantics' compiled one) is an instruction too: GELU as BERT's, and two erfs
ERF_BODIES = {
    "gelu": [
        "%0 = arith.addf %x, %c",
        "%1 = arith.divf %0, %two",
        "%2 = math.erf %1",
        "%3 = arith.addf %2, %six",
        "%4 = arith.mulf %3, %two",
        "%5 = arith.mulf %0, %4",
    ],
    "two erfs": ["%0 = math.erf %x", "%1 = arith.mulf %0, %r", "%2 = math.erf %1", "%3 = arith.subf %2, %0", "%4 = math.erf %c"],
}


@pytest.mark.parametrize("name", sorted(ERF_BODIES))
def test_bodies_with_erf_give_numpys_bytes(name, taken, monkeypatch):
    check_layouts(body_codelet(ERF_BODIES[name], "f32"), np.float32, taken, monkeypatch)


def check_layouts(text: str, dtype, taken, monkeypatch) -> None:
    """The body of `text` compiled and op by op, on each layout, into new and given arrays."""
    fused, numpys = codelet(text), op_by_op(text, monkeypatch)
    tiles = 9
    x = spread((tiles, 4, 6), dtype)
    r = np.ascontiguousarray(spread((tiles, 6, 4), dtype)[::-1].transpose(0, 2, 1))
    layouts = {
        "contiguous": (x, spread((tiles, 4), dtype), r),
        "one channel row for every tile": (x, spread((1, 4), dtype), r),
        "transposed in memory": (spread((tiles, 6, 4), dtype).transpose(0, 2, 1), spread((tiles, 4), dtype), r),
        "the same on every tile": (x[:1], spread((1, 4), dtype), r[:1]),
        "strided": (spread((tiles, 4, 12), dtype)[:, :, ::2], spread((tiles, 8), dtype)[:, ::2], r),
        "rows padded apart": (spread((tiles, 4, 8), dtype)[:, :, :6], spread((tiles, 4), dtype), r),
    }
    for layout, inputs in layouts.items():
        before = [x.tobytes() for x in inputs]
        (want,) = numpys(list(inputs))
        count = len(taken)
        (got,) = fused(list(inputs))
        assert len(taken) == count + 1 and taken[-1], layout
        assert same_bytes(np.ascontiguousarray(got), np.ascontiguousarray(want)), layout
        rows = np.full((want.shape[0], 40), 7, dtype)  # into a strided view of longer tile rows
        output = rows[:, 3:27].reshape(want.shape[0], 4, 6)
        if want.shape[0] == max(x.shape[0] for x in inputs) and fused.into(list(inputs), output):
            assert same_bytes(np.ascontiguousarray(output), np.ascontiguousarray(want)), layout
            assert (rows[:, :3] == 7).all() and (rows[:, 27:] == 7).all()
            padded = np.full((want.shape[0], 4, 9), 7, dtype)  # rows of the output padded apart
            assert fused.into(list(inputs), padded[:, :, 1:7])
            assert same_bytes(np.ascontiguousarray(padded[:, :, 1:7]), np.ascontiguousarray(want)), layout
            assert (padded[:, :, 0] == 7).all() and (padded[:, :, 7:] == 7).all()
        assert [x.tobytes() for x in inputs] == before  # inputs are never written


def test_bodies_it_does_not_take_run_op_by_op(taken):
    """f16, an op outside its set (exp), f64 erf, a compare read as a number: numpy's path, nothing compiled."""
    for text in (
        body_codelet(BODIES["residual"], "f16"),
        body_codelet(ERF_BODIES["gelu"], "f64"),
        body_codelet(["%0 = math.exp %x", "%1 = arith.addf %0, %r"], "f32"),
        body_codelet(  # a compare read as a number too
            ["%0 = arith.cmpf ogt, %x, %r", "%1 = arith.select %0, %x, %r", "%2 = arith.uitofp %0 : i1 to f32", "%3 = arith.addf %1, %2"],
            "f32",
        ).replace(" : i1 to f32 : f32", " : i1 to f32"),
    ):
        kernel = codelet(text)
        x = np.ones((3, 4, 6), np.float16 if "f16" in text else np.float64 if "f64" in text else np.float32)
        kernel([x, np.ones((3, 4), x.dtype), x])
    assert taken == []


def test_a_layout_of_more_axes_runs_a_call_per_outer_point(taken, monkeypatch):
    """Operands whose strides merge into more than four axes: the kernel over the last four,
    once per point of the others (a convolution weight's momentum update), numpy's bytes."""
    monkeypatch.setattr(fused_module, "CALL_ELEMENTS", 144)  # the 3 x 2 x 4 x 6 elements of each outer point
    text = body_codelet(BODIES["residual"], "f32")
    kernel = codelet(text, batch_rank=3)
    x = spread((6, 4, 2, 3, 2), np.float32).transpose(4, 3, 2, 1, 0)  # tiles 2 x 3 x 2: no two axes merge
    r = spread((2, 3, 2, 4, 6), np.float32)
    c = spread((2, 3, 2, 4), np.float32)
    (got,) = kernel([x, c, r])
    assert taken == [True]
    assert same_bytes(got, r + (c[..., None] + x))
    rows = np.full((2, 3, 2, 4, 9), 7, np.float32)  # into a strided view
    assert kernel.into([x, c, r], rows[..., 1:7])
    assert taken == [True, True]
    assert same_bytes(np.ascontiguousarray(rows[..., 1:7]), r + (c[..., None] + x))
    assert (rows[..., 0] == 7).all() and (rows[..., 7:] == 7).all()


def test_a_layout_of_more_axes_and_few_elements_a_call_runs_op_by_op(taken, monkeypatch):
    """Outer points of fewer than CALL_ELEMENTS elements each: numpy's passes, not a call each."""
    monkeypatch.setattr(fused_module, "CALL_ELEMENTS", 145)  # one more than the 3 x 2 x 4 x 6 of each outer point
    text = body_codelet(BODIES["residual"], "f32")
    kernel = codelet(text, batch_rank=3)
    x = spread((6, 4, 2, 3, 2), np.float32).transpose(4, 3, 2, 1, 0)
    r, c = spread((2, 3, 2, 4, 6), np.float32), spread((2, 3, 2, 4), np.float32)
    (got,) = kernel([x, c, r])
    assert taken == [False]
    assert same_bytes(got, r + (c[..., None] + x))


def test_a_nan_constant_runs_op_by_op(taken):
    """Of two NaNs numpy keeps the first operand's payload, a constant's in `c + x`: left to numpy."""
    lines = ["%0 = arith.addf %x, %r", "%1 = arith.addf %nan, %0"]
    text = body_codelet(lines, "f32").replace("%minus = arith.constant -1.5", "%nan = arith.constant 0x7FC00123")
    kernel = codelet(text)
    x = spread((3, 4, 6), np.float32)
    (got,) = kernel([x, spread((3, 4), np.float32), x])
    assert taken == []
    assert (got.view(np.uint32) == 0x7FC00123).all()  # the constant's payload everywhere


def test_kernels_are_written_to_the_cache_and_a_bad_file_rewritten(tmp_path, monkeypatch, taken):
    """Each program's kernel source is a file of the user's cache (numba caches its machine
    code beside it); a file whose text is not the source is written again before use."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(fused_module, "_KERNELS", {})
    fused_module._directory.cache_clear()
    try:
        text = body_codelet(BODIES["residual"], "f32")
        inputs = [spread((3, 4, 6), np.float32), spread((3, 4), np.float32), spread((3, 4, 6), np.float32)]
        (first,) = codelet(text)(inputs)
        files = sorted((tmp_path / "ipu-mlir" / "fused").glob("*.py"))
        assert len(files) == 1 and files[0].read_text().startswith("import numpy as np\ndef kernel(")
        files[0].write_text("kernel = None\n")
        monkeypatch.setattr(fused_module, "_KERNELS", {})
        (second,) = codelet(text)(inputs)
        assert files[0].read_text().startswith("import numpy as np\ndef kernel(")
        assert taken == [True, True] and same_bytes(first, second)
    finally:
        fused_module._directory.cache_clear()


def test_erf_on_a_dense_range_and_random_bits(taken, monkeypatch):
    """erf in the pass, op for op as semantics' `_erf_blocks`: the same bytes on 196,608 values
    spanning the near and far polynomials and past them, and on as many random bit patterns."""
    text = body_codelet(["%0 = math.erf %x", "%1 = arith.addf %0, %c"], "f32")
    fused, numpys = codelet(text), op_by_op(text, monkeypatch)
    tiles = 8192
    dense = np.linspace(-5, 5, tiles * 24, dtype=np.float32).reshape(tiles, 4, 6)
    bits = RNG.integers(0, 2**32, tiles * 24, dtype=np.uint32).view(np.float32).reshape(tiles, 4, 6)
    for x in (dense, bits):
        inputs = [x, np.zeros((tiles, 4), np.float32), x]
        (want,) = numpys(inputs)
        (got,) = fused(inputs)
        assert taken[-1] and same_bytes(got, want)


def momentum_codelet(t: str, first: str = "%g") -> str:
    """SGD momentum's buffer update as the joint step gives it: on the first step (an i1 read
    by every element) the gradient, else momentum * buffer + gradient, the momentum an f64
    constant truncated in the body (extended, for f64). `first` chosen on the first step: %m
    reads the buffer again after an op has written a value (in place, op by op, a clobber)."""
    shape, other, cast = f"tensor<4x6x{t}>", "f64" if t == "f32" else "f32", "truncf" if t == "f32" else "extf"
    body = f"""  ^bb0(%c: i1, %g: {t}, %m: {t}, %o: {t}):
    %t = arith.{cast} %momentum : {other} to {t}
    %0 = arith.mulf %m, %t : {t}
    %1 = arith.addf %0, %g : {t}
    %2 = arith.select %c, {first}, %1 : {t}
    linalg.yield %2 : {t}"""
    op = generic(
        ["(d0, d1) -> ()", "(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0, d1)"],
        ["parallel", "parallel"],
        [("%first", "tensor<i1>"), ("%gs", shape), ("%ms", shape)],
        [("%e", shape)],
        body,
        shape,
    )
    return f"""func.func @f(%first: tensor<i1>, %gs: {shape}, %ms: {shape}) -> {shape} {{
  %momentum = arith.constant 0.9 : {other}
  %e = tensor.empty() : {shape}
  %y = {op}
  return %y : {shape}
}}"""


@pytest.mark.parametrize("first", ["%g", "%m"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_select_on_an_i1_input_is_compiled_and_updates_in_place(dtype, first, taken, monkeypatch):
    """The momentum update (its f64 constant folded, its select an instruction) runs compiled
    with numpy's bytes (NaN payloads, signed zeros), the condition differing by tile, into a new
    array and in place over its buffer input; op by op it computes aside before writing; an
    output overlapping an input seen otherwise is refused."""
    text = momentum_codelet(NAMES[dtype], first)
    fused, numpys = codelet(text), op_by_op(text, monkeypatch)
    tiles = 6
    chosen_name, first = first, np.array([True, False, False, True, False, False])
    g, m = spread((tiles, 4, 6), dtype), spread((tiles, 4, 6), dtype)
    (want,) = numpys([first, g, m])
    chosen = g if chosen_name == "%g" else m
    assert same_bytes(want[0], chosen[0]) and not same_bytes(want[1], chosen[1])  # both choices made
    (got,) = fused([first, g, m])
    assert taken == [True]
    assert same_bytes(np.ascontiguousarray(got), want)
    buffer = m.copy()
    assert fused.into([first, g, buffer], buffer)  # the buffer read and written, element by element
    assert taken == [True, True]
    assert same_bytes(buffer, want)
    buffer = m.copy()
    assert numpys.into([first, g, buffer], buffer)  # op by op: made aside, then copied
    assert same_bytes(buffer, want)
    rows = np.concatenate([m, m[:, :, :1]], axis=2)  # the output one element past the buffer input
    kept = rows.copy()
    assert not fused.into([first, g, rows[:, :, :6]], rows[:, :, 1:])
    assert same_bytes(rows, kept) and len(taken) == 2


def masked_codelet(t: str, constant_first: bool) -> str:
    """GPT-2's causal mask on its scores: x / 8 where the mask (an i1 per element, broadcast
    over heads) holds, else the lowest finite value; or the constant where it holds."""
    shape, mask = f"tensor<3x4x6x{t}>", "tensor<3x1x6xi1>"
    chosen = "%low, %0" if constant_first else "%0, %low"
    body = f"""  ^bb0(%c: i1, %x: {t}, %o: {t}):
    %0 = arith.divf %x, %eight : {t}
    %1 = arith.select %c, {chosen} : {t}
    linalg.yield %1 : {t}"""
    op = generic(
        ["(d0, d1, d2) -> (d0, 0, d2)", "(d0, d1, d2) -> (d0, d1, d2)", "(d0, d1, d2) -> (d0, d1, d2)"],
        ["parallel", "parallel", "parallel"],
        [("%mask", mask), ("%xs", shape)],
        [("%e", shape)],
        body,
        shape,
    )
    low = "-3.40282347E+38" if t == "f32" else "-1.7976931348623157E+308"
    return f"""func.func @f(%mask: {mask}, %xs: {shape}) -> {shape} {{
  %eight = arith.constant 8.0 : {t}
  %low = arith.constant {low} : {t}
  %e = tensor.empty() : {shape}
  %y = {op}
  return %y : {shape}
}}"""


@pytest.mark.parametrize("constant_first", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_select_of_a_constant_is_compiled(dtype, constant_first, taken, monkeypatch):
    """A constant chosen (either side) is moved as it is, with numpy's bytes elsewhere (NaN
    payloads, signed zeros, infinities, subnormals divided), into a new array and into a strided
    view; a NaN constant is refused (its payload is numpy's business)."""
    text = masked_codelet(NAMES[dtype], constant_first)
    fused, numpys = codelet(text), op_by_op(text, monkeypatch)
    tiles = 5
    mask = RNG.integers(0, 2, (tiles, 3, 1, 6)).astype(bool)
    x = spread((tiles, 3, 4, 6), dtype)
    (want,) = numpys([mask, x])
    assert 0 < (want == np.finfo(dtype).min).sum() < want.size  # both sides chosen
    (got,) = fused([mask, x])
    assert taken == [True]
    assert same_bytes(np.ascontiguousarray(got), want)
    rows = np.full((tiles, 3, 4, 9), 7, dtype)
    assert fused.into([mask, x], rows[..., 2:8])
    assert same_bytes(np.ascontiguousarray(rows[..., 2:8]), want) and (rows[..., :2] == 7).all()
    nan = codelet(text.replace("-3.40282347E+38", "0x7FC00123").replace("-1.7976931348623157E+308", "0x7FF8000000000123"))
    nan([mask, x])
    assert taken == [True, True]  # the NaN constant's body not compiled: no third call taken
