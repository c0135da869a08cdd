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


def test_program_from_stdin_runs_and_checks(tmp_path):
    """`-` reads the program from stdin, as ipu-compile and ipu-opt do; --check parses the same text."""
    np.save(tmp_path / "x.npy", np.arange(1, 5, dtype=np.int32))
    np.save(tmp_path / "y.npy", np.array([3, 1, 2, 3], dtype=np.int32))
    done = run(
        "-", "--target", "tiny", "--input", tmp_path / "x.npy", tmp_path / "y.npy", "--check", "--output-dir", tmp_path, stdin=REMAINDER
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert "check output 0: max abs error 0, max rel error 0 (exact): ok" in done.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "output0.npy"), [1, 0, 1, 1])


def test_errors_in_a_program_from_stdin_name_stdin():
    bad = REMAINDER.replace("4xi32", "?xi32")
    done = run("-", "--random-inputs", 0, stdin=bad)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("<stdin>:1:1: error: 'func.func' is not supported by ipu-convert-to-ipu: argument #0 has dynamic shapes")
    assert all(line.startswith("<stdin>:") for line in done.stderr.splitlines())
    assert run("-", "--random-inputs", 0, stdin="// nothing").stderr == "ipu-run: error: '<stdin>' is empty: no function to run\n"
