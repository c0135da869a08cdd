"""Loading verifies a program once: a program compiled in this process was checked by the
default pipeline's ipu-verify for its target, so loading it does not check it again; a
program read from text is checked, and a hand-edited one refused at the edited op."""

from __future__ import annotations

import re

import pytest

from ipu_mlir.dialects import verifier
from ipu_mlir.frontends import api
from ipu_mlir.target.diagnostics import IpuError

MATMUL = """
module attributes {ipu.target = "tiny"} {
  func.func @main(%x: tensor<16x32xf32>, %w: tensor<32x32xf32>) -> tensor<16x32xf32> {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<16x32xf32>
    %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x32xf32>) -> tensor<16x32xf32>
    %m = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x32xf32>) outs(%fill : tensor<16x32xf32>) -> tensor<16x32xf32>
    return %m : tensor<16x32xf32>
  }
}
"""


@pytest.fixture
def verified(monkeypatch) -> list[int]:
    """How many times the verifier ran."""
    runs = []
    verify = verifier.verify

    def counted(*args, **kwargs):
        runs.append(1)
        return verify(*args, **kwargs)

    monkeypatch.setattr(verifier, "verify", counted)
    return runs


def test_a_program_compiled_here_is_verified_once(verified):
    api.load_simulator(MATMUL)
    assert len(verified) == 1  # the pipeline's ipu-verify, not loading again


def test_a_program_read_from_text_is_verified_and_a_hand_edit_refused(verified):
    program = str(api.compile_to_program(api.load_module(MATMUL), None))
    verified.clear()
    api.load_simulator(program)
    assert len(verified) == 1
    # one copy's size edited past its destination's capacity
    edited, count = re.subn(r"size = (\d+) : i64", "size = 100000 : i64", program, count=1)
    assert count == 1
    line = program[: re.search(r"size = (\d+) : i64", program).start()].count("\n") + 1
    with pytest.raises(IpuError, match="'ipu.copy' op writes") as error:
        api.load_simulator(edited)
    assert error.value.location is not None and f":{line}:" in str(error.value)
