"""Codelets: the per-tile programs of vertex groups, as `func.func`s on one tile's pieces.

A codelet runs the same op as the L2 compute op, on the shapes one class of tiles holds:
`ipu.matmul` on a block of rows and columns, `ipu.conv` on a halo'd piece of the input with
the padding that tile needs, `linalg.generic` cloned with its body onto smaller tensors; and
the second stage of a cut reduction, summing the partial results over their leading dim.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import func

from ipu_mlir.dialects import ipu
from ipu_mlir.target.diagnostics import op_error

from .iteration import COMBINERS, SUM


def tensor(shape: Sequence[int], element_type: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element_type)


def _codelet(name: str, inputs: list[ir.Type], results: list[ir.Type], ip: ir.InsertionPoint, loc) -> tuple[func.FuncOp, ir.Block]:
    function = ipu.codelet_function(name, inputs, results, loc=loc, ip=ip)
    return function, function.regions[0].blocks[0]


def matmul_codelet(name, lhs, rhs, result, element_type, ip, loc) -> None:
    function, block = _codelet(name, [tensor(lhs[0], lhs[1]), tensor(rhs[0], rhs[1])], [tensor(result, element_type)], ip, loc)
    with ir.InsertionPoint(block), loc:
        product = ipu.matmul(block.arguments[0], block.arguments[1], element_type=element_type)
        func.ReturnOp([product.result])


def conv_codelet(name, source: ipu.ConvOp, input_shape, filter_shape, padding, groups, result_shape, ip, loc) -> None:
    element_type = ir.RankedTensorType(source.result.type).element_type
    in_type = ir.RankedTensorType(source.input.type).element_type
    function, block = _codelet(
        name, [tensor(input_shape, in_type), tensor(filter_shape, in_type)], [tensor(result_shape, element_type)], ip, loc
    )
    with ir.InsertionPoint(block), loc:
        result = ipu.conv(
            block.arguments[0],
            block.arguments[1],
            strides=source.strides,
            dilations=source.dilations,
            padding=padding,
            groups=groups,
            element_type=element_type,
        )
        if tuple(ir.RankedTensorType(result.result.type).shape) != tuple(result_shape):
            raise op_error(source, f"tile piece gives {result.result.type}, expected {result_shape}: planner bug")
        func.ReturnOp([result.result])


def generic_codelet(name, source: ir.OpView, operand_shapes: list[tuple[int, ...]], init_shape, uses_init: bool, ip, loc, combiner: str | None = None) -> None:
    """`source` (a linalg.generic) on pieces: the same maps and body, smaller tensors. Scalars
    the body captures from outside (constants) are cloned in. With `combiner`, the piece of a
    reduction cut across tiles starts from the combiner's identity instead of the init."""
    inputs = list(source.operands)[:-1]
    init = source.operands[len(source.operands) - 1]
    types = [tensor(shape, ir.RankedTensorType(v.type).element_type) for shape, v in zip(operand_shapes, inputs)]
    init_type = tensor(init_shape, ir.RankedTensorType(init.type).element_type)
    function, block = _codelet(name, types + ([init_type] if uses_init else []), [init_type], ip, loc)
    with ir.InsertionPoint(block), loc:
        if combiner is not None:
            outs = filled(init_shape, init_type.element_type, identity_constant(combiner, init_type.element_type))
        else:
            outs = block.arguments[len(types)] if uses_init else _empty(init_type)
        generic = ir.Operation.create(
            "linalg.generic",
            results=[init_type],
            operands=list(block.arguments)[: len(types)] + [outs],
            attributes={n: source.attributes[n] for n in source.attributes if not n.startswith("ipu.")},
            regions=1,
            loc=loc,
        )
        _clone_body(source, generic, block)
        func.ReturnOp([generic.results[0]])


def _empty(result_type: ir.RankedTensorType) -> ir.Value:
    return ir.Operation.create("tensor.empty", results=[result_type]).results[0]


def _clone_body(source: ir.OpView, target: ir.Operation, function_block: ir.Block) -> None:
    old = source.regions[0].blocks[0]
    new = target.regions[0].blocks.append(*[a.type for a in old.arguments])
    mapping = {old.arguments[i]: new.arguments[i] for i in range(len(old.arguments))}
    captured: dict = {}
    with ir.InsertionPoint(new):
        for op in old.operations:
            copy = op.operation.clone()
            for index, operand in enumerate(op.operands):
                if operand in mapping:
                    copy.operands[index] = mapping[operand]
                else:
                    copy.operands[index] = _capture(source, operand, function_block, captured)
            for old_result, new_result in zip(op.results, copy.results):
                mapping[old_result] = new_result


def _capture(source: ir.OpView, value: ir.Value, function_block: ir.Block, captured: dict) -> ir.Value:
    if value in captured:
        return captured[value]
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        raise op_error(source, "uses a value from outside its body that is not a constant; ipu-schedule cannot copy it to tiles")
    copy = owner.clone(ip=ir.InsertionPoint.at_block_begin(function_block))
    captured[value] = copy.results[0]
    return copy.results[0]


def _is_float(element_type: ir.Type) -> bool:
    return isinstance(element_type, (ir.F32Type, ir.F16Type, ir.BF16Type, ir.F64Type))


def identity_constant(combiner: str, element_type: ir.Type) -> ir.Value:
    """The scalar constant that `combiner` leaves unchanged (0 for a sum...)."""
    value = COMBINERS[combiner_of(combiner, element_type)] if combiner != SUM else 0
    if _is_float(element_type):
        attr = ir.FloatAttr.get(element_type, float(value))
    else:
        width = ir.IntegerType(element_type).width
        value = {"min": -(2 ** (width - 1)), "max": 2 ** (width - 1) - 1}.get(value, value)
        attr = ir.IntegerAttr.get(element_type, int(value))
    return ir.Operation.create("arith.constant", results=[element_type], attributes={"value": attr}).results[0]


def filled(shape, element_type: ir.Type, value: ir.Value) -> ir.Value:
    result_type = tensor(shape, element_type)
    fill = ir.Operation.create(
        "linalg.fill",
        results=[result_type],
        operands=[value, _empty(result_type)],
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])},
        regions=1,
    )
    _fill_body(fill, element_type)
    return fill.results[0]


def combiner_of(combiner: str, element_type: ir.Type) -> str:
    if combiner == SUM:
        return "arith.addf" if _is_float(element_type) else "arith.addi"
    return combiner


def combine_codelet(name, partial_shape, element_type, combiner: str, with_init: bool, ip, loc) -> None:
    """Second stage of a reduction cut across tiles: the partial results, stacked along a
    leading dim, combined (onto the op's init, `with_init`)."""
    combiner = combiner_of(combiner, element_type)
    result_shape = partial_shape[1:]
    inputs = [tensor(partial_shape, element_type)] + ([tensor(result_shape, element_type)] if with_init else [])
    function, block = _codelet(name, inputs, [tensor(result_shape, element_type)], ip, loc)
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


def _fill_body(fill: ir.Operation, element_type: ir.Type) -> None:
    body = fill.regions[0].blocks.append(element_type, element_type)
    with ir.InsertionPoint(body):
        ir.Operation.create("linalg.yield", operands=[body.arguments[0]])


def fill_codelet(name, shape, value_attr: ir.Attribute, element_type, ip, loc) -> None:
    """Every element of the piece set to a constant (the padding of `tensor.pad`)."""
    function, block = _codelet(name, [], [tensor(shape, element_type)], ip, loc)
    with ir.InsertionPoint(block), loc:
        splat = ir.DenseElementsAttr.get_splat(tensor(shape, element_type), value_attr)
        value = ir.Operation.create("arith.constant", results=[tensor(shape, element_type)], attributes={"value": splat}).results[0]
        func.ReturnOp([value])
