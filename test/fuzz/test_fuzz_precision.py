"""The precision fuzzer's share of `make test` (fuzz_precision.py): bf16 and FP8 programs on the
simulator against the reference, a few dozen seeds."""

from __future__ import annotations

import pytest
from fuzz_precision import NARROW_TYPES, check_narrow, generate_narrow

from ipu_mlir.frontends import api

SEEDS = 24  # about 15 s


@pytest.mark.parametrize("seed", range(SEEDS))
def test_narrow_seed(seed: int) -> None:
    problem = check_narrow(seed)
    assert problem is None, problem


def test_generator_covers_every_type_and_step() -> None:
    programs = [generate_narrow(seed) for seed in range(60)]
    assert all(program.text == generate_narrow(program.seed).text for program in programs[:10])
    for program in programs[:10]:
        api.load_module(program.text)  # parses and verifies
    assert {program.dtype for program in programs} == set(NARROW_TYPES)
    kinds = {kind for program in programs for kind in program.kinds}
    assert kinds == {"elementwise", "matmul-into-f32", "matmul-into-narrow", "dequantized-matmul", "quantize", "widened-sum"}
