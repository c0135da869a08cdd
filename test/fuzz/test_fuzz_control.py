"""The control-flow fuzzer's share of `make test`: a few seeds of fuzz_control.py (`make
fuzz-control` runs thousands) and of the special-value sweep fuzz_special.py (`make
fuzz-special` runs all of it), checked as test_fuzz.py checks fuzz_gen.py's."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_check import check
from fuzz_control import generate
from known_failures import KNOWN_CONTROL
from run_fuzz import known_refusal
from test_fuzz import _report

from ipu_mlir.frontends import api

REPRODUCERS = Path(__file__).resolve().parents[2] / "build" / "fuzz"
SEEDS = 6  # about 12 s unloaded
# Seeds that once failed. 2370: 1e-40 through truncf to bf16, then log and isinf: the reference
# flushed the bf16 subnormal 9.18e-41 (IEEE's rounding, PyTorch's and ml_dtypes') to 0 (LLVM's
# fptrunc to bfloat on an AVX512-BF16 host); runtime/reference.py now expands it exactly.
FIXED = (2370,)


def _params():
    for seed in sorted(set(range(SEEDS)) | set(FIXED) | set(KNOWN_CONTROL)):
        marks = [pytest.mark.xfail(reason=KNOWN_CONTROL[seed], strict=True)] if seed in KNOWN_CONTROL else []
        yield pytest.param(seed, marks=marks, id=f"seed{seed}")


@pytest.mark.parametrize("seed", list(_params()))
def test_seed(seed: int) -> None:
    outcome = check(seed, REPRODUCERS, "control")
    assert outcome.status in ("ok", "refused"), _report(outcome)
    assert outcome.status == "ok" or known_refusal(outcome.reason), f"a refusal known_failures.py does not list: {_report(outcome)}"


@pytest.mark.parametrize("seed", [5, 121, 165])  # f32 maximumf, f64 isnormal, i32 ceildivui
def test_special_values(seed: int) -> None:
    outcome = check(seed, REPRODUCERS, "special")
    assert outcome.status == "ok", _report(outcome)


def test_generator_is_deterministic_and_covers_its_families() -> None:
    """The first 150 seeds (generated only) are well-formed and hold every family."""
    kinds = set()
    for seed in range(150):
        program = generate(seed)
        assert program.text == generate(seed).text
        if seed < 30:
            api.load_module(program.text)
        kinds.update(program.kinds)
    families = ("while-absmax", "while-count", "while-sum", "if-data", "switch-", "for-scalar-", "scalar-chain-",
                "gather-wrapped", "gather-clamped", "scatter-duplicates-", "pack-padded", "unpack", "math-")  # fmt: skip
    assert [f for f in families if not any(k.startswith(f) for k in kinds)] == []


FP8_PROGRAM = """#id = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<@N@x@T@>) -> (tensor<@N@xf32>, tensor<@N@xf32>, tensor<@N@xf32>) {
  %e = tensor.empty() : tensor<@N@xf32>
  %r:3 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]} ins(%x : tensor<@N@x@T@>)
      outs(%e, %e, %e : tensor<@N@xf32>, tensor<@N@xf32>, tensor<@N@xf32>) {
  ^bb0(%a: @T@, %o0: f32, %o1: f32, %o2: f32):
    %h0 = arith.truncf %a : @T@ to f8E4M3FN
    %y0 = arith.extf %h0 : f8E4M3FN to f32
    %h1 = arith.truncf %a : @T@ to f8E5M2
    %y1 = arith.extf %h1 : f8E5M2 to f32
    %h2 = arith.truncf %a : @T@ to bf16
    %y2 = arith.extf %h2 : bf16 to f32
    linalg.yield %y0, %y1, %y2 : f32, f32, f32
  } -> (tensor<@N@xf32>, tensor<@N@xf32>, tensor<@N@xf32>)
  return %r#0, %r#1, %r#2 : tensor<@N@xf32>, tensor<@N@xf32>, tensor<@N@xf32>
}"""


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_fp8_and_bf16_rounding_of_special_values(dtype: str) -> None:
    """The ExecutionEngine cannot lower FP8 (MLIR 22), so ml_dtypes' one conversion is the
    reference here: FP8 (E4M3FN: overflow to NaN; E5M2: to inf) and bf16 rounding of 0, -0,
    inf, NaN, denormals, ties, values just past the largest finite, random values over the
    formats' ranges. The simulator's types are ml_dtypes' too: what this checks is the path a
    truncf takes (one rounding; through f16 first, as a cast might, it goes red)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    wide = np.dtype(np.float32 if dtype == "f32" else np.float64)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 448.0, 464.0, 465.0, 57344.0, 61439.0, 61440.0, 3e38,
               0.0078125, 2.0**-9, 2.0**-10 * 3, 1.0 + 2.0**-8, 1.0 + 2.0**-7 * 3, 240.5, -0.001953125, 1e5]  # fmt: skip
    random = np.random.default_rng(0).standard_normal(42) * np.logspace(-10, 5, 42)
    x = np.concatenate([np.array(special), random]).astype(wide)
    text = FP8_PROGRAM.replace("@N@", str(len(x))).replace("@T@", dtype)
    got = api.load_simulator(api.load_module(text), entry="main").run([x])
    for result, narrow in zip(got, (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.bfloat16)):
        want = x.astype(narrow).astype(np.float32)
        same = (result == want) | (np.isnan(result) & np.isnan(want))
        assert same.all(), f"{narrow.__name__}: at {x[~same]} got {result[~same]}, ml_dtypes {want[~same]}"
        assert np.array_equal(np.signbit(result[result == 0]), np.signbit(want[result == 0]))
