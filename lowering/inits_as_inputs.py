"""Element-wise generics that read their `outs` read them as inputs (part of `ipu-convert-to-ipu`,
before elementwise fusion).

An all-parallel generic whose body reads an output's block argument (`outs(%t)` holding values,
not a `tensor.empty`) computes `f(ins, t)` element for element: `t` is an input in all but
name. Upstream `linalg-fuse-elementwise-ops` does not see it so: fusing such a producer into a
reduction keeps the producer's result as a second output of the fused generic, which
`ipu-plan` refuses ("with 2 results is not supported"; fuzz seed 174). Here `t` becomes an
input read through the output's map, and the output a `tensor.empty`; the body is unchanged.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg, tensor


def read_inits_as_inputs(block: ir.Block) -> None:
    for op in list(block.operations):
        if op.operation.name == "linalg.generic" and _reads_parallel_init(op):
            with ir.InsertionPoint(op), op.location:
                _rewrite(op)


def _reads_parallel_init(generic: ir.OpView) -> bool:
    if any("parallel" not in str(kind) for kind in ir.ArrayAttr(generic.attributes["iterator_types"])):
        return False
    block = generic.regions[0].blocks[0]
    first = len(block.arguments) - len(generic.results)
    return any(_used(block.arguments[i]) for i in range(first, len(block.arguments)))


def _used(value: ir.Value) -> bool:
    return any(True for _ in value.uses)


def _rewrite(generic: ir.OpView) -> None:
    block = generic.regions[0].blocks[0]
    operands = list(generic.operands)
    first = len(operands) - len(generic.results)
    inputs, inits = operands[:first], operands[first:]
    maps = list(ir.ArrayAttr(generic.attributes["indexing_maps"]))
    read = [i for i, argument in enumerate(list(block.arguments)[first:]) if _used(argument)]
    empties = [tensor.EmptyOp(ir.RankedTensorType(v.type).shape, ir.RankedTensorType(v.type).element_type).result for v in inits]
    new = linalg.GenericOp(
        [r.type for r in generic.results],
        inputs + [inits[i] for i in read],
        empties,
        ir.ArrayAttr.get(maps[:first] + [maps[first + i] for i in read] + maps[first:]),
        generic.attributes["iterator_types"],
    )
    for name in generic.attributes:  # ipu.* and other discardable attributes travel along
        if name not in ("indexing_maps", "iterator_types", "operandSegmentSizes"):
            new.attributes[name] = generic.attributes[name]
    element = [ir.RankedTensorType(v.type).element_type for v in inputs + [inits[i] for i in read] + inits]
    new_block = new.regions[0].blocks.append(*element)
    old_arguments = list(block.arguments)
    for i in range(first):
        old_arguments[i].replace_all_uses_with(new_block.arguments[i])
    for k, i in enumerate(read):
        old_arguments[first + i].replace_all_uses_with(new_block.arguments[first + k])
    for i in range(len(inits)):
        old_arguments[first + i].replace_all_uses_with(new_block.arguments[first + len(read) + i])
    at_end = ir.InsertionPoint(new_block)
    for inner in list(block.operations):
        at_end.insert(inner.detach_from_parent())
    for old, replacement in zip(generic.results, new.results):
        old.replace_all_uses_with(replacement)
    generic.operation.erase()
