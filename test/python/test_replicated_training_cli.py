"""`ipu-run --model NAME --train --replicas R` (tools/train.py): bad input gets one line and
exit 1, before any output. The run itself is docs/ipu-run.md's console block
(test_docs_console.py runs it: losses and the parameters' check against PyTorch's loop)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from ipu_mlir.tools.ipu_run import main  # noqa: E402


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--replicas", "3", "--target", "m2000"],
            "ipu-run: error: --replicas 3 is not a power of two (GCL's ring all-reduce needs one)\n",
        ),
        (
            ["--replicas", "8", "--target", "m2000"],
            "ipu-run: error: --replicas 8 needs 8 IPUs, one a replica, but target 'm2000' has 4: "
            "give a system's --target (m2000: 4, pod16: 16, pod64: 64)\n",
        ),
        (["--replicas", "2"], "ipu-run: error: --replicas 2 needs 2 IPUs, one a replica, but target 'gc200' has 1: "),
        (["--replicas", "0"], "ipu-run: error: argument --replicas: invalid value '0': a positive integer\n"),
    ],
)
def test_bad_replicas(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["--model", "mobilenet_v2", "--reduced", "--train", *argv]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(message) and captured.err.count("\n") == 1, captured.err
    assert captured.out == ""
    assert list(tmp_path.iterdir()) == []


def test_replicas_without_train(capsys):
    assert main(["--model", "mobilenet_v2", "--replicas", "2"]) == 1
    captured = capsys.readouterr()
    assert captured.err == "ipu-run: error: --replicas trains data-parallel replicas: give it with --model NAME --train\n"
    assert captured.out == ""
