"""`ipu-index-to-iota` (L0): `linalg.index` in a generic's body becomes an input holding 0..n-1.

A codelet computes one tile's piece of a generic and does not know where the piece starts, so
a body asking for its loop index (`linalg.index`: torch's `arange`, position ids, the causal
mask of `scaled_dot_product_attention(is_causal=True)`, GroupNorm's group arithmetic) has no
answer on a tile. An iota operand has one: it is sliced like any operand, so each tile receives
the indices of its own piece. On constants only (an `arange` alone), `ipu-fold-constants`
then computes the result at compile time. A `tensor.extract` at affine coordinates of the
indices (a kernel flip, a pooling window) is first rewritten into an input read through an
indexing map (lowering/affine_reads.py), so that it needs no index at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from ipu_mlir.dialects.ops.space import loop_extents

from .affine_reads import rewrite_affine_reads, with_inputs
from .pass_registry import ModulePass, register_pass


@register_pass
@dataclass
class IndexToIota(ModulePass):
    """Replace `linalg.index d` in a generic's body with an input operand `iota_d`.

    Before:

        %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
            outs(%e : tensor<5xi64>) {
        ^bb0(%out: i64):
          %i = linalg.index 0 : index
          %c = arith.index_cast %i : index to i64
          linalg.yield %c : i64
        } -> tensor<5xi64>

    After:

        %iota = arith.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
        %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
            ins(%iota : tensor<5xi64>) outs(%e : tensor<5xi64>) {
        ^bb0(%in: i64, %out: i64):
          %i = arith.index_cast %in : i64 to index
          %c = arith.index_cast %i : index to i64
          linalg.yield %c : i64
        } -> tensor<5xi64>
    """

    name = "ipu-index-to-iota"

    def run(self, module: ir.Operation) -> None:
        rewrite_affine_reads(module)  # a kernel flip or a pooling window is a read, not a gather
        # Every generic, also those in loop bodies (the iota is a constant there too).
        generics: list[ir.OpView] = []
        module.walk(lambda op: _collect_indexed(op, generics))
        for op in generics:
            _rewrite(op)


def _collect_indexed(op: ir.Operation, into: list[ir.OpView]) -> ir.WalkResult:
    if op.name == "linalg.generic" and _indices(op.opview):
        into.append(op.opview)
    return ir.WalkResult.ADVANCE


def _indices(generic: ir.OpView) -> list[ir.OpView]:
    return [inner for inner in generic.regions[0].blocks[0].operations if inner.operation.name == "linalg.index"]


def _rewrite(generic: ir.OpView) -> None:
    indices = _indices(generic)
    extents = loop_extents(generic)
    loops = sorted({ir.IntegerAttr(i.attributes["dim"]).value for i in indices})
    n_dims = len(extents)
    i64 = ir.IntegerType.get_signless(64)
    with generic.location, ir.InsertionPoint(generic):
        iotas = []
        for loop in loops:
            tensor = ir.RankedTensorType.get([extents[loop]], i64)
            values = ir.DenseElementsAttr.get(np.arange(extents[loop], dtype=np.int64), type=tensor)
            iotas.append(ir.Operation.create("arith.constant", results=[tensor], attributes={"value": values}).results[0])
    location = generic.location
    new, arguments = with_inputs(generic, iotas, [ir.AffineMap.get(n_dims, 0, [ir.AffineDimExpr.get(loop)]) for loop in loops])
    with location, ir.InsertionPoint.at_block_begin(new.regions[0].blocks[0]):
        for loop, argument in zip(loops, arguments):
            cast = ir.Operation.create("arith.index_cast", results=[ir.IndexType.get()], operands=[argument])
            for index in indices:
                if ir.IntegerAttr(index.attributes["dim"]).value == loop:
                    index.results[0].replace_all_uses_with(cast.results[0])
    for index in indices:
        index.operation.erase()
