"""The reference after torch-mlir's LLVM was loaded before `mlir`'s: as in a script importing
`torch_mlir.fx` first, or a pytest run whose first file does. The JIT then named its library
calls from torch-mlir's table (the `memset` of a zero fill linked to `getc`), so outputs went
unzeroed, or the process died; the reference now runs such calls in a fresh process. Each
check runs in a fresh interpreter, where the import order is the test's."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch_mlir")

# A zero fill the JIT's loop-idiom pass turns into a `memset` call, then a matmul into it.
SCRIPT = """
import numpy as np
from ipu_mlir.runtime.reference import _libcall_names_interposed, run_reference

PROGRAM = '''
func.func @main(%a: tensor<8x64xf32>, %b: tensor<64x256xf32>) -> tensor<8x256xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x256xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x256xf32>) -> tensor<8x256xf32>
  %product = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x256xf32>) outs(%filled : tensor<8x256xf32>) -> tensor<8x256xf32>
  return %product : tensor<8x256xf32>
}
'''
rng = np.random.default_rng(0)
a, b = rng.standard_normal((8, 64), np.float32), rng.standard_normal((64, 256), np.float32)
print("interposed", _libcall_names_interposed())
for _ in range(3):
    (got,) = run_reference(PROGRAM, [a, b])
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)
print("ok")
"""


def _run(first_import: str) -> subprocess.CompletedProcess:
    script = f"import {first_import}\n" + textwrap.dedent(SCRIPT)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)


def test_reference_is_right_when_torch_mlir_is_loaded_first():
    result = _run("torch_mlir.ir")
    assert result.returncode == 0 and result.stdout.endswith("ok\n"), (result.returncode, result.stdout, result.stderr[-3000:])
    assert "interposed True" in result.stdout  # the order that broke the JIT is the one tested


def test_reference_runs_in_process_when_mlir_is_loaded_first():
    result = _run("mlir.ir, torch_mlir.ir")
    assert result.returncode == 0 and result.stdout.endswith("ok\n"), (result.returncode, result.stdout, result.stderr[-3000:])
    assert "interposed False" in result.stdout  # no fresh process where none is needed


# A call of a function nothing defines: the JIT cannot link it.
UNLINKED = """
import numpy as np
from ipu_mlir.runtime.reference import ReferenceRunError, run_reference

PROGRAM = '''
func.func private @undefined_anywhere(f32) -> f32
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = func.call @undefined_anywhere(%x) : (f32) -> f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
'''
try:
    run_reference(PROGRAM, [np.ones(4, np.float32)])
except ReferenceRunError as error:
    print(error)
"""


def test_a_link_error_in_the_fresh_process_is_the_one_in_process():
    script = "import torch_mlir.ir\n" + textwrap.dedent(UNLINKED)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == "error: the JIT cannot compile or link @main: Unknown function main (unresolved symbols are on stderr)\n"
    assert "Symbols not found: [ undefined_anywhere ]" in result.stderr
