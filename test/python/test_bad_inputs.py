"""No traceback from any tool on any input: every tool, on a corpus of bad inputs (empty,
binary and non-UTF-8 files, directories and missing files where files belong, wrong-typed
JSON, unknown or absurd targets, bad option values, Ctrl-C), ends with a one-line error, a
non-zero status and nothing written."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_atomic_outputs import default_sigint

from ipu_mlir.tools import demo, dialect_doc, ipu_compile, ipu_opt, ipu_run, ipu_vis

REPO = Path(__file__).resolve().parents[2]
RELU = str(REPO / "examples/relu.mlir")
CNN = str(REPO / "examples/cnn.mlir")
BIN = Path(sys.executable).parent
TOOLS = {"ipu-run": ipu_run, "ipu-compile": ipu_compile, "ipu-opt": ipu_opt, "ipu-vis": ipu_vis}
TOOLS |= {"ipu-dialect-doc": dialect_doc, "ipu-demo": demo}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    here = tmp_path_factory.mktemp("corpus")
    (here / "empty.mlir").write_text("")
    (here / "comments.mlir").write_text("// nothing but a comment\n")
    (here / "garbage.mlir").write_bytes(bytes(range(256)) * 3)
    (here / "latin1.mlir").write_bytes("func.func @caf\xe9() {\n  return\n}\n".encode("latin-1"))
    (here / "unparsable.mlir").write_text("func.func @f( {\n")
    (here / "directory").mkdir()
    (here / "list.json").write_text("[1, 2]\n")
    (here / "wrong-types.json").write_text('{"summary": 1, "target": 2, "memory": 3, "supersteps": 4}\n')
    (here / "wrong-values.json").write_text(
        '{"summary": {}, "target": {"num_tiles": "x"}, "memory": {"bytes_per_tile": "y"}, "supersteps": [1]}\n'
    )
    (here / "binary.json").write_bytes(b"\xff\xfe{}")
    (here / "truncated.json").write_text('{"summary": {')
    (here / "not-npy.npy").write_text("not an array")
    tiny = (REPO / "target/targets/tiny.toml").read_text()
    (here / "huge.toml").write_text(tiny.replace("num_tiles = { value = 16,", "num_tiles = { value = 100_000_000,"))
    (here / "fraction.toml").write_text(
        tiny.replace("planner_memory_fraction = { value = 0.6,", "planner_memory_fraction = { value = 5.0,")
    )
    return here


def cases() -> list[tuple[str, list[str]]]:
    """(tool, arguments); `{c}` is the corpus directory, `{o}` the (empty) output directory."""
    run = [
        ["{c}/empty.mlir", "--random-inputs", "0"],
        ["{c}/comments.mlir", "--random-inputs", "0"],
        ["{c}/garbage.mlir", "--random-inputs", "0"],
        ["{c}/latin1.mlir", "--random-inputs", "0"],
        ["{c}/unparsable.mlir", "--random-inputs", "0"],
        ["{c}/directory", "--random-inputs", "0"],
        ["{c}/missing.mlir", "--random-inputs", "0"],
        [RELU, "--random-inputs", "0", "--target", "gc9"],
        [RELU, "--random-inputs", "0", "--target", "{c}/huge.toml", "--output-dir", "{o}/out"],
        [RELU, "--random-inputs", "0", "--target", "{c}/fraction.toml"],
        [RELU, "--random-inputs", "0", "--target", "{c}/garbage.mlir"],
        [RELU, "--random-inputs", "0", "--target", "{c}/directory"],
        [RELU, "--input", "{c}/not-npy.npy", "--profile", "{o}/profile.json"],
        [RELU, "--input", "{c}/directory"],
        [RELU, "--input", "{c}/missing.npy"],
        [RELU],
        [RELU, "--random-inputs", "-3"],
        [RELU, "--random-inputs", "x"],
        [RELU, "--random-inputs", "0", "--output-dir", "{c}/list.json"],
        [RELU, "--random-inputs", "0", "--profile", "{c}/directory"],
        [RELU, "--random-inputs", "0", "--profile", "{o}/missing/profile.json", "--output-dir", "{o}/out"],
        [RELU, "--random-inputs", "0", "--entry", "nope"],
        [RELU, "--random-inputs", "0", "--check"],
        ["--model", "resnet18", "--size", "0"],
        ["--model", "alexnet", "--size", "8"],  # PyTorch cannot run it
        ["--model", "resnet18", "--batch", "-1"],
        ["--model", "bert", "--layers", "0"],
        ["--model", "nope"],
        ["--model", "resnet18", RELU],
        ["--bogus"],
        [],
    ]
    compile_ = [
        ["{c}/empty.mlir", "-o", "{o}/x.mlir"],
        ["{c}/garbage.mlir", "-o", "{o}/x.mlir"],
        ["{c}/latin1.mlir", "-o", "{o}/x.mlir"],
        ["{c}/unparsable.mlir", "-o", "{o}/x.mlir"],
        ["{c}/directory", "-o", "{o}/x.mlir"],
        ["{c}/missing.mlir"],
        [CNN, "--target", "{c}/huge.toml", "-o", "{o}/x.mlir"],
        [CNN, "--target", "nope", "-o", "{o}/x.mlir"],
        [CNN, "-o", "{c}/directory"],
        [CNN, "-o", "{o}/missing/x.mlir"],
        [CNN, "--memory-report", "{c}/directory", "-o", "{o}/x.mlir"],
        [CNN, "--entry", "nope", "-o", "{o}/x.mlir"],
    ]
    opt = [
        ["{c}/garbage.mlir"],
        ["{c}/latin1.mlir"],
        ["{c}/unparsable.mlir", "-o", "{o}/x.mlir"],
        ["{c}/directory"],
        [CNN, "-p", "builtin.module(ipu-convert-to-ipu,ipu-plan{grain=0})", "-o", "{o}/x.mlir"],
        [CNN, "-p", "builtin.module(ipu-convert-to-ipu,ipu-plan{grain=-5})"],
        [CNN, "-p", "builtin.module(ipu-convert-to-ipu,ipu-plan{memory-fraction=5.0})"],
        [CNN, "-p", "builtin.module(ipu-convert-to-ipu,ipu-plan{memory-fraction=nan})"],
        [CNN, "-p", "builtin.module(ipu-plan{grain=many})"],
        [CNN, "-p", "builtin.module(ipu-fold-constants{max-elements=-1})"],
        [CNN, "-p", "builtin.module(ipu-set-target{target=nope})"],
        [CNN, "-p", "builtin.module(ipu-set-target{target={c}/huge.toml})"],
        [CNN, "-p", "builtin.module(("],
        [CNN, "-p", "builtin.module(no-such-pass)"],
        [CNN, "--load-pass-plugin", "{c}/garbage.mlir"],
        [CNN, "--load-pass-plugin", "{c}/directory"],
        [CNN, "--help-pass", "nope"],
    ]
    vis = [
        ["report", "{c}/list.json", "-o", "{o}/r.html"],
        ["report", "{c}/wrong-types.json", "-o", "{o}/r.html"],
        ["report", "{c}/wrong-values.json", "-o", "{o}/r.html", "--png-dir", "{o}/png"],
        ["report", "{c}/binary.json", "-o", "{o}/r.html"],
        ["report", "{c}/truncated.json", "-o", "{o}/r.html"],
        ["report", "{c}/garbage.mlir", "-o", "{o}/r.html"],
        ["report", "{c}/directory", "-o", "{o}/r.html"],
        ["report", "{c}/missing.json", "-o", "{o}/r.html"],
        ["graph", "{c}/garbage.mlir", "-o", "{o}/g.png"],
        ["graph", "{c}/empty.mlir", "-o", "{o}/g.png"],
        ["graph", RELU, "-o", "{o}/g.png", "--pixels", "0"],
        ["graph", RELU, "-o", "{o}/g.png", "--layer-depth", "-1"],
        ["graph", RELU, "-o", "{o}/g.png", "--target", "{c}/huge.toml"],
        ["graph", "--model", "resnet18", "--size", "0", "-o", "{o}/g.png"],
        ["bogus"],
    ]
    doc = [["--definition", "{c}/garbage.mlir"], ["--definition", "{c}/directory"], ["--definition", RELU], ["--check", "{c}/directory"]]
    return (
        [("ipu-run", a) for a in run]
        + [("ipu-compile", a) for a in compile_]
        + [("ipu-opt", a) for a in opt]
        + [("ipu-vis", a) for a in vis]
        + [("ipu-dialect-doc", a) for a in doc]
        + [("ipu-demo", ["--bogus"])]
    )


@pytest.mark.parametrize(("tool", "arguments"), cases(), ids=lambda value: " ".join(value) if isinstance(value, list) else value)
def test_a_bad_input_gets_one_clear_line(tool: str, arguments: list[str], corpus: Path, tmp_path: Path, capfd) -> None:
    argv = [argument.replace("{c}", str(corpus)).replace("{o}", str(tmp_path)) for argument in arguments]
    try:
        status = TOOLS[tool].main(argv)
    except SystemExit as exit_:  # argparse in the tools that let it exit
        status = exit_.code
    out, err = capfd.readouterr()
    assert status not in (0, None), out + err
    assert "Traceback" not in err and "internal error" not in err, err
    assert "error" in err, err
    located = [line for line in err.splitlines() if ": error: " in line]
    assert len(located) == 1, err  # one error line (a located one may show its source line under it)
    assert list(tmp_path.iterdir()) == [], "partial output"


@pytest.mark.parametrize(
    ("tool", "arguments", "delays"),
    [
        ("ipu-compile", [CNN, "--target", "gc200", "-o"], (0.2, 1.0, 2.0)),  # about 2.5 s: imports, then the compile
        ("ipu-run", ["--model", "resnet50", "--size", "64", "--output-dir"], (4.0,)),  # exporting, compiling
    ],
)
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_signal_ends_a_tool_in_one_line(tool: str, arguments: list[str], delays: tuple[float, ...], signame: str, tmp_path: Path) -> None:
    """Ctrl-C or SIGTERM, while the tool imports its modules or works: one line, status
    128 + N, nothing written (or, past the end, the tool's normal success; or, before the
    interpreter reached the tool or once it is done, the signal's default action, silent; or,
    during the interpreter's own start-up, its "Fatal Python error", exit 1, nothing written)."""
    signum = getattr(signal, signame)
    for delay in delays:
        output = tmp_path / f"out{delay}"
        process = subprocess.Popen(
            [str(BIN / tool), *arguments, str(output)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint
        )
        time.sleep(delay)
        process.send_signal(signum)
        _, err = process.communicate(timeout=300)
        if process.returncode == 0:  # finished before the signal
            assert output.exists()
            continue
        if process.returncode == -signum:  # the default action: before Python ran the tool, or after it
            assert err == ""
            assert not output.exists() or (output.is_dir() or output.read_text().endswith("}\n")), "partial output"
            continue
        if err.startswith("Fatal Python error: init_import_site"):  # CPython's own start-up, before any tool code
            assert process.returncode == 1 and not output.exists()  # (seen at 0.2 s on a loaded machine)
            continue
        word = "interrupted" if signum == signal.SIGINT else "terminated"
        assert (process.returncode, err.splitlines()[-1:]) == (128 + signum, [f"{tool}: {word}"]), err
        assert "Traceback" not in err and not output.exists()
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".")] == []


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_each_command_reports_a_bad_flag_in_one_line(tool: str) -> None:
    done = subprocess.run([str(BIN / tool), "--no-such-flag"], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"{tool}: error: "), done.stderr


@pytest.mark.parametrize(
    "command",
    [["ipu-opt", "--list-passes"], ["ipu-run", RELU, "--random-inputs", "0"], ["ipu-opt", RELU]],
    ids=lambda command: " ".join(Path(part).name for part in command),
)
def test_a_reader_that_goes_away_ends_a_tool_quietly(command: list[str]) -> None:
    """`tool | head -1`: once the reader has gone, the tool ends as a Unix tool ended by SIGPIPE
    does (status 141), with nothing on stderr. The reader here reads nothing, so the tool's
    first write finds the pipe closed."""
    tool = subprocess.Popen([str(BIN / command[0]), *command[1:]], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    tool.stdout.close()
    _, stderr = tool.communicate(timeout=120)
    assert stderr.decode() == ""
    assert tool.returncode == 128 + signal.SIGPIPE
