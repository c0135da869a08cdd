"""Training a model whose forward reads tensors it neither owns as parameters, buffers nor
attributes: a module-level class-weight tensor given to cross_entropy, index tensors captured by
a closure (fuzz_pytorch seeds 2791, 2799 and 2801). make_fx's fake tracing refused such real
tensors ("Please convert all Tensors to FakeTensors first"); frontends/joint.py's trace now
takes them as constants of the step. Two SGD steps against PyTorch's loop."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from test_avg_pool_training import assert_sgd_steps_match_pytorch  # noqa: E402

CLASS_WEIGHTS = torch.tensor([0.5, 2.0, 1.0, 0.25])  # a user's module-level constant
LABELS = torch.tensor([3, 0, 1])
COLUMNS = torch.tensor([4, 0, 0, 2])


def _captured(x: torch.Tensor) -> torch.Tensor:
    return x[:, COLUMNS] * torch.arange(1.0, 5.0)


class Captured(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(6, 5)

    def forward(self, x):  # noqa: ANN001, ANN201
        logits = _captured(self.linear(x))
        return nn.functional.cross_entropy(logits, LABELS, weight=CLASS_WEIGHTS, label_smoothing=0.1)


def test_training_with_captured_constant_tensors_matches_pytorch():
    torch.manual_seed(0)
    assert_sgd_steps_match_pytorch(Captured(), (3, 6))
