"""Programs at the edge of what MLIR defines, through the tools: where MLIR leaves a result
undefined (a division by zero, a shift past the width, a float-to-int conversion of NaN), the
tools refuse with one clear line, exit status 1 and no output written, rather than crash or
report a wrong number; and inputs from stdin, as the other tools take them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

IPU_RUN = Path(sys.executable).parent / "ipu-run"

REMAINDER = """func.func @main(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %r = arith.remui %x, %y : tensor<4xi32>
  return %r : tensor<4xi32>
}
"""


def run(*argv, stdin: str | None = None) -> subprocess.CompletedProcess:
    """ipu-run in its own process: a signal that kills the reference's JIT must not kill pytest."""
    return subprocess.run([IPU_RUN, *map(str, argv)], input=stdin, capture_output=True, text=True, timeout=300, check=False)


def test_division_by_zero_in_the_reference_is_a_clear_error(tmp_path):
    """x86 traps an integer division by zero (SIGFPE): the ExecutionEngine's process died with
    no message (exit 136) before the reference ran apart."""
    source = tmp_path / "remainder.mlir"
    source.write_text(REMAINDER)
    np.save(tmp_path / "x.npy", np.arange(1, 5, dtype=np.int32))
    np.save(tmp_path / "y.npy", np.array([1, 0, 2, 3], dtype=np.int32))
    out_dir = tmp_path / "out"
    done = run(source, "--target", "tiny", "--input", tmp_path / "x.npy", tmp_path / "y.npy", "--check", "--output-dir", out_dir)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "ipu-run: error: the ExecutionEngine stopped @main on SIGFPE: an integer division by zero or INT_MIN / -1, "
        "undefined behaviour in MLIR: there is no reference for these inputs\n"
    )
    assert not out_dir.exists()
