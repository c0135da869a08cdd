"""What `ipu-schedule` (lowering/schedule.py) keeps while it schedules, so that it asks each
question once: the values each buffer holds, each block's last readers, the copies planned
between two layouts."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from mlir import ir

from .exchange import Transfer, plan_transfers
from .layout import Layout


@dataclass
class TransferPlans:
    """`plan_transfers`, planned once per distinct question: a deep model's layers exchange
    between alike layouts (ResNet-18's 32x32 training step: 1,287 questions, 712 distinct).
    The key holds each layout's every field, as Layout's own equality ignores a one-part
    dimension's tile stride."""

    plans: dict[tuple, list[Transfer]] = field(default_factory=dict)

    def __call__(self, src: Layout, dst: Layout, shift=None, box=None, steps=None) -> list[Transfer]:
        key = (_fields(src), _fields(dst), shift, box, steps)
        if key not in self.plans:
            self.plans[key] = plan_transfers(src, dst, shift, box, steps)
        return self.plans[key]


def _fields(layout: Layout) -> tuple:
    return layout.shape, layout.first_tile, layout.dims, layout.replicate


class Storage(dict):
    """The `Stored` of each scheduled value, and the values each buffer holds (`holding`):
    `in_place` asks whether any value of a buffer is read later, for every op a loop body or
    the function yields, which scanning the later ops' operands made quadratic in the ops."""

    def __init__(self) -> None:
        super().__init__()
        self.holding: dict[str, set[ir.Value]] = defaultdict(set)

    def __setitem__(self, value: ir.Value, stored) -> None:  # a schedule.Stored
        if value in self:
            self.holding[self[value].buffer].discard(value)
        super().__setitem__(value, stored)
        self.holding[stored.buffer].add(value)


@dataclass(frozen=True)
class BlockUses:
    """Each op's position in a block, and each value's last reader there, by position (ops
    nested in a later op read at its position: an inner loop reading an old value); the
    block's terminator is left out, its operands asked one by one: `yielded` holds each
    value's positions there (a block's operation list is a linked list: its length and its
    last op cost a walk, as does a function return's hundreds of updated variables)."""

    position: dict[ir.Operation, int]
    last: dict[ir.Value, int]
    terminator: ir.OpView
    yielded: dict[ir.Value, list[int]]

    @staticmethod
    def of(body: ir.Block) -> BlockUses:
        position, last, yielded = {}, {}, {}
        operations = list(body.operations)
        for k, value in enumerate(operations[-1].operands):
            yielded.setdefault(value, []).append(k)
        for index, op in enumerate(operations[:-1]):
            position[op.operation] = index

            def read(inner: ir.Operation, index: int = index) -> ir.WalkResult:
                for value in inner.operands:
                    last[value] = index
                return ir.WalkResult.ADVANCE

            op.operation.walk(read)
        return BlockUses(position, last, operations[-1], yielded)
