"""The planner's prices (lowering/plan.py `_Prices`): a search prices each cut once and each
operand's piece once per block sizes of its loops, and skips the exchange of a cut whose compute
alone is no cheaper than the cuts it has. Each of these shortcuts must leave the search's answer
as it was: a cut priced among thousands costs what it costs alone, a cut is refused only when
its full price is no lower, and the search finds what the unshortened search finds."""

from __future__ import annotations

import heapq
import math
import random

from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.ops import space_of
from ipu_mlir.lowering.plan import REFINE_STARTS, _block_sizes, _options, _Prices, _products, _refine, _starts, cheapest_blocks
from ipu_mlir.target import load_target

# A strided, padded convolution (its input read through windows), a grouped one, and a matmul.
OPS = (
    '"ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, '
    "strides = array<i64: 2, 2>} : (tensor<2x64x56x56xf32>, tensor<128x64x3x3xf32>) -> tensor<2x128x28x28xf32>",
    '"ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 32 : i64, padding = array<i64: 1, 1, 1, 1>, '
    "strides = array<i64: 1, 1>} : (tensor<1x32x32x32xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x32x32xf32>",
    '"ipu.matmul"(%x, %w) : (tensor<384x768xf32>, tensor<768x3072xf32>) -> tensor<384x3072xf32>',
)


def _space(op_text: str):
    operands = op_text.split(" : (")[1].split(") -> ")[0]
    x, w = operands.split(", ")
    module = ir.Module.parse(f"func.func @main(%x: {x}, %w: {w}) {{\n  %y = {op_text}\n  return\n}}")
    return space_of(module.body.operations[0].regions[0].blocks[0].operations[0]), module


def _cuts(space, target, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """`count` random admitted cuts within the tiles: (blocks, parts per loop)."""
    rng = random.Random(0)
    sizes = [
        [b for b in _block_sizes(e, target.num_tiles, space.multiple(d)) if space.block_refusal(d, b) is None]
        for d, e in enumerate(space.extents)
    ]
    cuts = []
    while len(cuts) < count:
        blocks = tuple(rng.choice(s) for s in sizes)
        counts = tuple(-(-e // b) for e, b in zip(space.extents, blocks))
        if math.prod(counts) <= target.num_tiles:
            cuts.append((blocks, counts))
    return cuts


def test_a_cut_priced_among_others_costs_what_it_costs_alone():
    target = load_target("gc200")
    with make_context():
        for op_text in OPS:
            space, _module = _space(op_text)
            shared = _Prices(space, target)
            cuts = _cuts(space, target, 200)
            for blocks, counts in cuts + cuts[::-1]:  # the second pass from the memos
                alone = _Prices(space, target)
                assert shared.memory(blocks, counts) == alone.memory(blocks, counts), (op_text, blocks)
                assert shared.cycles(blocks, counts) == alone.cycles(blocks, counts), (op_text, blocks)


def test_a_cut_is_refused_only_when_its_full_price_is_no_lower():
    target = load_target("gc200")
    with make_context():
        for op_text in OPS:
            space, _module = _space(op_text)
            shared = _Prices(space, target)
            for blocks, counts in _cuts(space, target, 100):
                full = _Prices(space, target).cycles(blocks, counts)
                for below in (1, full - 1, full, full + 1, None):  # refused by its compute alone first, then priced
                    expected = full if below is None or full < below else None
                    assert shared.cycles(blocks, counts, below) == expected, (op_text, blocks, below)


def test_the_search_finds_what_the_unshortened_search_finds():
    """The reference prices every cut of the grid in full, climbs from the REFINE_STARTS
    cheapest and keeps the lowest, as the search did before it skipped anything: the same
    starts, the same answer."""

    class Unshortened(_Prices):
        def cycles(self, blocks, counts, below=None):
            found = _Prices(self.space, self.target).cycles(blocks, counts)
            return None if below is not None and found >= below else found

    target = load_target("gc200")
    budget = target.planner_memory_budget_bytes
    with make_context():
        for op_text in OPS:
            space, _module = _space(op_text)
            prices, fits = Unshortened(space, target), []
            for counts in _products(_options(space, target), target.num_tiles):
                blocks = tuple(-(-e // p) for e, p in zip(space.extents, counts))
                if prices.memory(blocks, counts) <= budget:
                    fits.append((prices.cycles(blocks, counts), blocks))
            starts = heapq.nsmallest(REFINE_STARTS, fits, key=lambda fit: fit[0])
            assert _starts(_Prices(space, target), budget) == starts, op_text
            expected = min((_refine(prices, budget, start) for start in starts), key=lambda fit: fit[0])
            assert cheapest_blocks(space, target, budget) == expected, op_text
