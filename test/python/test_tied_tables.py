"""A tied embedding table in training (lowering/tied_tables.py): laid out for its matmuls and
read there in place, the step checked against PyTorch's own loop."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402
from ipu_mlir.lowering import plan  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402

TARGET = "tiny"  # 16 tiles of 64 KiB: a 640 x 64 f32 table is 10 KiB a tile, its momentum and gradient as much


class TiedLM(nn.Module):
    """GPT-2's tied embedding in small: the token table read by the embedding's gather and,
    transposed, by the output head's matmul."""

    def __init__(self, vocab: int, hidden: int = 64):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.layer = nn.Linear(hidden, hidden)

    def forward(self, ids, target):
        h = torch.tanh(self.layer(self.embedding(ids)))
        logits = h @ self.embedding.weight.t()
        return nn.functional.cross_entropy(logits.flatten(0, 1), target.flatten())


def train(vocab: int, optimizer: str, steps: int = 3, seq: int = 16):
    """(the trained model's profile, the largest relative parameter difference from PyTorch's
    loop after `steps` steps from the same weights on the same batches)."""
    torch.manual_seed(0)
    net = TiedLM(vocab)
    reference = copy.deepcopy(net)
    make = {
        "momentum": lambda parameters: torch.optim.SGD(parameters, lr=0.1, momentum=0.9),
        "adam": lambda parameters: torch.optim.Adam(parameters, lr=0.01),
    }[optimizer]
    model = ipu_torch.trainingModel(net, options=ipu_torch.Options().target(TARGET), optimizer=make(net.parameters()))
    reference_optimizer = make(reference.parameters())
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        ids, target = (torch.randint(0, vocab, (1, seq), generator=generator) for _ in range(2))
        model(ids, target)
        reference_optimizer.zero_grad()
        reference(ids, target).backward()
        reference_optimizer.step()
    model.copyWeightsToHost()
    worst = max(
        float((ours - theirs).abs().max() / theirs.abs().max())
        for ours, theirs in zip(net.state_dict().values(), reference.state_dict().values())
    )
    return model.profile, worst


def test_a_tied_table_read_in_place_fits_with_momentum(monkeypatch):
    # Laid out for its gather, the table was copied for the head's matmuls (twice: transposed
    # forward, as it is backward), and the step was refused; read in place it fits.
    profile, worst = train(640, "momentum")
    assert worst < 1e-5
    assert profile.peak_memory_per_tile == 57_024
    monkeypatch.setattr(plan, "lay_out_tables", lambda *arguments: {})  # no table laid out for its matmuls
    with pytest.raises(IpuError, match=r"Out of memory on tile 4: 71232 bytes used"):
        train(640, "momentum", steps=1)


def test_a_tied_table_read_in_place_trains_with_adam():
    profile, worst = train(448, "adam")
    assert worst < 1e-4  # Adam's first steps divide by the square root of tiny second moments
    assert profile.peak_memory_per_tile == 65_124  # 65,440 laid out for the gather
