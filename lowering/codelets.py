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
from ipu_mlir.dialects.diagnostics import op_error


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


def generic_codelet(name, source: ir.OpView, operand_shapes: list[tuple[int, ...]], init_shape, uses_init: bool, ip, loc) -> None:
    """`source` (a linalg.generic) on pieces: the same maps and body, smaller tensors. Scalars
    the body captures from outside (constants) are cloned in."""
    inputs = list(source.operands)[:-1]
    init = source.operands[len(source.operands) - 1]
    types = [tensor(shape, ir.RankedTensorType(v.type).element_type) for shape, v in zip(operand_shapes, inputs)]
    init_type = tensor(init_shape, ir.RankedTensorType(init.type).element_type)
    function, block = _codelet(name, types + ([init_type] if uses_init else []), [init_type], ip, loc)
    with ir.InsertionPoint(block), loc:
        outs = block.arguments[len(types)] if uses_init else _empty(init_type)
        generic = ir.Operation.create(
            "linalg.generic",
            results=[init_type],
            operands=list(block.arguments)[: len(types)] + [outs],
            attributes={n: source.attributes[n] for n in _names(source.attributes) if not n.startswith("ipu.")},
            regions=1,
            loc=loc,
        )
        _clone_body(source, generic, block)
        func.ReturnOp([generic.results[0]])


def _names(attributes) -> list[str]:
    return [a if isinstance(a, str) else a.name for a in attributes]


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


def sum_codelet(name, partial_shape, element_type, ip, loc) -> None:
    """Sum of the partial results of a cut reduction, over their leading dim."""
    result_shape = partial_shape[1:]
    function, block = _codelet(name, [tensor(partial_shape, element_type)], [tensor(result_shape, element_type)], ip, loc)
    rank = len(partial_shape)
    float_ = isinstance(element_type, (ir.F32Type, ir.F16Type, ir.BF16Type, ir.F64Type))
    with ir.InsertionPoint(block), loc:
        zero = ir.Operation.create(
            "arith.constant",
            results=[element_type],
            attributes={"value": ir.FloatAttr.get(element_type, 0.0) if float_ else ir.IntegerAttr.get(element_type, 0)},
        ).results[0]
        init = ir.Operation.create("linalg.fill", results=[tensor(result_shape, element_type)], operands=[zero, _empty(tensor(result_shape, element_type))],
                                   attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])}, regions=1)
        _fill_body(init, element_type)
        maps = ir.ArrayAttr.get(
            [
                ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank)),
                ir.AffineMapAttr.get(ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(i) for i in range(1, rank)])),
            ]
        )
        iterators = ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<reduction>")] + [ir.Attribute.parse("#linalg.iterator_type<parallel>")] * (rank - 1))
        generic = ir.Operation.create(
            "linalg.generic",
            results=[tensor(result_shape, element_type)],
            operands=[block.arguments[0], init.results[0]],
            attributes={"indexing_maps": maps, "iterator_types": iterators, "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])},
            regions=1,
        )
        body = generic.regions[0].blocks.append(element_type, element_type)
        with ir.InsertionPoint(body):
            add = ir.Operation.create("arith.addf" if float_ else "arith.addi", results=[element_type], operands=list(body.arguments))
            ir.Operation.create("linalg.yield", operands=[add.results[0]])
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
