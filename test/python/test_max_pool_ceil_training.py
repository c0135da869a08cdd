"""MaxPool2d in ceil mode where ceil mode adds no window (stride 1; sizes the stride divides),
in a training step: torch-mlir's ceil-mode lowering of max_pool2d_with_indices built an invalid
linalg.generic ("operand #2 has shape's dimension #3 to be 3, but found 4", fuzz_pytorch seed
3293) and the model was refused; aten_rewrites.py pools it as in floor mode, the same windows.
Two SGD steps against PyTorch's loop."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from test_avg_pool_training import Pooled, assert_sgd_steps_match_pytorch  # noqa: E402

POOLS = {
    "stride-1": (lambda: nn.MaxPool2d(3, stride=1, ceil_mode=True), (2, 3, 5, 3)),
    "stride-divides": (lambda: nn.MaxPool2d(2, ceil_mode=True), (2, 3, 4, 6)),
}


@pytest.mark.parametrize("name", POOLS)
def test_training_through_ceil_mode_max_pool_matches_pytorch(name):
    make, shape = POOLS[name]
    torch.manual_seed(0)
    assert_sgd_steps_match_pytorch(Pooled(make(), shape[-1]), shape)
