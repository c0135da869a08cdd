"""`ipu-run --model NAME --train` (tools/train.py): a reduced zoo model trained and checked
against PyTorch's loop; bad input gets one line and exit 1."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

pytest.importorskip("torch")

from ipu_mlir.tools.ipu_run import main  # noqa: E402


def test_gpt2_reduced_trains_like_pytorch(capsys):
    """The console block of docs/training.md, the times aside."""
    doc = (Path(__file__).parents[2] / "docs" / "training.md").read_text()
    (block,) = [b for b in re.findall(r"```console\n\$ ipu-run (.*?)\n(.*?)```", doc, re.S) if "--reduced" in b[0]]
    status = main(shlex.split(block[0]))
    out = capsys.readouterr().out
    assert status == 0, out
    seconds = re.compile(r"\d+\.\d+ s\b")
    assert seconds.sub("N.NN s", out) == seconds.sub("N.NN s", block[1])
    assert "check parameters after 5 steps" in out and out.count(": ok") == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--model", "resnet18", "--train", "--optimizer", "rmsprop"],
            "ipu-run: error: unsupported optimizer 'rmsprop': --optimizer takes sgd, adam, adamw\n",
        ),
        (["--model", "resnet18", "--train", "--batch", "0"], "ipu-run: error: argument --batch: invalid value '0': a positive integer\n"),
        (["--model", "resnet19", "--train"], "ipu-run: error: argument --model: invalid choice: 'resnet19'"),
        (
            ["--model", "resnet18", "--train", "--profile", "p.json"],
            "ipu-run: error: --train takes --model NAME and its own options: drop FILE,",
        ),
    ],
)
def test_bad_training_command_lines(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(message) and captured.err.count("\n") == 1, captured.err
    assert list(tmp_path.iterdir()) == []
