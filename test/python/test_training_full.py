"""Full-size ResNet-50 (224x224, micro-batch 3, 5 steps) trained on gc200 and checked against PyTorch's loop: the
console block of docs/training.md that runs `--model resnet50`, times aside. Minutes of
compiling and simulating: `make train-full` runs it (IPU_TRAIN_FULL=1), `make test` skips it."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

pytest.importorskip("torch")

from ipu_mlir.tools.ipu_run import main  # noqa: E402


@pytest.mark.skipif(not os.environ.get("IPU_TRAIN_FULL"), reason="minutes long: make train-full")
def test_resnet50_full_size_trains_like_pytorch(capsys):
    doc = (Path(__file__).parents[2] / "docs" / "training.md").read_text()
    (block,) = [b for b in re.findall(r"```console\n\$ ipu-run (.*?)\n(.*?)```", doc, re.S) if "--model resnet50" in b[0]]
    status = main(shlex.split(block[0]))
    out = capsys.readouterr().out
    assert status == 0, out
    seconds = re.compile(r"\d+\.\d+ s\b")
    assert seconds.sub("N.NN s", out) == seconds.sub("N.NN s", block[1])
    assert out.count(": ok") == 2  # after the first step and the last
