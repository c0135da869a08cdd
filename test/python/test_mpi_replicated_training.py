"""Replicated training on MPI (runtime/distributed.py's `Ring`, docs/many-ipus.md): one replica
a rank, the all-reduce's ring as messages; the losses, outputs and parameters (BatchNorm's
running statistics too) bit for bit those of one process's `ReplicatedSimulator`; `ipu-run
--ipus 2 --train --replicas 2` prints what one process prints; a killed rank is named."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_mpi import BIN, _run

pytest.importorskip("torch")

# 2 replicas x gradientAccumulation 2 of a small CNN with BatchNorm (per replica statistics),
# sharded over 2 IPUs (the replicas on IPUs 0-1 and 2-3, a ring for each IPU's gradients), SGD
# with momentum, 2 calls; rank 0 (or the one process) saves what the front end returns.
_SCRIPT = """
import sys
import numpy as np
import torch
from torch import nn
from ipu_mlir.runtime import distributed
world = distributed.start() if distributed.launched_size() > 1 else None
from ipu_mlir.frontends import torch as ipu_torch

class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.fc = nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.Linear(4 * 4 * 4, 5)

    def forward(self, x, labels):
        out = self.fc(nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2).flatten(1))
        return out, nn.functional.cross_entropy(out, labels)

torch.manual_seed(0)
model = CNN()
ipu_torch.BeginBlock(model.fc, ipu_id=1)  # each replica sharded over 2 IPUs: a ring per IPU
options = ipu_torch.Options().replicationFactor(2).target("m2000")
options.Training.gradientAccumulation(2)
trained = ipu_torch.trainingModel(model, options=options, optimizer=torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
generator = torch.Generator().manual_seed(1)
results = {}
for call in range(2):
    x, labels = torch.randn(8, 3, 8, 8, generator=generator), torch.randint(0, 5, (8,), generator=generator)
    out, losses = trained(x, labels)
    results[f"out{call}"], results[f"losses{call}"] = out.numpy(), losses.numpy()
trained.copyWeightsToHost()
results.update({f"state:{k}": v.numpy() for k, v in model.state_dict().items()})
results["replica 1 fc.weight"] = trained.device.read_variables("param:fc.weight")[1]
results["link bytes"] = np.array(trained.profile.link_bytes)
if world is None or world.rank == 0:
    np.savez(sys.argv[1], **results)
"""


def test_two_ranks_train_bit_for_bit_as_one_process(tmp_path: Path) -> None:
    script = [sys.executable, "-c", _SCRIPT]
    one = _run([*script, str(tmp_path / "one.npz")])
    two = _run([str(BIN / "mpiexec"), "-n", "2", *script, str(tmp_path / "two.npz")])
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    expected, got = np.load(tmp_path / "one.npz"), np.load(tmp_path / "two.npz")
    assert sorted(got.files) == sorted(expected.files) and len(expected.files) > 10
    for name in expected.files:
        assert got[name].dtype == expected[name].dtype and got[name].tobytes() == expected[name].tobytes(), name
    assert int(expected["link bytes"]) > 0


_TRAIN = ["--model", "bert_encoder", "--reduced", "--train", "--replicas", "2", "--target", "m2000", "--steps", "2"]
_SECONDS = re.compile(r"\d+\.\d+ s\b")


def _ipu_run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """test_mpi's `_run` (stdin held open) with a longer deadline: training compiles first."""
    read_end, write_end = os.pipe()
    try:
        command = [str(BIN / "ipu-run"), *args]
        return subprocess.run(command, stdin=read_end, capture_output=True, text=True, timeout=900, env={**os.environ, **(env or {})})
    finally:
        os.close(read_end)
        os.close(write_end)


def test_ipu_run_on_two_ranks_prints_what_one_process_prints() -> None:
    """PyTorch's reference loop on one thread on both sides (mpiexec gives each rank one on this
    machine): its rounding, and so the check's figures, depend on its threads."""
    single = {"OMP_NUM_THREADS": "1"}
    one, two = _ipu_run(*_TRAIN, env=single), _ipu_run(*_TRAIN, "--ipus", "2", env=single)
    assert one.returncode == 0 and two.returncode == 0, one.stdout + one.stderr + two.stderr
    assert two.stderr == ""
    assert "check parameters after 2 steps" in one.stdout and one.stdout.count(": ok") == 2
    assert _SECONDS.sub("N s", two.stdout) == _SECONDS.sub("N s", one.stdout)


def test_killed_rank_is_named() -> None:
    done = _ipu_run(*_TRAIN, "--ipus", "2", env={"IPU_MLIR_MPI_FAULT": "kill:1"})
    assert done.returncode == 1
    assert done.stderr == "ipu-run: rank 1 died (Killed (signal 9)); mpiexec stopped the other ranks\n"


def test_replicas_and_ranks_must_agree() -> None:
    done = _ipu_run("--model", "bert_encoder", "--reduced", "--train", "--replicas", "4", "--target", "m2000", "--ipus", "2")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        "ipu-run: error: --ipus and mpiexec run a program FILE, or --model NAME --train --replicas 2 (a replica a rank): "
        "--model runs on one process\n"
    )


# Each rank all-reduces its own random part over the ring of ranks (distributed.Ring) and
# compares with all_reduce.ring_sum of every rank's part (one process's order); 4 ranks, where,
# unlike 2, the order of the additions shows in the rounding.
_RING_SCRIPT = """
import sys
import numpy as np
from ipu_mlir.runtime import all_reduce, distributed
world = distributed.start()
scales = 10.0 ** (np.arange(1001) % 9)  # magnitudes far apart: the order of the additions shows
parts = [(np.random.default_rng(r).standard_normal(1001) * scales).astype(np.float32) for r in range(4)]
ring = distributed.Ring(world).reduce(world.rank, parts[world.rank], mean=True)
one = all_reduce.ring_sum(parts, mean=True)
replica_order = sum(parts[1:], parts[0].copy()) / 4
open(f"{sys.argv[1]}.{world.rank}", "w").write(f"{ring.tobytes() == one.tobytes()} {one.tobytes() != replica_order.tobytes()}")
"""


def test_four_ranks_sum_in_the_single_process_order(tmp_path: Path) -> None:
    done = _run([str(BIN / "mpiexec"), "-n", "4", sys.executable, "-c", _RING_SCRIPT, str(tmp_path / "ring")])
    assert done.returncode == 0, done.stderr
    assert [(tmp_path / f"ring.{rank}").read_text() for rank in range(4)] == ["True True"] * 4
