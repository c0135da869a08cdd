"""Odd input to ipu-opt, ipu-compile and ipu-run: each gives one clear error (file:line:col
when it is about a place in the program, `<tool>: error: ...` otherwise), exit status 1, no
traceback and nothing written; or, where the input is fine, the right result.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ipu_mlir.target import builtin_targets
from ipu_mlir.tools import ipu_compile, ipu_opt, ipu_run

BINARY = bytes(range(256)) * 4  # not UTF-8 from byte 0x80 on

RELU = """module attributes {ipu.target = "tiny"} {
  func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
    %zero = arith.constant dense<0.0> : tensor<64xf32>
    %r = arith.maximumf %x, %zero : tensor<64xf32>
    return %r : tensor<64xf32>
  }
}
"""

SELF_CALL = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = call @main(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

MUTUAL_CALLS = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

ZERO_SIZE = """func.func @main(%x: tensor<0x4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %y, %y : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

RANK_0 = """func.func @main(%s: tensor<f32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %b = linalg.broadcast ins(%s : tensor<f32>) outs(%e : tensor<4xf32>) dimensions = [0]
  %r = arith.mulf %b, %y : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

HUGE = """func.func @main(%x: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  %r = arith.addf %x, %x : tensor<4294967296x4294967296xf32>
  return %r : tensor<4294967296x4294967296xf32>
}
"""


def call(capsys, main, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def files(directory: Path) -> list[str]:
    """Everything under `directory`, hidden temporaries included."""
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


@pytest.fixture
def relu(tmp_path: Path) -> Path:
    path = tmp_path / "relu.mlir"
    path.write_text(RELU)
    return path


# --- input that is not a program ----------------------------------------------------------------


@pytest.mark.parametrize("content", ["", "\n  \n", "// only a comment\n"])
def test_compile_of_nothing_is_an_error(tmp_path, capsys, content):
    source = tmp_path / "empty.mlir"
    source.write_text(content)
    code, out, err = call(capsys, ipu_compile.main, source, "-o", tmp_path / "out.mlir")
    assert (code, out, err) == (1, "", f"ipu-compile: error: nothing to compile: '{source}' is empty\n")
    assert files(tmp_path) == ["empty.mlir"]


def test_compile_of_nothing_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(""))
    assert call(capsys, ipu_compile.main, "-") == (1, "", "ipu-compile: error: nothing to compile: '<stdin>' is empty\n")


def test_opt_of_nothing_prints_an_empty_module_like_mlir_opt(tmp_path, capsys):
    (tmp_path / "empty.mlir").write_text("")
    assert call(capsys, ipu_opt.main, tmp_path / "empty.mlir") == (0, "module {\n}\n", "")


def test_run_of_nothing_says_the_file_is_empty(tmp_path, capsys):
    (tmp_path / "empty.mlir").write_text("")
    code, out, err = call(capsys, ipu_run.main, tmp_path / "empty.mlir", "--random-inputs", 0)
    assert (code, out, err) == (1, "", f"ipu-run: error: '{tmp_path / 'empty.mlir'}' is empty: no function to run\n")


@pytest.mark.parametrize(
    ("main", "message"),
    [
        (ipu_opt.main, "ipu-opt: error: cannot open '{}': not UTF-8 text (invalid start byte)"),
        (ipu_compile.main, "ipu-compile: error: cannot open '{}': not UTF-8 text (invalid start byte)"),
        (ipu_run.main, "ipu-run: error: cannot read '{}': not UTF-8 text (invalid start byte)"),
    ],
)
def test_binary_input_is_not_utf8_text(tmp_path, capsys, main, message):
    source = tmp_path / "binary.mlir"
    source.write_bytes(BINARY)
    assert call(capsys, main, source) == (1, "", message.format(source) + "\n")


@pytest.mark.parametrize(
    ("main", "message"),
    [
        (ipu_opt.main, "ipu-opt: error: cannot open '{}': Is a directory"),
        (ipu_compile.main, "ipu-compile: error: cannot open '{}': Is a directory"),
        (ipu_run.main, "ipu-run: error: cannot read '{}': Is a directory"),
    ],
)
def test_directory_as_input(tmp_path, capsys, main, message):
    assert call(capsys, main, tmp_path) == (1, "", message.format(tmp_path) + "\n")


@pytest.mark.parametrize(("main", "prog"), [(ipu_opt.main, "ipu-opt"), (ipu_compile.main, "ipu-compile"), (ipu_run.main, "ipu-run")])
def test_unknown_option_exits_1_with_one_line(relu, capsys, main, prog):
    assert call(capsys, main, relu, "--frobnicate") == (1, "", f"{prog}: error: unrecognized arguments: --frobnicate\n")


def test_compile_errors_name_ipu_compile(tmp_path, capsys):
    code, out, err = call(capsys, ipu_compile.main, tmp_path / "missing.mlir")
    assert (code, out, err) == (1, "", f"ipu-compile: error: cannot open '{tmp_path / 'missing.mlir'}': No such file or directory\n")


def test_compile_of_a_file_named_like_a_flag(tmp_path, capsys, monkeypatch):
    (tmp_path / "-relu.mlir").write_text(RELU)
    monkeypatch.chdir(tmp_path)
    code, out, err = call(capsys, ipu_compile.main, "--", "-relu.mlir")
    assert (code, err) == (0, "") and "ipu.program" in out


# --- the command line's own errors: unlocated, before anything is compiled or written ----------


def test_unknown_target_is_a_tool_error(relu, tmp_path, capsys):
    message = f"unknown target 'gc9'; built-in targets: {', '.join(builtin_targets())} (or give the path of a .toml target file)"
    assert call(capsys, ipu_compile.main, relu, "--target", "gc9") == (1, "", f"ipu-compile: error: {message}\n")
    assert call(capsys, ipu_run.main, relu, "--target", "gc9", "--random-inputs", 0) == (1, "", f"ipu-run: error: {message}\n")


def test_non_utf8_target_file_is_a_tool_error(relu, tmp_path, capsys):
    target = tmp_path / "latin1.toml"
    target.write_bytes(b'name = "caf\xe9"\n')
    message = f"{target}: invalid TOML: not UTF-8 text (byte 0xe9 at line 1, column 12)"
    assert call(capsys, ipu_compile.main, relu, "--target", target) == (1, "", f"ipu-compile: error: {message}\n")
    assert call(capsys, ipu_run.main, relu, "--target", target, "--random-inputs", 0) == (1, "", f"ipu-run: error: {message}\n")


@pytest.mark.parametrize("where", ["no-such-dir/report.json", "."])
def test_bad_memory_report_path_is_a_tool_error_and_nothing_is_written(relu, tmp_path, capsys, where):
    report = tmp_path / where
    reason = "Is a directory" if where == "." else "No such file or directory"
    code, out, err = call(capsys, ipu_compile.main, relu, "-o", tmp_path / "out.mlir", "--memory-report", report)
    assert (code, out, err) == (1, "", f"ipu-compile: error: cannot write the memory report '{report}': {reason}\n")
    assert files(tmp_path) == ["relu.mlir"]


def test_compile_output_to_a_directory(relu, tmp_path, capsys):
    assert call(capsys, ipu_compile.main, relu, "-o", tmp_path) == (
        1,
        "",
        f"ipu-compile: error: cannot write '{tmp_path}': Is a directory\n",
    )


def test_unwritable_profile_writes_no_outputs(relu, tmp_path, capsys):
    profile = tmp_path / "no-such-dir" / "profile.json"
    code, out, err = call(capsys, ipu_run.main, relu, "--random-inputs", 0, "--output-dir", tmp_path / "out", "--profile", profile)
    assert (code, out, err) == (1, "", f"ipu-run: error: cannot write the profile '{profile}': No such file or directory\n")
    assert files(tmp_path) == ["relu.mlir"]


def test_output_dir_that_is_a_file_writes_no_profile(relu, tmp_path, capsys):
    code, out, err = call(capsys, ipu_run.main, relu, "--random-inputs", 0, "--output-dir", relu, "--profile", tmp_path / "p.json")
    assert (code, out, err) == (1, "", f"ipu-run: error: cannot write the outputs to '{relu}': Not a directory\n")
    assert files(tmp_path) == ["relu.mlir"]


def test_outputs_and_profile_are_written_together(relu, tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    code, _, err = call(
        capsys, ipu_run.main, relu, "--random-inputs", 0, "--output-dir", tmp_path / "out", "--profile", tmp_path / "p.json"
    )
    assert (code, err) == (0, "")
    assert files(tmp_path) == ["out", "out/keep.txt", "out/output0.npy", "p.json", "relu.mlir"]
    assert json.loads((tmp_path / "p.json").read_text())["summary"]["target"] == "tiny"


@pytest.mark.parametrize("seed", ["-1", "x", "1.5"])
def test_bad_seed(relu, capsys, seed):
    code, out, err = call(capsys, ipu_run.main, relu, "--random-inputs", seed)
    assert (code, out, err) == (1, "", f"ipu-run: error: argument --random-inputs: invalid seed '{seed}': a non-negative integer\n")


# --- paths with spaces, commas, braces, quotes and non-ASCII letters ----------------------------


def test_odd_paths_reach_the_pipeline_intact(tmp_path, capsys):
    folder = tmp_path / "dossier é, {x}"
    folder.mkdir()
    source, output, report = folder / "entrée (1).mlir", folder / "sortie 'l3'.mlir", folder / 'mémoire "r".json'
    source.write_text(RELU.replace('"tiny"', '"gc200"'))
    target = folder / "cible, {petite}.toml"
    target.write_text((Path(ipu_compile.__file__).parents[1] / "target/targets/tiny.toml").read_text())
    code, out, err = call(capsys, ipu_compile.main, source, "-o", output, "--target", target, "--memory-report", report)
    assert (code, out, err) == (0, "", "")
    assert 'dossier \\C3\\A9, {x}/cible, {petite}.toml"}' in output.read_text()  # MLIR escapes non-ASCII bytes
    assert json.loads(report.read_text())["num_tiles"] == 16
    code, out, err = call(capsys, ipu_run.main, source, "--target", target, "--random-inputs", 0, "--output-dir", folder / "sorties")
    assert (code, err) == (0, "") and "target:            tiny (16 tiles" in out
    assert np.load(folder / "sorties" / "output0.npy").shape == (64,)


def test_a_path_with_both_quotes_cannot_be_a_pipeline_option(relu, tmp_path, capsys):
    report = tmp_path / """it's "r".json"""
    code, out, err = call(capsys, ipu_compile.main, relu, "--memory-report", report)
    assert (code, out) == (1, "")
    assert err == f"ipu-compile: error: cannot pass {str(report)!r} as a pipeline option: it holds both kinds of quotes\n"


# --- programs the compiler cannot take: located errors -----------------------------------------


@pytest.mark.parametrize(
    ("text", "errors"),
    [
        (SELF_CALL, [(2, 8, "recursion (@main -> @main)")]),
        (MUTUAL_CALLS, [(10, 8, "recursion (@f -> @g -> @f)")]),
    ],
)
def test_recursion_is_named(tmp_path, capsys, text, errors):
    source = tmp_path / "recursive.mlir"
    source.write_text(text)
    code, out, err = call(capsys, ipu_compile.main, source)
    assert (code, out) == (1, "")
    lines = [line for line in err.splitlines() if ": error: " in line]
    suffix = ": calls are inlined, and an IPU program has no call stack"
    assert lines == [
        f"{source}:{line}:{column}: error: 'func.call' is not supported by ipu-convert-to-ipu: {what}{suffix}"
        for line, column, what in errors
    ]


def test_zero_size_tensors_are_rejected_at_the_function(tmp_path, capsys):
    source = tmp_path / "zero.mlir"
    source.write_text(ZERO_SIZE)
    code, out, err = call(capsys, ipu_run.main, source, "--random-inputs", 0)
    assert (code, out) == (1, "")
    assert (
        err
        == f"{source}:1:1: error: 'func.func' is not supported by ipu-convert-to-ipu: argument #0 has zero-size tensors (tensor<0x4xf32>)\n"
    )


def test_huge_shapes_do_not_fit_at_the_op(tmp_path, capsys):
    source = tmp_path / "huge.mlir"
    source.write_text(HUGE)
    code, out, err = call(capsys, ipu_compile.main, source, "--target", "tiny", "-o", tmp_path / "out.mlir")
    assert (code, out) == (1, "")
    assert err.startswith(f"{source}:2:8: error: 'linalg.generic' op does not fit in 39321 bytes per tile however it is cut")
    assert err.count("error:") == 1
    assert files(tmp_path) == ["huge.mlir"]


def test_rank_0_arguments_take_random_inputs(tmp_path, capsys):
    source = tmp_path / "scalar.mlir"
    source.write_text(RANK_0)
    code, out, err = call(
        capsys, ipu_run.main, source, "--target", "tiny", "--random-inputs", 0, "--check", "--output-dir", tmp_path / "out"
    )
    assert (code, err) == (0, "") and "check output 0: max abs error 0," in out
    inputs = ipu_run.api.random_inputs([((), np.dtype(np.float32)), ((4,), np.dtype(np.float32))], 0)
    assert isinstance(inputs[0], np.ndarray) and inputs[0].shape == ()
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "output0.npy"), inputs[0] * inputs[1])
