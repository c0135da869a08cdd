"""The simulator on MPI (runtime/distributed.py, `ipu-run --ipus N`): a program spanning the
IPUs of an m2000 runs on 2 ranks byte for byte as on one process, with the same summary; each
rank holds only its IPUs' buffers; a rank that dies or hangs ends the run with one line naming
it; a program on fewer IPUs than ranks is refused in one line; docs/many-ipus.md's session."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_shard import mlp

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]
RUN = [str(BIN / "ipu-run")]


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    """An MLP compiled for an m2000: its layers on the 4 IPUs (ipu-shard), copies between them."""
    folder = tmp_path_factory.mktemp("mpi")
    (folder / "mlp.mlir").write_text(mlp([128, 256, 256, 128, 32]))
    subprocess.run([str(BIN / "ipu-compile"), str(folder / "mlp.mlir"), "--target", "m2000", "-o", str(folder / "mlp.l3.mlir")], check=True)
    return folder / "mlp.l3.mlir"


def _run(command: list[str], **options) -> subprocess.CompletedProcess:  # noqa: ANN003 (subprocess.run's)
    """`command` with stdin a pipe held open and never written, as tools/mpi_launch.py gives
    mpiexec: MPICH's Hydra, fed /dev/null, fails now and then under load ("process reading
    stdin too slowly; can't keep up", seen in CI)."""
    read_end, write_end = os.pipe()
    try:
        return subprocess.run(command, stdin=read_end, capture_output=True, text=True, timeout=300, **options)
    finally:
        os.close(read_end)
        os.close(write_end)


def _ipu_run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return _run([*RUN, *args], env={**os.environ, **(env or {})})


def test_two_ranks_match_one_process(program: Path, tmp_path: Path) -> None:
    """`ipu-run --ipus 2` and a plain `mpiexec -n 2 ipu-run`, against one process."""
    run = [str(program), "--random-inputs", "0", "--output-dir"]
    one = _ipu_run(*run, str(tmp_path / "one"))
    two = _ipu_run(*run, str(tmp_path / "two"), "--ipus", "2")
    plain = _run([str(BIN / "mpiexec"), "-n", "2", *RUN, *run, str(tmp_path / "plain")])
    expected = one.stdout.replace(str(tmp_path / "one"), "DIR")
    assert "estimated time:" in expected and "IPU-Link bytes:" in expected
    for side, name in ((two, "two"), (plain, "plain")):
        assert side.returncode == 0 and side.stderr == "", side.stderr
        assert side.stdout.replace(str(tmp_path / name), "DIR") == expected
        a, b = np.load(tmp_path / "one" / "output0.npy"), np.load(tmp_path / name / "output0.npy")
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# Runs the program twice (the checked plan, then the later one) on each rank; rank 0 saves the
# outputs; every rank writes (into a file of its own: mpiexec may interleave the ranks' stdout)
# the bytes of the buffers it holds, of all buffers, its profile's digest, and whether rank 0
# sent one message per exchange phase crossing to rank 1 per run.
_RANK_SCRIPT = """
import hashlib, sys, numpy as np
from ipu_mlir.runtime import api, distributed
world = distributed.start() if distributed.launched_size() > 1 else None
simulator = api.load_simulator(sys.argv[1])
inputs = api.random_inputs(simulator.arguments, 0)
outputs = [simulator.run(inputs), simulator.run(inputs)]
if world is None or world.rank == 0:
    np.savez(sys.argv[2], *[o for run in outputs for o in run])
buffers = simulator._later.buffers
held = sum(b.data.nbytes for b in buffers if b.data is not None)
total = sum(b.row_count * b.elements * b.dtype.itemsize for b in buffers)
# exchange phases moving data from rank 0's IPUs (0, 1) to rank 1's (2, 3)
crossing = sum(any(src < 2 <= dst for src, dst in step.link_flows) for step in simulator.profile.steps)
messages = world.messages if world is not None and world.rank == 0 else 2 * crossing
digest = hashlib.sha256(simulator.profile.to_json().encode()).hexdigest()
rank = 0 if world is None else world.rank
open(f"{sys.argv[2]}.{rank}", "w").write(f"{held} {total} {digest} {messages == 2 * crossing > 0}")
"""


def test_later_runs_match_and_each_rank_holds_its_ipus(program: Path, tmp_path: Path) -> None:
    script = [sys.executable, "-c", _RANK_SCRIPT, str(program)]
    one = _run([*script, str(tmp_path / "one.npz")])
    two = _run([str(BIN / "mpiexec"), "-n", "2", *script, str(tmp_path / "two.npz")])
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    expected, got = np.load(tmp_path / "one.npz"), np.load(tmp_path / "two.npz")
    assert len(got.files) == len(expected.files) == 2
    for name in expected.files:
        assert got[name].tobytes() == expected[name].tobytes()
    (held, total, profile, _), ranks = (
        (tmp_path / "one.npz.0").read_text().split(),
        [(tmp_path / f"two.npz.{r}").read_text().split() for r in (0, 1)],
    )
    assert all(rank[1:] == [total, profile, "True"] for rank in ranks)
    assert all(0 < int(rank[0]) < int(held) for rank in ranks)  # each rank: some of the memory, not all


def test_killed_rank_is_named(program: Path) -> None:
    done = _ipu_run(str(program), "--random-inputs", "0", "--ipus", "2", env={"IPU_MLIR_MPI_FAULT": "kill:1"})
    assert done.returncode == 1
    assert done.stderr == "ipu-run: rank 1 died (Killed (signal 9)); mpiexec stopped the other ranks\n"
    assert done.stdout == ""


def test_hung_rank_times_out_naming_it(program: Path) -> None:
    done = _ipu_run(str(program), "--random-inputs", "0", "--ipus", "2", env={"IPU_MLIR_MPI_FAULT": "hang:1", "IPU_MLIR_MPI_TIMEOUT": "3"})
    assert done.returncode == 1
    assert done.stderr == "ipu-run: error: rank 0: no message from rank 1 within 3 s: rank 1 died or hangs\n"
    assert done.stdout == ""


def test_more_ranks_than_ipus_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "mlp.mlir").write_text(mlp([32, 32]))
    done = _ipu_run(str(tmp_path / "mlp.mlir"), "--target", "gc200", "--random-inputs", "0", "--ipus", "2")
    assert done.returncode == 1
    assert done.stderr == "ipu-run: error: the program uses 1 IPU: run it on at most 1 MPI rank, not 2\n"
    assert done.stdout == ""


def test_docs_console_block() -> None:
    """docs/many-ipus.md's session, run from the repository: the same output."""
    doc = (REPO / "docs" / "many-ipus.md").read_text()
    (block,) = re.findall(r"```console\n\$ (.*?)\n(.*?)```", doc, re.S)
    command, expected = block
    words = command.split()
    done = _run([str(BIN / words[0]), *words[1:]], cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
