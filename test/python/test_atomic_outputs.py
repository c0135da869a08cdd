"""ipu-run's files appear together or not at all (tools/run_files.py): on an error, on SIGINT
and SIGTERM at any point, and when two runs share an output directory."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ipu_mlir.tools import ipu_run, run_files

REPO = Path(__file__).resolve().parents[2]
RELU = REPO / "examples/relu.mlir"  # L3, tiny: two outputs, 264 cycles
IPU_RUN = Path(sys.executable).parent / "ipu-run"
# One output: the L0 program is compiled first, so this run takes longer than RELU's.
L0_NEGATE = """
module attributes {ipu.target = "tiny"} {
  func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
    %e = tensor.empty() : tensor<64xf32>
    %r = linalg.negf ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
    return %r : tensor<64xf32>
  }
}
"""
# Runs ipu-run as the console script does (SIGTERM handler included), sending itself the signal
# argv[2] at the point argv[1]: before the run's result exists, or while its files are written.
SIGNALLER = """
import os, signal, sys
import numpy as np
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.tools import cli

point, signum = sys.argv[1], getattr(signal, sys.argv[2])

def signalling(function):
    def call(*args, **kwargs):
        os.kill(os.getpid(), signum)
        return function(*args, **kwargs)
    return call

if point == "simulate":
    Simulator.run = signalling(Simulator.run)
elif point == "save":
    np.save = signalling(np.save)
elif point == "rename":
    os.replace = signalling(os.replace)
sys.argv = ["ipu-run", *sys.argv[3:]]
sys.exit(cli.ipu_run())
"""


def default_sigint() -> None:
    """The child's SIGINT at its default, whatever the test runner's: a job started in the
    background of a non-interactive shell (a CI script's `&`) inherits SIGINT ignored, which
    Python then keeps ignored, as a tool should: that run would not be interrupted at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def listing(directory: Path) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


def run(*argv: object) -> int:
    return ipu_run.main([str(a) for a in argv])


def relu_set(directory: Path) -> bool:
    """Whether `directory` holds RELU's complete set: out/ with its two outputs and the profile."""
    if listing(directory) != ["out", "out/output0.npy", "out/output1.npy", "profile.json"]:
        return False
    outputs = [np.load(directory / "out" / f"output{i}.npy") for i in range(2)]
    cycles = json.loads((directory / "profile.json").read_text())["summary"]["cycles"]
    return [o.shape for o in outputs] == [(1024,), (64,)] and cycles == 264


def test_a_failed_rename_undoes_the_others(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    previous = {"output0.npy": b"old 0", "output1.npy": b"old 1", "output2.npy": b"old 2", "notes.txt": b"mine"}
    for name, data in previous.items():
        (out / name).write_bytes(data)
    (tmp_path / "profile.json").write_text("old profile")
    real_replace = os.replace
    for failing in range(1, 5):  # the stale output2, output0, output1, the profile
        calls = []

        def replace(source, destination, failing=failing, calls=calls):
            calls.append(destination)
            if len(calls) == failing:
                raise OSError(28, "No space left on device")
            real_replace(source, destination)

        monkeypatch.setattr(run_files.os, "replace", replace)
        assert run(RELU, "--random-inputs", 0, "--output-dir", out, "--profile", tmp_path / "profile.json") == 1
        monkeypatch.setattr(run_files.os, "replace", real_replace)
        assert "No space left on device" in capsys.readouterr().err
        assert {path.name: path.read_bytes() for path in out.iterdir()} == previous, failing
        assert (tmp_path / "profile.json").read_text() == "old profile"
        assert listing(tmp_path) == ["out", *(f"out/{name}" for name in sorted(previous)), "profile.json"]


def test_a_new_directory_and_profile_fail_together(tmp_path, capsys, monkeypatch):
    real_replace = os.replace

    def replace(source, destination):
        if Path(destination).name == "profile.json":
            raise OSError(5, "Input/output error")
        real_replace(source, destination)

    monkeypatch.setattr(run_files.os, "replace", replace)
    assert run(RELU, "--random-inputs", 0, "--output-dir", tmp_path / "out", "--profile", tmp_path / "profile.json") == 1
    assert capsys.readouterr().err == f"ipu-run: error: cannot write '{tmp_path / 'profile.json'}': Input/output error\n"
    assert listing(tmp_path) == []


def test_an_output_name_held_by_a_directory_writes_nothing(tmp_path, capsys):
    (tmp_path / "out" / "output0.npy").mkdir(parents=True)
    assert run(RELU, "--random-inputs", 0, "--output-dir", tmp_path / "out", "--profile", tmp_path / "profile.json") == 1
    assert capsys.readouterr().err == f"ipu-run: error: cannot write '{tmp_path / 'out' / 'output0.npy'}': Is a directory\n"
    assert listing(tmp_path) == ["out", "out/output0.npy"]


def test_the_report_is_published_with_the_run_files_or_not_at_all(tmp_path, capsys):
    """--report's profile and page are files of the run: a page that cannot be written (a
    directory holds its name) leaves neither the outputs nor the report's profile."""
    (tmp_path / "report" / "relu.html").mkdir(parents=True)
    arguments = ("--random-inputs", 0, "--output-dir", tmp_path / "out", "--report", tmp_path / "report")
    assert run(RELU, *arguments) == 1
    assert capsys.readouterr().err == f"ipu-run: error: cannot write '{tmp_path / 'report' / 'relu.html'}': Is a directory\n"
    assert listing(tmp_path) == ["report", "report/relu.html"]
    (tmp_path / "report" / "relu.html").rmdir()
    assert run(RELU, *arguments) == 0
    assert listing(tmp_path) == ["out", "out/output0.npy", "out/output1.npy", "report", "report/relu.html", "report/relu.json"]


def test_a_previous_runs_extra_outputs_go_and_other_files_stay(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    for name in ("output0.npy", "output1.npy", "output2.npy", "output10.npy", "notes.txt", "output-x.npy"):
        (out / name).write_text("old")
    assert run(RELU, "--random-inputs", 0, "--output-dir", out) == 0
    assert listing(tmp_path) == ["out", "out/notes.txt", "out/output-x.npy", "out/output0.npy", "out/output1.npy"]
    assert np.load(out / "output1.npy").shape == (64,)


def test_new_files_and_directories_follow_the_umask(tmp_path, capsys):
    previous = os.umask(0o027)
    try:
        assert run(RELU, "--random-inputs", 0, "--output-dir", tmp_path / "out", "--profile", tmp_path / "profile.json") == 0
    finally:
        os.umask(previous)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o750
    assert (tmp_path / "out" / "output0.npy").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "profile.json").stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("point", ["simulate", "save", "rename"])
def test_a_signal_leaves_nothing_or_the_complete_set(tmp_path, point, signame):
    arguments = [RELU, "--random-inputs", 0, "--output-dir", tmp_path / "out", "--profile", tmp_path / "profile.json"]
    done = subprocess.run(
        [sys.executable, "-c", SIGNALLER, point, signame, *map(str, arguments)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=default_sigint,
    )
    signum = getattr(signal, signame)
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    assert (done.returncode, done.stderr) == (128 + signum, f"ipu-run: {word}\n"), done.stderr
    if point == "simulate":  # before any file is written
        assert listing(tmp_path) == []
    else:  # the signal waits for the files to be published
        assert relu_set(tmp_path), listing(tmp_path)


def test_sigterm_at_any_moment_of_a_real_run(tmp_path):
    """The command itself, signalled after various delays: nothing, or the complete set."""
    started = time.monotonic()
    subprocess.run([str(IPU_RUN), RELU, "--random-inputs", "0"], capture_output=True, check=True, timeout=300)
    duration = time.monotonic() - started
    outcomes = set()
    for index, fraction in enumerate((0.3, 0.6, 0.8, 0.9, 1.0, 1.1)):
        place = tmp_path / str(index)
        place.mkdir()
        arguments = [RELU, "--random-inputs", "0", "--output-dir", place / "out", "--profile", place / "profile.json"]
        process = subprocess.Popen([str(IPU_RUN), *map(str, arguments)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(duration * fraction)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=300)
        assert "Traceback" not in err, err
        assert listing(place) == [] or relu_set(place), listing(place)
        outcomes.add(process.returncode)
    assert outcomes <= {0, 128 + signal.SIGTERM, -signal.SIGTERM}


def test_two_runs_on_one_directory_leave_one_consistent_set(tmp_path):
    negate = tmp_path / "negate.mlir"
    negate.write_text(L0_NEGATE)
    place = tmp_path / "shared"
    place.mkdir()
    common = ["--random-inputs", "0", "--output-dir", place / "out", "--profile", place / "profile.json"]
    for _ in range(2):
        processes = [
            subprocess.Popen([str(IPU_RUN), str(program), *map(str, common)], stdout=subprocess.PIPE) for program in (RELU, negate)
        ]
        assert [process.wait(timeout=300) for process in processes] == [0, 0]
        names = listing(place)
        if relu_set(place):
            continue
        assert names == ["out", "out/output0.npy", "profile.json"], names
        assert np.load(place / "out" / "output0.npy").shape == (64,)
        assert json.loads((place / "profile.json").read_text())["summary"]["cycles"] != 264


def test_publishing_waits_for_the_directory_lock(tmp_path):
    """Runs publish under an exclusive flock of the destination's directory: while another
    holds it, nothing appears; once released, the complete set does."""
    arguments = [RELU, "--random-inputs", "0", "--output-dir", tmp_path / "out", "--profile", tmp_path / "profile.json"]
    descriptor = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        process = subprocess.Popen([str(IPU_RUN), *map(str, arguments)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=10)  # a run takes about 2 s; this one waits for the lock
        assert listing(tmp_path) == []
    finally:
        os.close(descriptor)
    assert process.wait(timeout=300) == 0
    assert relu_set(tmp_path), listing(tmp_path)
