"""What ipu-schedule plans once and reuses: the copies between two layouts (`TransferPlans`)."""

from __future__ import annotations

import dataclasses

import pytest

from ipu_mlir.lowering.exchange import plan_transfers
from ipu_mlir.lowering.layout import Layout, Parts
from ipu_mlir.lowering.schedule_state import TransferPlans

SOURCE = Layout((8, 64), 0, (Parts.blocks(8, 4, 4), Parts.blocks(64, 16, 1)))
WANTED = Layout((8, 64), 16, (Parts.blocks(8, 2, 2), Parts.blocks(64, 32, 1)))


def _questions() -> list[tuple]:
    """Questions differing in one field each, every answer differing from the first's: a memo
    keyed without that field would answer with the first's copies."""
    moved = dataclasses.replace(SOURCE, first_tile=40)
    recut = dataclasses.replace(SOURCE, dims=(Parts.blocks(8, 2, 8), SOURCE.dims[1]))
    replicated = dataclasses.replace(WANTED, replicate=((2, 100),))
    wider = Layout((8, 96), 0, (Parts.blocks(8, 4, 4), Parts.blocks(96, 16, 1)))
    return [
        (SOURCE, WANTED, None, None, None),
        (moved, WANTED, None, None, None),
        (recut, WANTED, None, None, None),
        (SOURCE, replicated, None, None, None),
        (wider, Layout((8, 96), 16, (Parts.blocks(8, 2, 2), Parts.blocks(96, 32, 1))), None, None, None),
        (SOURCE, WANTED, (0, 8), None, None),
        (SOURCE, WANTED, None, ((0, 8), (0, 32)), None),
        (SOURCE, WANTED, None, ((0, 8), (0, 32)), ((1, 1), (2, 1))),
    ]


def test_questions_differ():
    answers = [plan_transfers(*question) for question in _questions()]
    assert all(answer not in answers[:k] for k, answer in enumerate(answers))


def test_memo_answers_as_the_planner_does():
    memo = TransferPlans()
    for question in _questions() * 2:  # the second round from the memo
        assert memo(*question) == plan_transfers(*question)
    assert len(memo.plans) == len(_questions())


def test_cross_entropy_step_at_batch_2_trains_like_pytorch():
    """Cross-entropy's backward builds its scatter's [batch, label] index rows by two copies into
    one small buffer, alike but for the shift: a memo keyed without the shift gave both the
    first's copies, and the simulator refused the step (`'ipu.copy' op writes memory on tile 39
    at bytes [0, 8) (elements [0, 1) of @insert_slice1), which 'ipu.copy' ... also writes`), as
    full-size ResNet-50's training step did with a draft of the memo."""
    torch = pytest.importorskip("torch")
    from test_training import train_both

    class Head(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(16, 10)

        def forward(self, x, y):
            return torch.nn.functional.cross_entropy(self.fc(x), y)

    torch.manual_seed(0)
    batches = [(torch.randn(2, 16), torch.tensor([3, 7]))]
    losses, reference_losses, worst = train_both(Head(), lambda m: torch.optim.SGD(m.parameters(), lr=0.1), batches, target="gc200")
    assert losses == pytest.approx(reference_losses, rel=1e-6) and worst < 1e-6
