"""Serial splits (lowering/serialize.py) end to end: contractions that no cut fits in the
planner's memory budget are computed in pieces, scheduled, simulated and checked against
numpy, like the same op planned in one pass with a larger budget."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.frontends.api import run
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import STEPS

CASES = Path(__file__).resolve().parents[1] / "lit" / "plan" / "serial-split.mlir"


def compile_with_budget(text: str, fraction: float) -> ir.Module:
    steps = [f"ipu-plan{{memory-fraction={fraction}}}" if step == "ipu-plan" else step for step in STEPS]
    context = make_context()
    module = ir.Module.parse(text, context)
    with context:
        build_pass_manager("builtin.module(" + ",".join(steps) + ")", context).run(module.operation)
    return module


def conv_nchw(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    return np.einsum("nchwij,fcij->nfhw", windows, w.astype(np.float64))


@pytest.mark.parametrize("index", [0, 1])
def test_split_contractions_match_numpy(index: int) -> None:
    text = CASES.read_text().split("\n// -----\n")[index]
    module = compile_with_budget(text, 0.1)
    rng = np.random.default_rng(index)
    if index == 0:
        inputs = [rng.standard_normal((64, 96), dtype=np.float32), rng.standard_normal((96, 128), dtype=np.float32)]
        expected = inputs[0].astype(np.float64) @ inputs[1]
    else:
        inputs = [rng.standard_normal((4, 8, 16, 16), dtype=np.float32), rng.standard_normal((32, 8, 3, 3), dtype=np.float32)]
        expected = conv_nchw(*inputs)
    entry = ("matmul_columns", "conv_channels")[index]
    (result,), profile = run(module, inputs, entry=entry)
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    # Six pieces, each computed in its own superstep(s): more supersteps than one pass needs.
    (one_pass,), one_pass_profile = run(compile_with_budget(text, 0.6), inputs, entry=entry)
    np.testing.assert_allclose(one_pass, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    assert profile.supersteps > one_pass_profile.supersteps


def test_too_small_for_any_piece_is_a_located_error() -> None:
    text = CASES.read_text().split("\n// -----\n")[0]
    with pytest.raises(ir.MLIRError, match="'ipu.matmul' op does not fit in 655 bytes per tile however it is cut, even computed serially"):
        compile_with_budget(text, 0.01)


GROUPED = Path(__file__).resolve().parents[1] / "lit" / "plan" / "serial-split-groups.mlir"


@pytest.mark.parametrize(
    "index, x_shape, w_shape, groups", [(0, (1, 32, 32, 32), (32, 1, 3, 3), 32), (1, (1, 16, 32, 32), (32, 4, 3, 3), 4)]
)
def test_split_grouped_convs_match_numpy(index: int, x_shape, w_shape, groups: int) -> None:
    """One image: the pieces are whole groups (depthwise: 4 pieces of 8 groups; 4 groups: 4
    ordinary convolutions)."""
    text = GROUPED.read_text().split("\n// -----\n")[index]
    module = compile_with_budget(text, 0.1)
    rng = np.random.default_rng(index)
    x, w = rng.standard_normal(x_shape, dtype=np.float32), rng.standard_normal(w_shape, dtype=np.float32)
    cg, fg = x_shape[1] // groups, w_shape[0] // groups
    expected = np.concatenate([conv_nchw(x[:, g * cg : (g + 1) * cg], w[g * fg : (g + 1) * fg]) for g in range(groups)], axis=1)
    (result,), profile = run(module, [x, w], entry=("depthwise", "grouped")[index])
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    (one_pass,), one_pass_profile = run(compile_with_budget(text, 0.6), [x, w], entry=("depthwise", "grouped")[index])
    assert profile.supersteps > one_pass_profile.supersteps
