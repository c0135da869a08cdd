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


NAN_TO_INT = """func.func @main(%x: tensor<4xf32>) -> tensor<4xi32> {
  %c = arith.constant dense<[0x7FC00000, 0x7F800000, 1.0e10, -2.5]> : tensor<4xf32>
  %a = arith.addf %x, %c : tensor<4xf32>
  %r = arith.fptosi %a : tensor<4xf32> to tensor<4xi32>
  return %r : tensor<4xi32>
}
"""

SHIFT_PAST_THE_WIDTH = """func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {
  %s = arith.constant dense<[0, 31, 32, 40]> : tensor<4xi32>
  %r = arith.shli %x, %s : tensor<4xi32>
  return %r : tensor<4xi32>
}
"""


def test_a_poison_result_of_the_reference_names_the_op_that_makes_it(tmp_path):
    """LLVM folds fptosi of NaN to poison and stores nothing: the reference's two runs differ.
    That is not only a `tensor.empty` returned: the message says which ops may make poison."""
    source = tmp_path / "nan.mlir"
    source.write_text(NAN_TO_INT)
    done = run(source, "--target", "tiny", "--random-inputs", 0, "--check", "--output-dir", tmp_path / "out")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith(
        ", or it is poison, which MLIR makes of a float-to-int conversion of NaN, infinity or a value out of range "
        "(fptosi, fptoui: poison)\n"
    )
    assert not (tmp_path / "out").exists()


def test_a_failed_check_names_what_mlir_leaves_undefined(tmp_path):
    """A shift by 40 of an i32 is poison: the simulator's 0 and the JIT's value both stand, and
    the failed check says so rather than blame the simulator."""
    source = tmp_path / "shift.mlir"
    source.write_text(SHIFT_PAST_THE_WIDTH)
    np.save(tmp_path / "x.npy", np.array([1, 2, -3, -4], dtype=np.int32))
    done = run(source, "--target", "tiny", "--input", tmp_path / "x.npy", "--check")
    assert done.returncode == 1 and "FAILED" in done.stdout
    assert (
        "note: where the program does a shift by the bit width or more (shli, shrsi, shrui: poison), MLIR defines no result: "
        "the simulator's and the ExecutionEngine's may differ\n"
    ) in done.stdout
    relu = run("-", "--target", "tiny", "--random-inputs", 0, "--check", stdin=REMAINDER.replace("remui", "addi"))
    assert relu.returncode == 0 and "note:" not in relu.stdout


def test_a_graph_of_no_vertices_is_an_error_not_a_crash(tmp_path, capsys):
    """A program whose results are its inputs compiles to no vertices: ipu-vis said
    'internal error: ValueError: zero-size array to reduction operation maximum'."""
    from ipu_mlir.tools import ipu_vis

    source = tmp_path / "identity.mlir"
    source.write_text("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n")
    code = ipu_vis.main(["graph", str(source), "-o", str(tmp_path / "graph.png"), "--target", "tiny"])
    err = capsys.readouterr().err
    assert code == 1
    assert (
        err.splitlines()[-1] == "ipu-vis: error: nothing to draw: the compiled program has no vertices (it computes nothing on the device)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["identity.mlir"]


def test_a_big_endian_npy_input_is_read_as_its_numbers(tmp_path, capsys):
    """A `>f4` .npy holds float32 numbers in the other byte order: ipu-run refused it as
    'expected 3x4 float32, got 3x4 >f4'."""
    from ipu_mlir.tools import ipu_run

    source = tmp_path / "scale.mlir"
    source.write_text(
        "func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {\n  %r = arith.addf %x, %x : tensor<3x4xf32>\n"
        "  return %r : tensor<3x4xf32>\n}\n"
    )
    x = np.arange(12, dtype=">f4").reshape(3, 4)
    np.save(tmp_path / "x.npy", x)
    code = ipu_run.main(
        [str(source), "--target", "tiny", "--input", str(tmp_path / "x.npy"), "--check", "--output-dir", str(tmp_path / "out")]
    )
    out, err = capsys.readouterr()
    assert (code, err) == (0, "") and "check output 0: max abs error 0," in out
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "output0.npy"), 2 * x.astype(np.float32))


def test_ipu_vis_draws_a_program_from_stdin(tmp_path):
    """`ipu-vis graph -` reads stdin as ipu-run does; it answered "cannot read '-'"."""
    vis = Path(sys.executable).parent / "ipu-vis"
    program = REMAINDER.replace("remui", "addi")
    done = subprocess.run(
        [vis, "graph", "-", "-o", tmp_path / "graph.svg", "--target", "tiny"], input=program, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "stdin  ·  1 vertices" in (tmp_path / "graph.svg").read_text()
    bad = subprocess.run(
        [vis, "graph", "-", "-o", tmp_path / "bad.svg"],
        input=program.replace("4xi32", "?xi32"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 1 and bad.stderr.splitlines()[-1].startswith("<stdin>:")


def test_bytecode_input(tmp_path, capsys):
    """ipu-compile took an MLIR bytecode file for an empty one ("nothing to compile: 'x.mlirbc'
    is empty"): it compiles it, as ipu-opt reads it. ipu-run, which reads text, says what it is."""
    from ipu_mlir.tools import ipu_compile, ipu_opt, ipu_run

    source = tmp_path / "add.mlir"
    source.write_text(REMAINDER.replace("remui", "addi"))
    bytecode = tmp_path / "add.mlirbc"
    assert ipu_opt.main([str(source), "--emit-bytecode", "-o", str(bytecode)]) == 0
    assert ipu_compile.main([str(bytecode), "--target", "tiny", "-o", str(tmp_path / "add.l3.mlir")]) == 0
    assert "ipu.program" in (tmp_path / "add.l3.mlir").read_text()
    capsys.readouterr()
    assert ipu_run.main([str(bytecode), "--random-inputs", "0"]) == 1
    assert capsys.readouterr() == (
        "",
        f"ipu-run: error: cannot read '{bytecode}': it is MLIR bytecode; give it as text (ipu-opt {bytecode} -o FILE.mlir writes it so)\n",
    )
