"""ipu-opt end to end, for what lit checks poorly: files left behind by -o, exact exit codes,
pass plugins, and the worked example of docs/writing-passes.md."""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ipu_mlir.target import builtin_targets
from ipu_mlir.tools.ipu_opt import split_input

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LIT = REPO / "test" / "lit"
IPU_OPT = BIN / "ipu-opt"

VALID = """\
func.func @f() -> i32 {
  %a = arith.constant 2 : i32
  %b = arith.constant 3 : i32
  %c = arith.addi %a, %b : i32
  return %c : i32
}
"""

PLUGIN = '''\
from dataclasses import dataclass, field

from mlir import ir

from ipu_mlir.target.diagnostics import IpuError, op_error
from ipu_mlir.lowering import ModulePass, register_pass


@register_pass
@dataclass
class CountOps(ModulePass):
    """Tag every function with its number of ops.

    Before: func.func @f() { return }
    After:  func.func @f() attributes {test.ops = 1 : i64} { return }
    """

    name = "test-count-ops"
    attribute: str = field(default="test.ops", metadata={"help": "attribute to write"})
    limit: int = field(default=100, metadata={"help": "most ops a function may have"})

    def run(self, module: ir.Operation) -> None:
        errors = []
        for func in module.regions[0].blocks[0].operations:
            count = len(func.regions[0].blocks[0].operations)
            if count > self.limit:
                errors.append(op_error(func, f"has {count} ops, more than {self.limit}"))
            i64 = ir.IntegerType.get_signless(64)
            func.operation.attributes[self.attribute] = ir.IntegerAttr.get(i64, count)
        if errors:
            raise ExceptionGroup("too many ops", errors + [IpuError("module-wide problem")])
'''


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def ipu_opt(*args: str | Path, stdin: str | None = None, cwd: Path | None = None) -> Run:
    done = subprocess.run([IPU_OPT, *map(str, args)], input=stdin, capture_output=True, text=True, cwd=cwd)
    return Run(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def input_file(tmp_path: Path) -> Path:
    path = tmp_path / "input.mlir"
    path.write_text(VALID)
    return path


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    path = tmp_path / "count_ops.py"
    path.write_text(PLUGIN)
    return path


# --- -o ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pipeline",
    ["ipu-set-target{target=nope}", "no-such-pass", "canonicalize,ipu-set-target{target=tiny"],
)
def test_failed_run_creates_no_output_file(tmp_path: Path, input_file: Path, pipeline: str) -> None:
    output = tmp_path / "out.mlir"
    run = ipu_opt(input_file, "-p", pipeline, "-o", output)
    assert run.returncode == 1
    assert sorted(path.name for path in tmp_path.iterdir()) == ["input.mlir"]


def test_parse_failure_creates_no_output_file(tmp_path: Path) -> None:
    source = tmp_path / "bad.mlir"
    source.write_text("func.func @f( {\n")
    run = ipu_opt(source, "-o", tmp_path / "out.mlir")
    assert run.returncode == 1
    assert run.stderr == f"{source}:1:14: error: expected non-function type\nfunc.func @f( {{\n             ^\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.mlir"]


def test_failed_run_leaves_an_existing_output_file_untouched(tmp_path: Path, input_file: Path) -> None:
    output = tmp_path / "out.mlir"
    output.write_text("previous contents\n")
    output.chmod(0o640)
    run = ipu_opt(input_file, "-p", "ipu-set-target{target=nope}", "-o", output)
    assert run.returncode == 1
    assert output.read_text() == "previous contents\n"
    assert stat.S_IMODE(output.stat().st_mode) == 0o640
    assert sorted(path.name for path in tmp_path.iterdir()) == ["input.mlir", "out.mlir"]


def test_successful_run_replaces_the_output_file_keeping_its_permissions(tmp_path: Path, input_file: Path) -> None:
    output = tmp_path / "out.mlir"
    output.write_text("previous contents\n")
    output.chmod(0o640)
    run = ipu_opt(input_file, "-p", "canonicalize", "-o", output)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert "arith.constant 5 : i32" in output.read_text()
    assert stat.S_IMODE(output.stat().st_mode) == 0o640


def test_a_new_output_file_gets_the_usual_permissions(tmp_path: Path, input_file: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    output = tmp_path / "new.mlir"
    assert ipu_opt(input_file, "-o", output).returncode == 0
    assert stat.S_IMODE(output.stat().st_mode) == 0o666 & ~umask


def test_unwritable_output_is_an_error(tmp_path: Path, input_file: Path) -> None:
    output = tmp_path / "no-such-dir" / "out.mlir"
    run = ipu_opt(input_file, "-o", output)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"ipu-opt: error: cannot write '{output}': No such file or directory\n"


# --- exit codes and messages -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (["missing.mlir"], "ipu-opt: error: cannot open 'missing.mlir': No such file or directory\n"),
        (["."], "ipu-opt: error: cannot open '.': Is a directory\n"),
        (["--bogus"], "ipu-opt: error: unrecognized arguments: --bogus\n"),
        (["--help-pass", "nope"], "ipu-opt: error: no Python pass named 'nope'; see ipu-opt --list-passes\n"),
        (["--load-pass-plugin=missing.py"], "ipu-opt: error: cannot load pass plugin 'missing.py': no such file\n"),
    ],
)
def test_user_errors_exit_with_status_1_and_one_message(tmp_path: Path, args: list[str], stderr: str) -> None:
    run = ipu_opt(*args, cwd=tmp_path)
    assert (run.returncode, run.stdout, run.stderr) == (1, "", stderr)


def test_pipeline_errors_point_into_the_pipeline(input_file: Path) -> None:
    run = ipu_opt(input_file, "--pass-pipeline", "builtin.module(cse,func.func(ipu-verify))")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (
        "ipu-opt: error: invalid --pass-pipeline: 'ipu-verify' is a Python pass: it runs on the whole "
        "module and cannot be nested under 'func.func'; put it at the top level, e.g. "
        "builtin.module(ipu-verify)\n"
        "  builtin.module(cse,func.func(ipu-verify))\n"
        "                               ^\n"
    )


def test_stdin_is_read_and_named(tmp_path: Path) -> None:
    assert "arith.constant 5" in ipu_opt("-p", "canonicalize", stdin=VALID).stdout
    run = ipu_opt("-", stdin="func.func @f() {\n  %x = arith.nope : i32\n}\n")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr.startswith("<stdin>:2:8: error: custom op 'arith.nope' is unknown\n")


def test_verify_diagnostics_succeeds_when_the_expected_failure_happens(tmp_path: Path) -> None:
    source = tmp_path / "expect.mlir"
    source.write_text("// expected-error@below {{unknown target 'nope'}}\nmodule {\n}\n")
    run = ipu_opt(source, "--verify-diagnostics", "-p", "ipu-set-target{target=nope}")
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    run = ipu_opt(source, "--verify-diagnostics", "-p", "ipu-set-target{target=tiny}")
    assert run.returncode == 1
    assert run.stderr == (
        f"{source}:1:4: error: expected error \"unknown target 'nope'\" was not produced\n"
        "// expected-error@below {{unknown target 'nope'}}\n"
        "   ^~~~~~~~~~~~~~~~~~~~~\n"
    )


def test_split_input_pads_chunks_to_keep_line_numbers() -> None:
    text = "a\n// -----\nb\nc\n  // -----  \nd"
    assert split_input(text) == ["a\n", "\n\nb\nc\n", "\n\n\n\n\nd"]
    assert split_input("no marker\n") == ["no marker\n"]


# --- plugins -----------------------------------------------------------------------------------


def test_plugin_passes_show_in_help_with_summary_and_options(plugin: Path) -> None:
    run = ipu_opt(f"--load-pass-plugin={plugin}", "--help")
    assert run.returncode == 0
    assert (
        "  test-count-ops           Tag every function with its number of ops.\n"
        "                            attribute=<str>  attribute to write (default: 'test.ops')\n"
        "                            limit=<int>  most ops a function may have (default: 100)\n"
    ) in run.stdout
    assert "ipu-set-target" in run.stdout
    described = ipu_opt("--load-pass-plugin", plugin, "--help-pass", "test-count-ops").stdout
    assert described.startswith("test-count-ops: Tag every function with its number of ops.\n\nBefore:")


def test_plugin_pass_runs_between_upstream_passes(plugin: Path, input_file: Path) -> None:
    run = ipu_opt(
        input_file,
        "--load-pass-plugin",
        plugin,
        "-p",
        "builtin.module(test-count-ops{attribute=test.before},canonicalize,test-count-ops,cse)",
    )
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout == (
        "module {\n"
        "  func.func @f() -> i32 attributes {test.before = 4 : i64, test.ops = 2 : i64} {\n"
        "    %c5_i32 = arith.constant 5 : i32\n"
        "    return %c5_i32 : i32\n"
        "  }\n"
        "}\n"
    )


def test_plugin_pass_errors_are_diagnostics_at_their_locations(plugin: Path, input_file: Path) -> None:
    run = ipu_opt(input_file, "--load-pass-plugin", plugin, "-p", "test-count-ops{limit=2}")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (
        f"{input_file}:1:1: error: 'func.func' op has 4 ops, more than 2\n"
        "func.func @f() -> i32 {\n"
        "^\n"
        f"{input_file}:0:0: error: module-wide problem\n"
    )


def test_plugin_option_errors_name_the_pass_and_option(plugin: Path, input_file: Path) -> None:
    run = ipu_opt(input_file, "--load-pass-plugin", plugin, "-p", "cse,test-count-ops{limit=lots}")
    assert run.returncode == 1
    assert run.stderr == (
        "ipu-opt: error: invalid --pass-pipeline: option 'limit' of pass 'test-count-ops' expects an integer, got 'lots'\n"
        "  cse,test-count-ops{limit=lots}\n"
        "      ^\n"
    )


def test_a_broken_plugin_is_reported_with_its_line(tmp_path: Path) -> None:
    plugin = tmp_path / "broken.py"
    plugin.write_text("import math\n\nVALUE = math.nope\n")
    run = ipu_opt(f"--load-pass-plugin={plugin}", "--list-passes")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (
        f"ipu-opt: error: cannot load pass plugin '{plugin}': AttributeError: module 'math' has no attribute 'nope'\n"
        f"  at {plugin}:3: VALUE = math.nope\n"
    )
    assert "Traceback" not in run.stderr


def test_loading_the_same_plugin_twice_is_harmless(plugin: Path, input_file: Path) -> None:
    run = ipu_opt(input_file, "--load-pass-plugin", plugin, "--load-pass-plugin", plugin, "-p", "test-count-ops")
    assert (run.returncode, run.stderr) == (0, "")


# --- docs/writing-passes.md --------------------------------------------------------------------


def test_the_worked_example_of_writing_passes_runs_as_documented(tmp_path: Path) -> None:
    doc = (REPO / "docs" / "writing-passes.md").read_text()
    blocks = re.findall(r"```(\w+)\n(.*?)```", doc, re.S)
    plugin_code = next(body for lang, body in blocks if lang == "python" and "@register_pass\n@dataclass\nclass CheckTensorSizes" in body)
    model = next(body for lang, body in blocks if lang == "mlir" and "RUN:" not in body)
    (tmp_path / "check_tensor_sizes.py").write_text(plugin_code)
    (tmp_path / "model.mlir").write_text(model)
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}

    sessions = [body for lang, body in blocks if lang == "console"]
    assert len(sessions) == 3
    for session in sessions:
        command, expected = session.split("\n", 1)
        assert command.startswith("$ ipu-opt ")
        done = subprocess.run(shlex.split(command[2:]), cwd=tmp_path, env=environment, capture_output=True, text=True)
        # The page lists the shipped targets; one more target file changes the help, not the page.
        shipped = f"({', '.join(builtin_targets())})"
        assert done.stdout + done.stderr == expected.replace("(gc2, gc200, tiny)", shipped), command

    lit_example = next(body for lang, body in blocks if lang == "mlir" and "RUN:" in body)
    # The page's lit test and plugin are the suite's own (test/lit/writing-passes), word for word.
    assert (LIT / "writing-passes" / "check-tensor-sizes.mlir").read_text() == lit_example
    assert (LIT / "writing-passes" / "Inputs" / "check_tensor_sizes.py").read_text() == plugin_code
    (tmp_path / "Inputs").mkdir()
    (tmp_path / "Inputs" / "check_tensor_sizes.py").write_text(plugin_code)
    test_file = tmp_path / "check_tensor_sizes_test.mlir"
    test_file.write_text(lit_example)
    file_check = Path(__import__("llvm").__path__[0]) / "bin" / "FileCheck"
    for line in lit_example.splitlines():
        if line.startswith("// RUN: "):
            command = line.removeprefix("// RUN: ").replace("%s", str(test_file)).replace("%S", str(tmp_path))
            command = command.replace("FileCheck", str(file_check))
            done = subprocess.run(command, shell=True, cwd=tmp_path, env=environment, capture_output=True, text=True)
            assert done.returncode == 0, (command, done.stderr)

    python_example = next(body for lang, body in blocks if lang == "python" and "build_pass_manager(" in body)
    done = subprocess.run([sys.executable, "-c", python_example], cwd=tmp_path, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")
