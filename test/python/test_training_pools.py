"""Adaptive average pools whose output does not divide the input (VGG's 7x7 pool of a smaller
map; overlapping windows of unequal sizes) in training: frontends/joint.py writes the pool and
its backward as products with averaging matrices. Checked against PyTorch's loop after 5
steps, test/python/test_training.py's rule."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from test_training import batches, train_both  # noqa: E402


class Pooled(nn.Module):
    def __init__(self, pool):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(pool)
        height, width = (pool, pool) if isinstance(pool, int) else pool
        self.fc = nn.Linear(4 * height * width, 2)

    def forward(self, x, target):
        return nn.functional.mse_loss(self.fc(self.pool(torch.relu(self.conv(x))).flatten(1)), target)


@pytest.mark.parametrize(
    ("size", "pool"),
    [
        ((2, 2), 7),  # VGG-16's pool of a 2x2 map: each input in several windows
        ((5, 5), 3),  # windows of 2 and 3 rows, overlapping
        ((7, 4), (3, 5)),  # each axis its own way
        ((4, 4), 2),  # dividing: the op kept, the backward spread evenly (as before)
    ],
)
def test_adaptive_pools_train_like_pytorch(size, pool):
    torch.manual_seed(0)
    data = batches(9, 5, lambda g: torch.randn(2, 3, *size, generator=g), lambda g: torch.randn(2, 2, generator=g))
    make = lambda m: torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)  # noqa: E731
    losses, reference, worst = train_both(Pooled(pool), make, data)
    assert worst < 1e-4
    assert losses == pytest.approx(reference, rel=1e-5)
