"""PyTorch's reference outputs (`frontends.torch.run_eager`, `ipu-run --model`'s check) computed
on one thread, the caller's thread count given back after, even when the model raises."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402


class Threads(torch.nn.Module):
    """Its output: the threads torch computes with inside its forward."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() < 0:
            raise RuntimeError("a negative input")
        return torch.full((1,), torch.get_num_threads())


def test_run_eager_computes_on_one_thread_and_gives_the_threads_back() -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert ipu_torch.run_eager(Threads(), torch.ones(3)).item() == 1
        assert torch.get_num_threads() == 2
        with pytest.raises(RuntimeError, match="negative"):
            ipu_torch.run_eager(Threads(), -torch.ones(3))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
