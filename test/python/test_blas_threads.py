"""The simulator computes with numpy's BLAS on one thread (runtime/blas.py) and gives the caller
its threads back."""

from pathlib import Path

import numpy as np
from mlir import ir
from threadpoolctl import threadpool_info, threadpool_limits

from ipu_mlir.dialects import make_context
from ipu_mlir.runtime import steps
from ipu_mlir.runtime.blas import one_blas_thread
from ipu_mlir.runtime.simulator import Simulator

REPO = Path(__file__).resolve().parents[2]


def blas_threads() -> list[int]:
    return [library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas"]


def test_one_blas_thread_inside_and_the_callers_threads_after():
    with threadpool_limits(limits=2, user_api="blas"):
        assert set(blas_threads()) == {2}
        with one_blas_thread():
            assert set(blas_threads()) == {1}
        assert set(blas_threads()) == {2}


def test_vertex_groups_run_on_one_blas_thread(monkeypatch):
    seen: list[list[int]] = []
    original = steps.VertexGroup.run

    def recording(self, *args, **kwargs):
        seen.append(blas_threads())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(steps.VertexGroup, "run", recording)
    x = np.random.default_rng(3).uniform(-1, 1, 1024).astype(np.float32)
    with threadpool_limits(limits=2, user_api="blas"):
        simulator = Simulator(ir.Module.parseFile(str(REPO / "examples/relu.mlir"), make_context()))
        simulator.run([x])
        simulator.run([x])
        assert set(blas_threads()) == {2}
    assert seen and all(set(threads) == {1} for threads in seen)
