"""Fuse large trees of element-wise `linalg.generic`s into one generic each, in time linear in
their ops (a step of `ipu-convert-to-ipu`, before upstream `linalg-fuse-elementwise-ops`).

Upstream's pattern fuses one producer into its consumer at a time, copying the fused body
each time: a chain of N element-wise ops costs O(N^2) body copies (measured through
ipu-compile, chains of `linalg.add`: 2,000 ops 4.2 s, 4,000 ops 24.9 s). Here a whole tree is
found first and its bodies are copied once into one new generic.

A producer joins its consumer's tree under upstream's own conditions, restricted to the
simplest case: both all-parallel single-result generics whose result map is the identity, the
producer's result used once, as an input the consumer reads through the identity map, and
the producer's body not reading its init. Its inputs (with their maps) become inputs of the
fused generic; a (value, map) pair read by several members is read once. Trees smaller than
`MIN_TREE` are left to upstream, whose cost on them is bounded, so that the IR of ordinary
models is what upstream makes.
"""

from __future__ import annotations

from mlir import ir

from ipu_mlir.dialects.ops import tensor_builders as tb

# Assumption: upstream's quadratic cost on trees below 16 ops is negligible (at most 120 body
# copies each), and models' element-wise chains (GELU, normalizations) are shorter.
MIN_TREE = 16


def fuse_elementwise_trees(block: ir.Block) -> None:
    members = [op for op in block.operations if _fusable(op)]
    member_set = {op.operation for op in members}
    parent: dict[ir.Operation, ir.Operation] = {}
    fused_input: dict[tuple[ir.Operation, int], ir.Operation] = {}  # (consumer, input index) -> producer
    for producer in members:
        consumer = _only_consumer(producer, member_set)
        if consumer is not None:
            parent[producer.operation] = consumer[0].operation
            fused_input[consumer[0].operation, consumer[1]] = producer.operation
    size: dict[ir.Operation, int] = {}
    for op in members:  # producers come first in the block: their sizes are final
        size[op.operation] = size.get(op.operation, 0) + 1
        if op.operation in parent:
            size[parent[op.operation]] = size.get(parent[op.operation], 0) + size[op.operation]
    for root in [op for op in members if op.operation not in parent and size[op.operation] >= MIN_TREE]:
        _fuse_tree(root, _tree(root.operation, fused_input), fused_input)


def _fusable(op: ir.OpView) -> bool:
    if op.operation.name != "linalg.generic" or len(op.results) != 1 or len(op.outputs) != 1:
        return False
    if any(str(iterator) != "#linalg.iterator_type<parallel>" for iterator in op.attributes["iterator_types"]):
        return False
    maps = _maps(op)
    if maps[-1] != ir.AffineMap.get_identity(maps[-1].n_dims):
        return False
    return all(len(inner.regions) == 0 for inner in op.regions[0].blocks[0].operations)


def _only_consumer(producer: ir.OpView, members: set[ir.Operation]) -> tuple[ir.OpView, int] | None:
    """The member reading `producer`'s result, and at which input, when it may absorb it."""
    uses = list(producer.results[0].uses)
    if len(uses) != 1 or uses[0].owner.operation not in members:
        return None
    consumer, index = uses[0].owner.operation.opview, uses[0].operand_number
    maps = _maps(consumer)
    if index >= len(consumer.inputs) or maps[index] != ir.AffineMap.get_identity(maps[index].n_dims):
        return None
    if list(producer.regions[0].blocks[0].arguments[-1].uses):  # the body reads its init
        return None
    return consumer, index


def _tree(root: ir.Operation, fused_input: dict[tuple[ir.Operation, int], ir.Operation]) -> list[ir.OpView]:
    """The members of `root`'s tree, producers before their consumers."""
    order: list[ir.OpView] = []
    stack = [(root.opview, False)]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            order.append(op)
            continue
        stack.append((op, True))
        for index in reversed(range(len(op.inputs))):
            producer = fused_input.get((op.operation, index))
            if producer is not None:
                stack.append((producer.opview, False))
    return order


def _fuse_tree(root: ir.OpView, members: list[ir.OpView], fused_input: dict[tuple[ir.Operation, int], ir.Operation]) -> None:
    inputs: list[ir.Value] = []
    maps: list[ir.AffineMap] = []
    position: dict[tuple[ir.Value, str], int] = {}
    for op in members:
        for index, (value, affine_map) in enumerate(zip(op.inputs, _maps(op))):
            key = (value, str(affine_map))
            if (op.operation, index) not in fused_input and key not in position:
                position[key] = len(inputs)
                inputs.append(value)
                maps.append(affine_map)

    def body(*arguments: ir.Value) -> ir.Value:
        yielded: dict[ir.Operation, ir.Value] = {}
        for op in members:
            block = op.regions[0].blocks[0]
            mapped: dict[ir.Value, ir.Value] = {block.arguments[-1]: arguments[-1]}
            for index, (value, affine_map) in enumerate(zip(op.inputs, _maps(op))):
                producer = fused_input.get((op.operation, index))
                mapped[block.arguments[index]] = yielded[producer] if producer is not None else arguments[position[value, str(affine_map)]]
            operations = list(block.operations)
            for inner in operations[:-1]:
                clone = inner.operation.clone()
                for number, operand in enumerate(clone.operands):
                    clone.operands[number] = mapped.get(operand, operand)
                mapped.update(zip(inner.results, clone.results))
            result = operations[-1].operands[0]
            yielded[op.operation] = mapped.get(result, result)
        return yielded[root.operation]

    with ir.InsertionPoint(root), root.location:
        fused = tb.generic(inputs, root.outputs[0], [*maps, _maps(root)[-1]], body)
    root.results[0].replace_all_uses_with(fused)
    for op in reversed(members):
        op.operation.erase()


def _maps(op: ir.OpView) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(attribute).value for attribute in op.attributes["indexing_maps"]]
