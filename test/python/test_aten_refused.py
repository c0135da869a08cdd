"""Ops torch-mlir refuses or crashes on, run through frontends/aten_refused.py's rewrites and
checked against PyTorch eager: in inference and, with their backward ops, in a training step."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
nn, F = torch.nn, torch.nn.functional

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_torch_regressions import Lambda  # noqa: E402
from test_training import train_both  # noqa: E402

TARGET = "tiny"


def _distinct_indices(generator, batch, rows, picks, size):  # noqa: ANN001, ANN202
    """Indices without repeats along the last dimension: a scatter's order then does not matter."""
    rows_ = [torch.randperm(size, generator=generator)[:picks] for _ in range(batch * rows)]
    return torch.stack(rows_).view(batch, rows, picks)


def _scatters() -> dict:
    return {
        "scatter_src": lambda s, g, i: s.scatter(-1, i, g),
        "scatter_value": lambda s, g, i: s.scatter(-1, i, 2.0),
        "scatter_add": lambda s, g, i: s.scatter_add(-1, i, g),
        "scatter_reduce_amax": lambda s, g, i: s.scatter_reduce(-1, i, g, "amax", include_self=False),
        "scatter_reduce_add_kwarg": lambda s, g, i: s.scatter(-2, i[:, :3] % 4, g[:, :3], reduce="add"),
        "scatter_multiply_value": lambda s, g, i: (s + 1.5).scatter(2, i, 3.0, reduce="multiply"),
    }


@pytest.mark.parametrize("name", sorted(_scatters()))
def test_scatters_along_a_negative_dimension(name: str) -> None:
    """Along dimension -1 torch-mlir's lowering segfaulted (or aborted: "LLVM ERROR: out of
    memory"), taking the process down; `reduce=` was refused naming no op."""
    generator = torch.Generator().manual_seed(0)
    s, g = torch.randn(2, 4, 35, generator=generator), torch.randn(2, 4, 6, generator=generator)
    i = _distinct_indices(generator, 2, 4, 6, 35)
    model = Lambda(_scatters()[name])
    got = ipu_torch.compile(model, s, g, i, target=TARGET, use_cache=False)(s, g, i)
    torch.testing.assert_close(torch.as_tensor(got), model(s, g, i), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "p, mode, rows",
    [
        (2.0, None, 4),
        (2.0, None, 30),
        (2.0, "use_mm_for_euclid_dist", 4),
        (1.0, None, 4),
        (0.0, None, 4),
        (3.0, None, 4),
        (0.5, None, 4),
        (float("inf"), None, 4),
    ],
)
def test_cdist(p: float, mode: str | None, rows: int) -> None:
    """More than 25 rows, or the mm mode, take ATen's matmul form (`_euclidean_dist`)."""
    generator = torch.Generator().manual_seed(1)
    a, b = torch.randn(2, rows, 3, generator=generator), torch.randn(2, 5, 3, generator=generator)
    kwargs = {} if mode is None else {"compute_mode": mode}
    model = Lambda(lambda a, b: torch.cdist(a, b, p=p, **kwargs))
    got = ipu_torch.compile(model, a, b, target=TARGET, use_cache=False)(a, b)
    torch.testing.assert_close(torch.as_tensor(got), model(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("size, out", [((7, 5), (3, 2)), ((9, 7), (4, 3)), ((6, 4), (2, 2)), ((5, 5), (1, 1))])
def test_adaptive_max_pool2d_values_and_indices(size: tuple, out: tuple) -> None:
    """Uneven windows (7 -> 3) were refused ("only support cases with fixed stride size")."""
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(2, 3, *size, generator=generator)
    model = Lambda(lambda x: F.adaptive_max_pool2d(x, out, return_indices=True))
    values, indices = ipu_torch.compile(model, x, target=TARGET, use_cache=False)(x)
    want_values, want_indices = model(x)
    torch.testing.assert_close(torch.as_tensor(values), want_values, rtol=0, atol=0)
    assert torch.equal(torch.as_tensor(indices).long(), want_indices)


class PooledClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3)
        self.fc = nn.Linear(4 * 3 * 2, 5)
        self.centres = nn.Parameter(torch.randn(5, 5))

    def forward(self, x, labels):  # noqa: ANN001, ANN201
        h = self.fc(F.adaptive_max_pool2d(self.conv(x), (3, 2)).flatten(1))
        logits = -torch.cdist(h, self.centres) - torch.cdist(h, self.centres, p=1.5)
        return F.cross_entropy(logits, labels)


def test_uneven_adaptive_max_pool_and_cdist_train() -> None:
    """Their backward ops (`adaptive_max_pool2d_backward`, `_cdist_backward`) were refused."""
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(3)
    data = [(torch.randn(2, 2, 9, 7, generator=generator), torch.randint(0, 5, (2,), generator=generator)) for _ in range(3)]
    losses, reference, worst = train_both(PooledClassifier(), lambda m: torch.optim.SGD(m.parameters(), lr=0.1), data)
    assert worst < 1e-4
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(reference), rtol=1e-5, atol=1e-6)


NORMS = {
    "2-norm of all elements": lambda a: torch.linalg.norm(a),
    "vector 3-norm": lambda a: torch.linalg.norm(a[0], ord=3),
    "vector inf-norm over dim -1": lambda a: torch.linalg.norm(a, ord=float("inf"), dim=-1),
    "2-norm over dims, keepdim": lambda a: torch.linalg.norm(a, dim=(0, 1), keepdim=True),
    "frobenius": lambda a: torch.linalg.norm(a, ord="fro"),
    "matrix 1-norm": lambda a: torch.linalg.norm(a, ord=1),
    "matrix -1-norm keepdim": lambda a: torch.linalg.norm(a, ord=-1, dim=(1, 0), keepdim=True),
    "matrix inf-norm": lambda a: torch.linalg.norm(a, ord=float("inf")),
    "matrix -inf-norm": lambda a: torch.linalg.norm(a, ord=-float("inf")),
}


@pytest.mark.parametrize("name", sorted(NORMS))
def test_linalg_norm(name: str) -> None:
    """torch.linalg.norm (`aten.linalg_norm`) was refused: torch-mlir fails to legalize it."""
    a = torch.randn(5, 4, generator=torch.Generator().manual_seed(4)) * torch.arange(1.0, 5.0)
    model = Lambda(NORMS[name])
    got = ipu_torch.compile(model, a, target=TARGET, use_cache=False)(a)
    torch.testing.assert_close(torch.as_tensor(got).double(), model(a.double()), rtol=1e-5, atol=1e-6)


class NormRegularised(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, t):  # noqa: ANN001, ANN201
        return F.mse_loss(self.fc(x), t) + 0.1 * torch.linalg.norm(self.fc.weight) + 0.05 * torch.linalg.norm(self.fc.weight, ord=1)


def test_linalg_norm_trains() -> None:
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(5)
    data = [(torch.randn(3, 4, generator=generator), torch.randn(3, 3, generator=generator)) for _ in range(3)]
    losses, reference, worst = train_both(NormRegularised(), lambda m: torch.optim.SGD(m.parameters(), lr=0.1), data)
    assert worst < 1e-4
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(reference), rtol=1e-5, atol=1e-6)
