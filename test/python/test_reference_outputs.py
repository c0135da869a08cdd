"""`--check` works on every input the compiler takes: TOSA goes through upstream tosa-to-linalg
(`ipu-import-tosa`, upstream passes only) before the ExecutionEngine runs it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ipu_mlir.frontends import api
from ipu_mlir.tools import ipu_run

TOSA = Path(__file__).resolve().parents[1] / "lit" / "convert-to-ipu" / "tosa.mlir"


@pytest.mark.parametrize("entry", ["cnn", "depthwise", "matmul_i8", "data_movement"])
def test_tosa_input_checks_against_the_reference(entry, capsys):
    code = ipu_run.main([str(TOSA), "--entry", entry, "--target", "tiny", "--random-inputs", "0", "--check"])
    out = capsys.readouterr().out
    assert code == 0 and "check output 0: max abs error" in out and "FAILED" not in out


def test_reference_outputs_on_tosa_match_a_plain_numpy_program():
    text = """
    func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %0 = tosa.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      return %0 : tensor<4x8xf32>
    }"""
    a, b = np.arange(32, dtype=np.float32).reshape(4, 8), np.full((4, 8), 0.5, np.float32)
    (out,) = api.reference_outputs(text, [a, b], "main")
    np.testing.assert_array_equal(out, a + b)
