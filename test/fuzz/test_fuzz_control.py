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


def _params():
    for seed in sorted(set(range(SEEDS)) | set(KNOWN_CONTROL)):
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
