"""runtime/partials_in_place.py: later runs sum a matmul's partials where the products left
them, with the bytes of the copies and the codelet, and only when that is proven."""

from __future__ import annotations

import types

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import verifier
from ipu_mlir.dialects.ops.compiled import compiled
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime import partials_in_place, simulator
from ipu_mlir.runtime.api import load_module
from ipu_mlir.runtime.planner import Planner
from ipu_mlir.runtime.reduce import fold
from ipu_mlir.runtime.regions import Grid
from ipu_mlir.runtime.replicas import tile_classes
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.runtime.steps import Copy, Execute
from ipu_mlir.target import load_target

MATMUL = """module attributes {{ipu.target = "{target}"}} {{
  func.func @main(%a: tensor<{m}x{k}x{t}>, %b: tensor<{k}x{n}x{t}>{bias_arg}) -> tensor<{m}x{n}x{t}> {{
    %zero = arith.constant 0.0 : {t}
    %e = tensor.empty() : tensor<{m}x{n}x{t}>
    %f = linalg.fill ins(%zero : {t}) outs(%e : tensor<{m}x{n}x{t}>) -> tensor<{m}x{n}x{t}>
    %r = linalg.matmul ins(%a, %b : tensor<{m}x{k}x{t}>, tensor<{k}x{n}x{t}>) outs(%f : tensor<{m}x{n}x{t}>) -> tensor<{m}x{n}x{t}>
{epilogue}
  }}
}}"""

BIAS = """    %y = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
        iterator_types = ["parallel", "parallel"]}} ins(%r, %bias : tensor<{m}x{n}x{t}>, tensor<{n}x{t}>) outs(%e : tensor<{m}x{n}x{t}>) {{
    ^bb0(%x: {t}, %c: {t}, %o: {t}):
      %s = arith.addf %x, %c : {t}
{activation}      linalg.yield %y0 : {t}
    }} -> tensor<{m}x{n}x{t}>
    return %y : tensor<{m}x{n}x{t}>"""


# after the bias: the value yielded (%y0)
ACTIVATIONS = {
    "bias": "      %y0 = arith.addf %s, %s : {t}\n",  # 2 (x + b), an op after the add
    "relu": "      %z = arith.constant 0.0 : {t}\n      %y0 = arith.maximumf %s, %z : {t}\n",
    "clamp": (
        "      %z = arith.constant 0.0 : {t}\n      %six = arith.constant 6.0 : {t}\n"
        "      %lo = arith.maximumf %s, %z : {t}\n      %y0 = arith.minimumf %lo, %six : {t}\n"
    ),
}


def program(target: str, m: int, k: int, n: int, dtype: str = "f32", bias: str | None = None):
    fields = dict(target=target, m=m, k=k, n=n, t=dtype)
    fields["activation"] = ACTIVATIONS[bias].format(**fields) if bias else ""
    epilogue = BIAS.format(**fields) if bias else "    return %r : tensor<{m}x{n}x{t}>".format(**fields)
    module = load_module(MATMUL.format(**fields, bias_arg=f", %bias: tensor<{n}x{dtype}>" if bias else "", epilogue=epilogue))
    with module.context:
        compile_module(module)
    return module


def special_inputs(arguments, seed: int = 0) -> list[np.ndarray]:
    """Normal values with -0.0 rows and columns (products of -0.0), NaN and infinities."""
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape, dtype in arguments]
    a, b = inputs[0], inputs[1]
    a[0, :] = -0.0  # a row of -0.0 times anything: partials of -0.0 (or NaN where b is infinite)
    b[:, 0] = np.abs(b[:, 0])
    a[1 % a.shape[0], 3] = np.nan
    a[-1, 5] = np.inf
    b[7, -1] = -np.inf
    return inputs


def runs(module, inputs) -> tuple[Simulator, list[bytes]]:
    """The simulator and its outputs' bytes of a first (checked) and two later runs."""
    sim = Simulator(module)
    return sim, [b"".join(out.tobytes() for out in sim.run(inputs)) for _ in range(3)]


# (target, m, k, n, dtype): k cut into 2 to 46 pieces, summed in order from +0.0 (long rows)
# or by halving (more than 8 short rows), in f32 and f64
CASES = [
    ("tiny", 4, 256, 4, "f32"),  # 8 pieces of 2, in order
    ("tiny", 8, 1024, 8, "f32"),  # 16 pieces of 8, halving
    ("tiny", 32, 96, 32, "f32"),  # 4 pieces of 64 (rows)
    ("tiny", 64, 64, 64, "f32"),  # 2 pieces of 256
    ("tiny", 32, 96, 32, "f64"),  # 4 pieces of 64
    ("tiny", 16, 192, 16, "f64"),  # 16 pieces, halving
    ("gc200", 64, 192, 192, "f32"),  # 24 pieces, halving, two groups
    ("gc200", 16, 3000, 16, "f32"),  # 46 pieces
]


# each case as a pure sum and fused with a bias add (lowering/fuse.py), some with activations
EPILOGUES = [(case, None) for case in CASES] + [(case, "bias") for case in CASES]
EPILOGUES += [(CASES[i], activation) for i in (1, 5, 7) for activation in ("relu", "clamp")]


@pytest.mark.parametrize("case, epilogue", EPILOGUES, ids=lambda x: "x".join(map(str, x)) if isinstance(x, tuple) else str(x))
def test_later_runs_sum_in_place_with_the_bytes_of_the_copies(case, epilogue, monkeypatch):
    module = program(*case, bias=epilogue)
    inputs = special_inputs(Simulator(module).arguments)
    sim, outputs = runs(module, inputs)
    kind = partials_in_place.SumInPlace if epilogue is None else partials_in_place.FusedSumInPlace
    assert sim.elided > 0 and any(type(g) is kind for s in sim._later.steps for g in getattr(s, "groups", []))
    assert outputs[0] == outputs[1] == outputs[2]  # the checked run copies; later ones sum in place
    monkeypatch.setattr(simulator, "elide", lambda planner: 0)
    kept, with_copies = runs(module, inputs)
    assert kept.elided == 0 and with_copies[1] == outputs[1]
    result = np.frombuffer(outputs[1], inputs[0].dtype).reshape(inputs[0].shape[0], -1)
    assert np.isnan(result).any() and (epilogue == "clamp" or np.isinf(result).any())  # the specials reach the sums
    finite = np.isfinite(result)
    with np.errstate(invalid="ignore"):  # inf - inf
        expected = inputs[0].astype(np.float64) @ inputs[1].astype(np.float64)
        expected = expected if epilogue is None else expected + inputs[2]
        expected = {"bias": expected + expected, "relu": np.maximum(expected, 0), "clamp": np.clip(expected, 0, 6)}.get(epilogue, expected)
    assert np.allclose(result[finite], expected[finite], rtol=1e-4, atol=1e-4)


def test_both_orders_are_covered():
    taken = set()
    for case in CASES[:2]:
        sim = Simulator(program(*case))
        taken |= {g.halving for s in sim._later.steps for g in getattr(s, "groups", []) if isinstance(g, partials_in_place.SumInPlace)}
    assert taken == {False, True}


def test_the_copies_go_and_the_source_lives_until_the_sum():
    sim = Simulator(program("tiny", 8, 1024, 8))
    copies = [s for s in sim._later.steps if isinstance(s, Copy)]
    assert sim.elided > 0 and not any("partials" in c.dest.name for c in copies)
    checked = [s for s in sim._checked.steps if isinstance(s, Copy) and "partials" in s.dest.name]
    assert len(checked) == sim.elided


def test_a_fused_sum_runs_its_epilogue_on_the_sum():
    """A combine codelet that also adds a bias (the MLP's) runs without its sum: its epilogue
    reads the scratch (*grid, *box), read-only to it."""
    sim = Simulator(program("tiny", 8, 1024, 8, bias="relu"))
    (group,) = [g for s in sim._later.steps for g in getattr(s, "groups", []) if isinstance(g, partials_in_place.FusedSumInPlace)]
    assert sim.elided > 0 and group.summed.shape[-2:] == (1, 8) and group.kernel.arguments[0][0] == (1, 8)
    assert group.views[0][0].base is group.summed and not group.views[0][0].flags.writeable


# --- refusals, from the later plan's steps --------------------------------------------------


@pytest.fixture
def later():
    """The later plan of a matmul whose k is cut in 16 pieces, in its module's context
    (`elide` reads the codelets' IR)."""
    module, machine = program("tiny", 8, 1024, 8), load_target("tiny")
    with module.context:
        checked = Planner(module.operation, machine, "main")
        classes = tile_classes({b.name: b.tiles for b in checked.buffers.values()}, checked.writes, machine.num_tiles)
        yield Planner(module.operation, machine, "main", classes, checked)


def partial_copies(later: Planner) -> list[int]:
    return [i for i, s in enumerate(later.steps) if isinstance(s, Copy) and "partials" in s.dest.name]


def another(later: Planner, copy: Copy):
    return next(b for b in later.buffers.values() if b.dtype == copy.dest.dtype and b not in (copy.dest, copy.source))


def insert(later: Planner, at: int, step) -> None:
    later.steps.insert(at, step)
    later.release.insert(at, [])
    later.positions.insert(at, later.positions[min(at, len(later.positions) - 1)])


def test_plain_plan_elides(later):
    count, first = len(partial_copies(later)), later.steps[partial_copies(later)[0]]
    assert count > 0 and partials_in_place.elide(later) == count
    at = next(
        i
        for i, s in enumerate(later.steps)
        if isinstance(s, Execute) and any(isinstance(g, partials_in_place.SumInPlace) for g in s.groups)
    )
    assert later.last_use[first.source.name] >= later.positions[at] and first.dest.name not in later.last_use


def test_a_second_reader_keeps_the_copies(later):
    last = partial_copies(later)[-1]
    copy = later.steps[last]
    insert(later, last + 1, Copy(copy.site, copy.dest, another(later, copy), []))  # before the sum
    assert partials_in_place.elide(later) == 0


def test_a_reader_after_the_sum_keeps_the_copies(later):
    copy = later.steps[partial_copies(later)[0]]
    insert(later, len(later.steps), Copy(copy.site, copy.dest, another(later, copy), []))
    assert partials_in_place.elide(later) == 0


def test_a_result_keeps_the_copies(later):
    copy = later.steps[partial_copies(later)[0]]
    insert(later, len(later.steps), types.SimpleNamespace(buffer=copy.dest))  # a stream to the host
    assert partials_in_place.elide(later) == 0


def test_a_source_overwritten_before_the_sum_keeps_the_copies(later):
    last = partial_copies(later)[-1]
    copy = later.steps[last]
    insert(later, last + 1, Copy(copy.site, another(later, copy), copy.source, []))
    assert partials_in_place.elide(later) == 0


def test_a_source_written_after_the_sum_does_not_matter(later):
    copy = later.steps[partial_copies(later)[0]]
    insert(later, len(later.steps), Copy(copy.site, another(later, copy), copy.source, []))
    assert partials_in_place.elide(later) > 0


def test_a_sum_numpy_would_reorder_is_not_taken():
    """`fold` leaves a long-rowed sum whose grid axes do not merge to numpy's reduction, whose
    order is numpy's: refused; merged axes are summed in order; short rows by halving above 8."""
    buffer = types.SimpleNamespace(dtype=np.dtype(np.float32), elements=4096)
    merged = Grid(np.arange(6), np.arange(6), 4 * 64, (2, 3), (4, 64), 0, (3, 1))
    apart = Grid(np.arange(6), np.arange(6), 4 * 64, (2, 3), (4, 64), 0, (5, 1))
    assert partials_in_place._in_order(merged, buffer) is False
    assert partials_in_place._in_order(apart, buffer) is None
    assert partials_in_place._in_order(Grid(np.arange(6), np.arange(6), 9 * 8, (6,), (9, 8), 0, (1,)), buffer) is True
    assert partials_in_place._in_order(Grid(np.arange(6), np.arange(6), 8 * 8, (6,), (8, 8), 0, (1,)), buffer) is False


# --- the sums' order ----------------------------------------------------------------------------


def codelet_sum(x: np.ndarray) -> np.ndarray:
    """What a combine codelet computes on (points, k, run): fold over k, then + its +0.0 init."""
    reduced = fold(x, (1,), lambda a, axes: np.add.reduce(a, axis=axes, dtype=a.dtype), np.add)
    return reduced + x.dtype.type(0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [2, 3, 8, 9, 15, 16])
@pytest.mark.parametrize("length", [1, 2, 3, 16, 64])
def test_sums_are_the_codelets_bytes(dtype, k, length):
    """Runs summed from where they lie give fold's bytes with -0.0, NaN and infinities in the
    pieces, each order on the layout fold takes it for (pieces of 16: halving above 8), run by
    run (`_sum_runs`) and element by element (`_sum_elements`, over more outputs than its
    block of 512)."""
    rng = np.random.default_rng(k)
    points = 40 if length > 1 else 1100
    x = rng.standard_normal((points, k, length)).astype(dtype)
    x[0] = -0.0  # every piece -0.0: +0.0 either way, never -0.0
    x[1, ::2] = -0.0
    x[2, 0] = np.nan
    x[3, -1] = np.inf
    x[4, 0], x[4, -1] = np.inf, -np.inf
    x[5, :, :3] = 1e30
    x[5, 1:, 3:6] = -1e30
    gathered = types.SimpleNamespace(dtype=x.dtype, elements=k * length)
    halving = partials_in_place._in_order(Grid(np.arange(points), np.arange(points), k * length, (points,), (k, length), 0, (1,)), gathered)
    where = rng.permutation(points * k)  # the pieces scattered over the source
    source = np.empty((points * k, length), dtype)
    source[where] = x.reshape(points * k, length)
    starts = (where.reshape(points, k) * length).astype(np.int64)
    output = np.full(points * length, 7, dtype)
    kernel = compiled(partials_in_place._sum_runs)
    kernel(source.reshape(-1), starts, output, np.arange(points, dtype=np.int64) * length, length, halving)
    assert halving is (k > 8 and length < 64)
    assert output.tobytes() == codelet_sum(x).tobytes()
    elements = np.ascontiguousarray((starts[:, :, None] + np.arange(length)).transpose(1, 0, 2).reshape(k, -1))
    into = rng.permutation(points * length)  # outputs in any order
    by_element = compiled(partials_in_place._sum_elements)
    for table, offsets, laid in [
        (elements, np.zeros(k, np.int64), source),  # pieces anywhere: a table of every piece
        (np.arange(points * length)[None], np.arange(k) * points * length, x.transpose(1, 0, 2)),  # k apart: one row
    ]:
        output = np.full(points * length, 7, dtype)
        by_element(np.ascontiguousarray(laid).reshape(-1), table, offsets, output, into, halving)
        assert output[into].tobytes() == codelet_sum(x).reshape(-1).tobytes()


COMBINE = """func.func private @c(%arg0: tensor<3x4x{t}>) -> tensor<4x{t}> attributes {{ipu.codelet, ipu.combine = {mark}}} {{
  %cst = arith.constant {init} : {t}
  %0 = tensor.empty() : tensor<4x{t}>
  %1 = linalg.fill ins(%cst : {t}) outs(%0 : tensor<4x{t}>) -> tensor<4x{t}>
  %2 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ({out})>],
      iterator_types = ["{kind}", "parallel"]}} ins(%arg0 : tensor<3x4x{t}>) outs(%1 : tensor<4x{t}>) {{
  ^bb0(%in: {t}, %out: {t}):
    %3 = {op} %in, %out : {t}
    linalg.yield %3 : {t}
  }} -> tensor<4x{t}>
  return %2 : tensor<4x{t}>
}}"""

SUM_MARK = '{combiner = "arith.addf", epilogue = false, init = false}'


def verified(text: str) -> tuple[list[str], ir.Operation]:
    """The verifier's messages on a module of one codelet, and that codelet."""
    module = load_module("module {" + text + "}")
    return [error.message for error in verifier.verify(module.operation)], module.body.operations[0]


@pytest.mark.parametrize(
    "change, problem",
    [
        ({}, None),
        ({"init": "-0.0"}, "expects its fill to be 0.000000e+00 : f32"),
        ({"init": "1.0"}, "expects its fill to be 0.000000e+00 : f32"),
        ({"op": "arith.maximumf"}, "body to be one arith.addf"),
        ({"op": "arith.mulf"}, "body to be one arith.addf"),
        ({"kind": "parallel"}, "to reduce the leading axis"),
        ({"mark": SUM_MARK.replace("false}", "true}")}, "expects its second argument to be the init"),
        ({"mark": SUM_MARK.replace("epilogue = false", "epilogue = true")}, "expects IR after the combine"),
        ({"mark": '{combiner = "arith.addf"}'}, "expects a dictionary"),
        ({"mark": SUM_MARK.replace("arith.addf", "arith.maximumf"), "init": "0xFF800000"}, "body to be one arith.maximumf"),
    ],
)
def test_the_verifier_holds_a_combine_to_its_mark(change, problem):
    """The simulator elides copies on the mark alone (`_sum_then`): a marked codelet that is
    not the sum its mark says is rejected at load."""
    fields = {"t": "f32", "init": "0.0", "out": "d1", "kind": "reduction", "op": "arith.addf", "mark": SUM_MARK, **change}
    messages, _ = verified(COMBINE.format(**fields))
    if problem is None:
        assert messages == []
    else:
        assert len(messages) == 1 and "is marked 'ipu.combine' (a partial-sum combine) but" in messages[0] and problem in messages[0]


@pytest.mark.parametrize(
    "mark, summed",
    [
        (SUM_MARK, False),
        (SUM_MARK.replace("epilogue = false", "epilogue = true"), True),
        (SUM_MARK.replace("init = false", "init = true"), None),  # starts from the op's init, not +0.0
        (SUM_MARK.replace("arith.addf", "arith.maximumf"), None),
        (None, None),
    ],
)
def test_only_a_marked_float_sum_from_zero_is_summed_in_place(mark, summed):
    text = COMBINE.format(t="f32", init="0.0", out="d1", kind="reduction", op="arith.addf", mark=mark or "")
    module = load_module("module {" + (text if mark else text.replace(", ipu.combine = ", "")) + "}")
    with module.context:
        assert partials_in_place._sum_then(module.body.operations[0]) is summed


FUSED = """func.func private @c(%arg0: tensor<3x4xf32>) -> tensor<4xf32> attributes {{ipu.codelet, ipu.combine = {mark}}} {{
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
  %2 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
      iterator_types = ["reduction", "parallel"]}} ins(%arg0 : tensor<3x4xf32>) outs(%1 : tensor<4xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %3 = arith.addf %in, %out : f32
    linalg.yield %3 : f32
  }} -> tensor<4xf32>
  %s = {other}
  %4 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}} ins(%2, %s : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {{
  ^bb0(%in: f32, %b: f32, %out: f32):
    %5 = arith.addf %in, %b : f32
    linalg.yield %5 : f32
  }} -> tensor<4xf32>
  return %4 : tensor<4xf32>
}}"""


@pytest.mark.parametrize(
    "other, epilogue, problem",
    [
        ("arith.constant dense<1.0> : tensor<4xf32>", "true", None),
        ("arith.constant dense<1.0> : tensor<4xf32>", "false", "expects it to return the combine's value"),
        # the epilogue reads a k piece itself: compiled for one piece, it would read another
        ("tensor.extract_slice %arg0[1, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<4xf32>", "true", "read by the combine only"),
    ],
)
def test_a_sum_fused_with_an_epilogue_reading_its_sum_only(other, epilogue, problem):
    mark = SUM_MARK.replace("epilogue = false", f"epilogue = {epilogue}")
    messages, _ = verified(FUSED.format(other=other, mark=mark))
    assert messages == [] if problem is None else len(messages) == 1 and problem in messages[0]


def test_a_marked_declaration_is_reported_not_raised():
    messages, _ = verified(
        f"func.func private @c(%arg0: tensor<3x4xf32>) -> tensor<4xf32> attributes {{ipu.codelet, ipu.combine = {SUM_MARK}}}"
    )
    assert len(messages) == 1 and messages[0].endswith("but has no body")
