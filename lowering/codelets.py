"""Codelets that belong to no compute op: the second stage of a cut reduction and the fill of
a `tensor.pad`. A compute op's own codelet is built by its record (`ComputeOp.codelet` in
`ipu_mlir.dialects.ops`).
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import func

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.combine import COMBINE_ATTR, CombineMark
from ipu_mlir.dialects.ops.generic import combiner_of, filled, identity_constant


def tensor(shape: Sequence[int], element_type: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element_type)


def _codelet(name: str, inputs: list[ir.Type], results: list[ir.Type], ip: ir.InsertionPoint, loc) -> tuple[func.FuncOp, ir.Block]:
    function = ipu.codelet_function(name, inputs, results, loc=loc, ip=ip)
    return function, function.regions[0].blocks[0]


def combine_codelet(name, partial_shape, element_type, combiner: str, with_init: bool, ip, loc) -> None:
    """Second stage of a reduction cut across tiles: the partial results, stacked along a
    leading dim, combined (onto the op's init, `with_init`); marked so (dialects/combine.py)."""
    combiner = combiner_of(combiner, element_type)
    result_shape = partial_shape[1:]
    inputs = [tensor(partial_shape, element_type)] + ([tensor(result_shape, element_type)] if with_init else [])
    function, block = _codelet(name, inputs, [tensor(result_shape, element_type)], ip, loc)
    function.attributes[COMBINE_ATTR] = CombineMark(combiner, with_init, epilogue=False).attribute()
    rank = len(partial_shape)
    with ir.InsertionPoint(block), loc:
        init = block.arguments[1] if with_init else filled(result_shape, element_type, identity_constant(combiner, element_type))
        maps = ir.ArrayAttr.get(
            [
                ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank)),
                ir.AffineMapAttr.get(ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(i) for i in range(1, rank)])),
            ]
        )
        kinds = ["reduction"] + ["parallel"] * (rank - 1)
        iterators = ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])
        generic = ir.Operation.create(
            "linalg.generic",
            results=[tensor(result_shape, element_type)],
            operands=[block.arguments[0], init],
            attributes={"indexing_maps": maps, "iterator_types": iterators, "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])},
            regions=1,
        )
        body = generic.regions[0].blocks.append(element_type, element_type)
        with ir.InsertionPoint(body):
            combined = ir.Operation.create(combiner, results=[element_type], operands=list(body.arguments))
            ir.Operation.create("linalg.yield", operands=[combined.results[0]])
        func.ReturnOp([generic.results[0]])


def fill_codelet(name, shape, value_attr: ir.Attribute, element_type, ip, loc) -> None:
    """Every element of the piece set to a constant (the padding of `tensor.pad`)."""
    function, block = _codelet(name, [], [tensor(shape, element_type)], ip, loc)
    with ir.InsertionPoint(block), loc:
        splat = ir.DenseElementsAttr.get_splat(tensor(shape, element_type), value_attr)
        value = ir.Operation.create("arith.constant", results=[tensor(shape, element_type)], attributes={"value": splat}).results[0]
        func.ReturnOp([value])
