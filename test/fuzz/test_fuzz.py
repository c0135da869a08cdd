"""The differential fuzzer's share of `make test`: a few dozen seeds (`make fuzz` runs thousands).

Each seed's program (fuzz_gen.py) is compiled, simulated twice and checked against the
ExecutionEngine (fuzz_check.py). A refusal by the compiler (a clean `IpuError`) passes here
when known_failures.KNOWN_REFUSALS lists its kind with a reason; `make fuzz` counts refusals
by reason. Seeds
in known_failures.py are strict expected failures: fixing the bug turns them red until they are
taken off the list. A failing seed leaves its reproducer in build/fuzz/seed-<N>.mlir.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fuzz_check import Outcome, check, check_file, compare, program_inputs
from fuzz_gen import TARGETS, TYPES, generate
from known_failures import KNOWN, KNOWN_FILES
from run_fuzz import known_refusal

from ipu_mlir.frontends import api

REPO = Path(__file__).resolve().parents[2]
REPRODUCERS = REPO / "build" / "fuzz"
SEEDS = 80  # about 45 s; make fuzz runs thousands


def _params():
    for seed in sorted(set(range(SEEDS)) | set(KNOWN)):
        marks = [pytest.mark.xfail(reason=KNOWN[seed], strict=True)] if seed in KNOWN else []
        yield pytest.param(seed, marks=marks, id=f"seed{seed}")


@pytest.mark.parametrize("seed", list(_params()))
def test_seed(seed: int) -> None:
    outcome = check(seed, REPRODUCERS)
    assert outcome.status in ("ok", "refused"), _report(outcome)
    assert outcome.status == "ok" or known_refusal(outcome.reason), f"a refusal known_failures.py does not list: {_report(outcome)}"


def _regressions():
    for path in sorted((Path(__file__).parent / "regressions").glob("*.mlir")):
        reason = KNOWN_FILES.get(path.stem)
        yield pytest.param(path, id=path.stem, marks=[pytest.mark.xfail(reason=reason, strict=True)] if reason else [])


@pytest.mark.parametrize("path", list(_regressions()))
def test_regression(path: Path) -> None:
    """Minimal reproducers of bugs the fuzzer found: fixed since, or listed in KNOWN_FILES."""
    outcome = check_file(path)
    assert outcome.status == "ok", _report(outcome)


def _report(outcome: Outcome) -> str:
    return f"seed {outcome.seed}: {outcome.status}: {outcome.reason}\nreproducer: {outcome.reproducer}\n{outcome.detail[-3000:]}"


def test_generator_is_deterministic_and_well_formed() -> None:
    for seed in range(100):
        program = generate(seed)
        assert program.text == generate(seed).text
        api.load_module(program.text)  # parses and verifies
        if program.dtype == "f16":
            api.load_module(program.f32_twin())


def test_comparison_can_fail() -> None:
    """The comparison is not vacuous: one wrong integer, one float beyond the tolerance, a NaN."""
    for seed in range(50):
        program = generate(seed)
        if program.dtype == "i32":
            break
    want = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = want.copy()
    assert compare(got, want, program) is None
    got[2, 1] += 1
    assert "1 of 12 elements differ" in compare(got, want, program)
    program.dtype = "f32"
    want = np.linspace(-1, 1, 12, dtype=np.float32)
    assert compare(want * (1 + 5e-5), want, program) is None
    assert "max abs error" in compare(want + 2e-4, want, program)
    nan = want.copy()
    nan[3] = np.nan
    assert "NaN" in compare(nan, want, program)


def test_random_inputs_of_rank_0_are_arrays() -> None:
    """Found by the fuzzer (seed 16): a rank-0 f16/f32 argument got a numpy scalar, which the
    simulator refuses ("expected a numpy array (scalar float16)")."""
    inputs = api.random_inputs([((), np.dtype(np.float16)), ((), np.dtype(np.float32)), ((), np.dtype(np.int8))], seed=0)
    assert all(isinstance(x, np.ndarray) and x.shape == () for x in inputs)


def test_reference_f16_promotion_keeps_the_programs_rounding() -> None:
    """Fuzz seeds 3861, 4007, 4169, 4278: the reference's f16_in_f32 promotion (the default)
    dropped a program's own arith.truncf f32 -> f16; it now keeps the rounding."""
    from ipu_mlir.runtime import reference

    text = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = arith.truncf %x : tensor<4xf32> to tensor<4xf16>
  %y = arith.extf %h : tensor<4xf16> to tensor<4xf32>
  return %y : tensor<4xf32>
}"""
    x = np.array([0.8225, 1 / 3, 1e-3, 1000.1], dtype=np.float32)
    rounded = x.astype(np.float16).astype(np.float32)
    assert np.array_equal(reference.run_reference(text, [x], f16_in_f32=False)[0], rounded)  # the program's meaning
    assert np.array_equal(reference.run_reference(text, [x])[0], rounded)


def test_reference_sees_a_switch_result_alias_its_input() -> None:
    """fuzz_control seed 1662: MLIR 22's one-shot-bufferize wrote a later `linalg.fill outs(%a)`
    into %a's buffer although the switch's result, returned, is %a (its default case)."""
    from ipu_mlir.runtime import reference

    a = np.array([-5, 1, 7, -2, 0, 9, -1, 4], dtype=np.int32)
    path = Path(__file__).parent / "regressions" / "switch-result-aliases-written-input.mlir"
    switched, filled = reference.run_reference(path, [a, np.array(2, dtype=np.int32)])
    assert switched.tolist() == a.tolist() and filled.tolist() == [3] * 8


# Every family the generator writes, by the prefix of the kinds it records.
FAMILIES = (
    "matmul", "batch_matmul", "matvec", "vecmat", "dot", "conv_2d_nchw_fchw", "conv_2d_nhwc_hwcf", "conv_2d_nhwc_fhwc",
    "conv_2d_ngchw_gfchw", "conv_2d_ngchw_fgchw", "depthwise_conv_2d_nhwc_hwcm", "depthwise_conv_2d_nchw_chw", "pooling_",
    "padded-", "transpose", "broadcast", "linalg.reduce", "linalg.", "tensor-", "cast-", "generic-elementwise",
    "generic-reduction", "generic-two-results", "generic-reads-init", "generic-linalg.index", "reduction-acc-x",
    "reduction-x-acc", "reduction-div", "window-unfold", "window-map", "window-slices", "arg-max", "arg-min", "i1-compare",
    "i1-select", "i1-reduce", "i1-logic", "i1-argument", "gather-rows", "gather-computed", "tm_tensor.scatter-rows",
    "tm_tensor.scatter-points", "tm_tensor.scan", "tm_tensor.sort", "tm_tensor.sort-topk", "tosa.", "strided-extract_slice",
    "strided-insert_slice", "extract_slice", "insert_slice", "insert_slices", "pad", "expand_shape", "collapse_shape", "concat",
    "dense-constant", "scf.for-0", "scf.for-5", "scalar-if", "scalar-while", "scalar-switch", "scalar-insert",
    "scalar-from_elements", "result-twice", "result-argument", "unused-argument", "big",
)  # fmt: skip


def test_generator_covers_every_family_type_and_target() -> None:
    """The first 400 seeds (generated only, about 2 s) hold every family, element type and
    target: a maker dropped from the mix, or never reached, fails here."""
    programs = [generate(seed) for seed in range(400)]
    kinds = {kind for p in programs for kind in p.kinds}
    assert [f for f in FAMILIES if not any(k.startswith(f) for k in kinds)] == []
    assert {p.dtype for p in programs} == set(TYPES)
    assert {p.target for p in programs} == set(TARGETS)
    assert any("i1>" in p.text for p in programs) and any("xi64>" in p.text for p in programs)


def test_index_arguments_are_fed_in_range() -> None:
    """A gather's coordinates come from their recorded range (an out-of-range one aborts the
    ExecutionEngine): both sides get those arrays."""
    seen = 0
    for seed in range(120):
        program = generate(seed)
        if not program.index_ranges:
            continue
        module = api.load_module(program.text)
        function = next(op for op in module.body.operations if op.operation.name == "func.func").operation
        arguments = [
            (tuple(a.type.shape), np.dtype(np.int64) if "i64" in str(a.type) else np.float32)
            for a in function.regions[0].blocks[0].arguments
        ]
        inputs = program_inputs(program, arguments)
        for position, (low, high) in program.index_ranges.items():
            assert (
                inputs[position].dtype == np.int64 and inputs[position].min(initial=low) >= low and inputs[position].max(initial=low) < high
            )
            seen += 1
    assert seen >= 10
