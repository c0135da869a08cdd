"""Scalars as 0-d tensors (part of `ipu-convert-to-ipu`, its first rewrite).

A scalar of the input (an `f32`, `i32`, `index`, ... SSA value outside a `linalg.generic`
body) becomes a `tensor<T>` (`index` as `i64`), which the rest of the compiler already places,
moves and computes on: it lives on one tile (`ipu-plan` gives a 0-d tensor a tile of its own),
and the generics reading it as a captured value or operand get it by exchange, priced as any
broadcast operand is. Per op:

- scalar `arith` / `math`: the same op on 0-d tensors (`convert-elementwise-to-linalg` makes it
  a one-element generic: a vertex on that tile); `index_cast`s between `index` (`i64`) and
  `iN` are `trunci` / `extsi` / `extui`; an `arith.select` of tensors on a scalar condition
  reads the condition as a broadcast input;
- `tensor.extract`: a 0-d slice at constant coordinates (an exchange from the element's tile),
  else a one-element generic extracting at the coordinates it reads, which `gathers.py` makes
  an `ipu.gather`; `tensor.insert`: a 0-d `insert_slice` at constant coordinates (an exchange
  to the element's tile), else a generic selecting the new value where the coordinates match;
  `tensor.from_elements`: the elements concatenated;
- `linalg.fill` of a scalar that is not a constant, `tensor.splat`, and a generic capturing a
  scalar: the 0-d tensor read as a broadcast input;
- `scf.for`, `scf.if`, `scf.while`, `scf.index_switch`: rebuilt on 0-d tensors (results, block
  arguments, yields); a used `scf.for` induction variable is also carried as a 0-d counter. A
  condition (a switch's index) is read by a `tensor.extract` of the 0-d tensor (and an
  `index_cast`) placed just before its user: the *predicate* of docs/contracts.md L1, which
  ipu-schedule turns into `ipu.predicate` (Poplar's If / RepeatWhileTrue / Switch read a
  device scalar).

A use the rewrite does not know keeps reading the scalar (a `tensor.extract` of its 0-d tensor),
and the checks after it refuse that op at its own location.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import tensor

from ipu_mlir.dialects.ops import tensor_builders as tb

from . import dynamic_slices
from .affine_reads import with_inputs

CONTROL_FLOW = ("scf.for", "scf.if", "scf.while", "scf.index_switch")
# The ops whose operand #0 a predicate (a `tensor.extract` of a 0-d tensor) may be.
PREDICATE_USERS = ("scf.if", "scf.condition")
_INDEX_CASTS = ("arith.index_cast", "arith.index_castui")


def is_scalar(type_: ir.Type) -> bool:
    return isinstance(type_, (ir.IntegerType, ir.FloatType, ir.IndexType))


def tensor_type(type_: ir.Type) -> ir.Type:
    """The 0-d tensor type holding a scalar of `type_` (`index` as `i64`); other types as they are."""
    if isinstance(type_, ir.IndexType):
        type_ = ir.IntegerType.get_signless(64)
    return ir.RankedTensorType.get([], type_) if is_scalar(type_) else type_


def is_predicate(op: ir.OpView) -> bool:
    """A `tensor.extract` of a 0-d tensor read only as the condition of control flow (or as an
    `scf.index_switch`'s index, through an `arith.index_cast` to `index`, which is one too)."""
    name = op.operation.name
    if name == "arith.index_cast":
        uses = list(op.results[0].uses)
        owner = op.operands[0].owner
        return (
            bool(uses)
            and all(use.owner.name == "scf.index_switch" for use in uses)
            and isinstance(owner, ir.OpView)
            and owner.operation.name == "tensor.extract"
            and len(owner.operands) == 1
        )
    if name != "tensor.extract" or len(op.operands) != 1:
        return False
    uses = list(op.results[0].uses)
    return bool(uses) and all(
        (use.owner.name in PREDICATE_USERS and use.operand_number == 0) or is_predicate(use.owner.opview) for use in uses
    )


def has_scalar_code(block: ir.Block) -> bool:
    """Whether `block` (or the control flow in it) holds an op the rewrite changes: one computing
    a scalar (other than a constant), or one writing or carrying scalars."""
    for op in block.operations:
        name = op.operation.name
        if name in ("tensor.insert", "tensor.from_elements", "scf.if", "scf.while", "scf.index_switch"):
            return True
        if name != "arith.constant" and not name.startswith("linalg.") and any(is_scalar(r.type) for r in op.results):
            return True
        if name == "scf.for" and has_scalar_code(op.regions[0].blocks[0]):
            return True
        if name in ("tensor.extract_slice", "tensor.insert_slice") and any(isinstance(v.type, ir.IndexType) for v in op.operands):
            return True  # an offset the program computes
    return False


def scalars_as_tensors(block: ir.Block) -> None:
    """Rewrites the scalars of `block` and of the control flow in it as 0-d tensors."""
    rewrite = _Rewrite()
    rewrite.block(block)
    for view in reversed(rewrite.views):  # scalar views nothing reads any more
        if not list(view.results[0].uses):
            view.erase()


class _Rewrite:
    def __init__(self):
        self.tensors: dict[ir.Value, ir.Value] = {}  # a scalar -> its 0-d tensor
        self.views: list[ir.Operation] = []  # the tensor.extracts standing for rewritten scalars

    def tensor_of(self, value: ir.Value) -> ir.Value | None:
        """The 0-d tensor of the scalar `value`: rewritten, or a constant made a 0-d one."""
        if value in self.tensors:
            return self.tensors[value]
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.name != "arith.constant" or not is_scalar(value.type):
            return None
        attribute = owner.attributes["value"]
        type_ = tensor_type(value.type)
        if isinstance(value.type, ir.IndexType):
            attribute = ir.IntegerAttr.get(type_.element_type, ir.IntegerAttr(attribute).value)
        with ir.InsertionPoint(owner), owner.location:
            splat = ir.DenseElementsAttr.get_splat(type_, attribute)
            self.tensors[value] = ir.Operation.create("arith.constant", results=[type_], attributes={"value": splat}).results[0]
        return self.tensors[value]

    def stand_in(self, old: ir.Value, new: ir.Value, ip: ir.InsertionPoint) -> None:
        """The remaining uses of the scalar `old` read its 0-d tensor `new` through a view."""
        if not list(old.uses):
            self.tensors[old] = new
            return
        view = tensor.ExtractOp(new, [], ip=ip)
        self.views.append(view.operation)
        scalar = view.result
        if isinstance(old.type, ir.IndexType):  # held as i64
            scalar = ir.Operation.create("arith.index_cast", results=[old.type], operands=[scalar], ip=ip).results[0]
            self.views.append(scalar.owner)
        old.replace_all_uses_with(scalar)
        self.tensors[scalar] = self.tensors[old] = new

    def block(self, block: ir.Block) -> None:
        viewing = {view.results[0] for view in self.views}
        for op in list(block.operations):
            name = op.operation.name
            if len(op.results) == 1 and op.results[0] in viewing:
                continue  # a view this rewrite made: it stands for a 0-d tensor already
            with op.location:
                if name in CONTROL_FLOW:
                    self.control_flow(op)
                elif name in ("scf.yield", "scf.condition"):
                    self.terminator(op)
                elif name in ("tensor.extract", "tensor.insert", "tensor.from_elements"):
                    getattr(self, name.split(".")[1])(op)
                elif name in ("linalg.fill", "tensor.splat"):
                    self.fill(op)
                elif name in ("tensor.extract_slice", "tensor.insert_slice"):
                    self.dynamic_slice(op)
                elif name == "linalg.generic":
                    self.generic(op)
                elif name.startswith(("arith.", "math.")) and name != "arith.constant" and not len(op.regions):
                    self.arithmetic(op)

    def replace(self, op: ir.OpView, new: ir.Value) -> None:
        """`op`'s one result is now `new` (a 0-d tensor for a scalar result); `op` goes."""
        old = op.results[0]
        if is_scalar(old.type):
            self.stand_in(old, new, ir.InsertionPoint(op))
        else:
            old.replace_all_uses_with(new)
        op.operation.erase()

    # --- straight-line ops ----------------------------------------------------------------

    def arithmetic(self, op: ir.OpView) -> None:
        values = list(op.operands)
        if op.operation.name == "arith.select" and is_scalar(values[0].type) and isinstance(values[1].type, ir.RankedTensorType):
            self.select_tensors(op)
            return
        if not all(is_scalar(v.type) for v in (*values, *op.results)) or len(op.results) != 1:
            return
        tensors = [self.tensor_of(v) for v in values]
        if not _all(tensors):
            return
        name, result = op.operation.name, op.results[0].type
        with ir.InsertionPoint(op):
            if name in _INDEX_CASTS:
                new = _cast_width(tensors[0], tensor_type(result), unsigned=name == "arith.index_castui")
            else:
                attributes = {name: op.attributes[name] for name in op.attributes}
                new = ir.Operation.create(name, results=[tensor_type(result)], operands=tensors, attributes=attributes).results[0]
        self.replace(op, new)

    def select_tensors(self, op: ir.OpView) -> None:
        """`arith.select` of tensors on a scalar condition: a generic reading the condition's 0-d
        tensor as a broadcast input."""
        condition = self.tensor_of(op.operands[0])
        if condition is None:
            return
        result = ir.RankedTensorType(op.results[0].type)
        identity, broadcast = ir.AffineMap.get_identity(result.rank), ir.AffineMap.get(result.rank, 0, [])
        with ir.InsertionPoint(op):
            init = tensor.EmptyOp(list(result.shape), result.element_type).result

            def body(c: ir.Value, a: ir.Value, b: ir.Value, _: ir.Value) -> ir.Value:
                return ir.Operation.create("arith.select", results=[a.type], operands=[c, a, b]).results[0]

            new = tb.generic([condition, *list(op.operands)[1:]], init, [broadcast, identity, identity, identity], body)
        self.replace(op, new)

    def extract(self, op: ir.OpView) -> None:
        source, *indices = op.operands
        if not indices:  # a 0-d tensor's element (a view of a rewritten scalar among them): the tensor
            self.tensors[op.results[0]] = source
            return
        with ir.InsertionPoint(op):
            new = self.element(source, indices)
        if new is not None:
            self.replace(op, new)

    def element(self, source: ir.Value, indices: list[ir.Value]) -> ir.Value | None:
        """The element of `source` at `indices` as a 0-d tensor (None: indices not rewritten)."""
        shape = ir.RankedTensorType(source.type).shape
        constant = [_constant_index(i) for i in indices]
        element_type = ir.RankedTensorType(source.type).element_type
        if None not in constant:
            result = ir.RankedTensorType.get([], element_type)
            return tensor.ExtractSliceOp(result, source, [], [], [], constant, [1] * len(shape), [1] * len(shape)).result
        coordinates = [self.tensor_of(i) for i in indices]
        if not _all(coordinates):
            return None
        scalar = ir.AffineMap.get(0, 0, [])

        def body(*arguments: ir.Value) -> ir.Value:
            index = ir.IndexType.get()
            at = [ir.Operation.create("arith.index_cast", results=[index], operands=[a]).results[0] for a in arguments[:-1]]
            return tensor.ExtractOp(source, at).result

        init = tensor.EmptyOp([], element_type).result
        return tb.generic(coordinates, init, [scalar] * (len(coordinates) + 1), body)

    def insert(self, op: ir.OpView) -> None:
        scalar, dest, *indices = op.operands
        value = self.tensor_of(scalar)
        shape = list(ir.RankedTensorType(dest.type).shape)
        constant = [_constant_index(i) for i in indices]
        coordinates = [self.tensor_of(i) for i in indices]
        if value is None or (None in constant and not _all(coordinates)):
            return
        with ir.InsertionPoint(op):
            if not shape:
                new = value
            elif None not in constant:
                ones = [1] * len(shape)
                new = tensor.InsertSliceOp(value, dest, [], [], [], constant, ones, ones).result
            else:
                new = _select_at(dest, value, coordinates)
        self.replace(op, new)

    def dynamic_slice(self, op: ir.OpView) -> None:
        """A slice at an offset the program computes: Poplar's dynamicSlice / dynamicUpdate
        (`dynamic_slices.py`); other slices stay as they are."""
        offsets = [v for v in op.operands if isinstance(v.type, ir.IndexType)]
        if len(offsets) != 1 or dynamic_slices.dynamic_dimension(op) is None or self.tensor_of(offsets[0]) is None:
            return
        build = dynamic_slices.extract if op.operation.name == "tensor.extract_slice" else dynamic_slices.insert
        with ir.InsertionPoint(op):
            new = build(op, self.tensor_of(offsets[0]))
        self.replace(op, new)

    def from_elements(self, op: ir.OpView) -> None:
        elements = [self.tensor_of(v) for v in op.operands]
        if not _all(elements):
            return
        shape = list(ir.RankedTensorType(op.results[0].type).shape)
        with ir.InsertionPoint(op):
            if not shape:
                new = elements[0]
            else:
                pieces = [tb.expand(e, [], [1]) for e in elements]
                element_type = ir.RankedTensorType(op.results[0].type).element_type
                flat = ir.RankedTensorType.get([len(pieces)], element_type)
                new = pieces[0] if len(pieces) == 1 else tensor.ConcatOp(flat, 0, pieces).result
                if len(shape) > 1:
                    new = tb.expand(new, [list(range(len(shape)))], shape)
        self.replace(op, new)

    def fill(self, op: ir.OpView) -> None:
        """`linalg.fill` or `tensor.splat` of a scalar that is not a constant: a generic reading
        its 0-d tensor as a broadcast input."""
        scalar = op.operands[0]
        if _is_constant(scalar) and op.operation.name == "linalg.fill":
            return  # a constant fill stays: fusion folds it into its readers
        value = self.tensor_of(scalar)
        if value is None or len(op.operands) > 2 or (op.operation.name == "tensor.splat" and len(op.operands) > 1):
            return
        result = ir.RankedTensorType(op.results[0].type)
        maps = [ir.AffineMap.get(result.rank, 0, []), ir.AffineMap.get_identity(result.rank)]
        with ir.InsertionPoint(op):
            init = op.operands[1] if len(op.operands) == 2 else tensor.EmptyOp(list(result.shape), result.element_type).result
            new = tb.generic([value], init, maps, lambda x, _: x)
        self.replace(op, new)

    def generic(self, op: ir.OpView) -> None:
        """A scalar operand or a scalar captured by the body, read as a broadcast 0-d input."""
        num_inputs = len(op.operands) - len(op.results)
        for position in range(num_inputs):
            value = op.operands[position]
            if is_scalar(value.type) and not _is_constant(value) and not isinstance(value.type, ir.IndexType):
                tensor_value = self.tensor_of(value)
                if tensor_value is not None:
                    op.operands[position] = tensor_value
        captured: dict[ir.Value, ir.Value] = {}
        for inner in op.regions[0].blocks[0].operations:
            for value in inner.operands:
                if is_scalar(value.type) and not _is_constant(value) and not _inside(value, op) and value not in captured:
                    tensor_value = self.tensor_of(value)
                    if tensor_value is not None:
                        captured[value] = tensor_value
        if not captured:
            return
        rank = len(ir.ArrayAttr(op.attributes["iterator_types"]))
        new, arguments = with_inputs(op, list(captured.values()), [ir.AffineMap.get(rank, 0, [])] * len(captured))
        block = new.regions[0].blocks[0]
        for (old, _), argument in zip(captured.items(), arguments):
            if isinstance(old.type, ir.IndexType):  # carried as i64
                with ir.InsertionPoint.at_block_begin(block), new.location:
                    argument = ir.Operation.create("arith.index_cast", results=[old.type], operands=[argument]).results[0]
            for inner in block.operations:
                for k, operand in enumerate(inner.operands):
                    if operand == old:
                        inner.operands[k] = argument

    # --- control flow ---------------------------------------------------------------------

    def predicate(self, value: ir.Value, ip: ir.InsertionPoint) -> ir.Value:
        """The condition (or switch index) `value` read from its 0-d tensor just before its user."""
        condition = self.tensor_of(value)
        if condition is None:
            return value
        read = tensor.ExtractOp(condition, [], ip=ip).result
        if isinstance(value.type, ir.IndexType):  # held as i64
            read = ir.Operation.create("arith.index_cast", results=[value.type], operands=[read], ip=ip).results[0]
        return read

    def control_flow(self, op: ir.OpView) -> None:
        """`op` rebuilt with 0-d tensors for its scalar operands, results and block arguments,
        its blocks moved over and rewritten."""
        name = op.operation.name
        operands = list(op.operands)
        ip = ir.InsertionPoint(op)
        if name == "scf.for":
            carried = operands[3:]
            counter = list(op.regions[0].blocks[0].arguments)[0]
            counting = bool(list(counter.uses)) and _all(self.tensor_of(v) for v in operands[:3])
            inits = [self.tensor_of(v) if is_scalar(v.type) else v for v in carried]
            if not _all(inits):
                return
            operands = operands[:3] + inits + ([self.tensor_of(operands[0])] if counting else [])
        elif name in ("scf.if", "scf.index_switch"):
            operands = [self.predicate(operands[0], ip)]
            counting = False
        else:  # scf.while
            operands = [self.tensor_of(v) if is_scalar(v.type) else v for v in operands]
            counting = False
            if not _all(operands):
                return
        results = [tensor_type(r.type) for r in op.results] + ([tensor_type(operands[0].type)] if counting else [])
        attributes = {name: op.attributes[name] for name in op.attributes}
        new = ir.Operation.create(name, results=results, operands=operands, attributes=attributes, regions=len(op.regions), ip=ip)
        for old_region, region in zip(op.regions, new.regions):
            for old_block in old_region.blocks:
                arguments = list(old_block.arguments)
                types = [a.type if k == 0 and name == "scf.for" else tensor_type(a.type) for k, a in enumerate(arguments)]
                if counting:
                    types.append(tensor_type(operands[0].type))
                block = region.blocks.append(*types, arg_locs=[op.location] * len(types))
                for inner in list(old_block.operations):
                    block.append(inner.operation)
                start = ir.InsertionPoint.at_block_begin(block)
                for old, argument in zip(arguments, block.arguments):
                    if is_scalar(old.type) and not (name == "scf.for" and old == arguments[0]):
                        self.stand_in(old, argument, start)
                    else:
                        old.replace_all_uses_with(argument)
                if counting:
                    self.tensors[block.arguments[0]] = block.arguments[len(types) - 1]
                self.block(block)
        after = ir.InsertionPoint(op)
        for old, result in zip(op.results, new.results):
            if is_scalar(old.type):
                self.stand_in(old, result, after)
            else:
                old.replace_all_uses_with(result)
        op.operation.erase()

    def terminator(self, op: ir.OpView) -> None:
        """A yield (or condition) of 0-d tensors for its scalars; a counting loop's yield adds
        the step to its counter."""
        operands = list(op.operands)
        ip = ir.InsertionPoint(op)
        first = 0
        if op.operation.name == "scf.condition":
            operands[0], first = self.predicate(operands[0], ip), 1
        values = operands[:first] + [self.tensor_of(v) if is_scalar(v.type) else v for v in operands[first:]]
        if not _all(values):
            return
        parent = op.operation.parent
        block_types = [a.type for a in op.operation.block.arguments]
        if parent.name == "scf.for" and len(block_types) == len(values) + 2:  # the induction variable's counter
            counter, step = op.operation.block.arguments[len(block_types) - 1], self.tensor_of(parent.operands[2])
            values.append(ir.Operation.create("arith.addi", results=[counter.type], operands=[counter, step], ip=ip).results[0])
        ir.Operation.create(op.operation.name, operands=values, ip=ip)
        op.operation.erase()


def _cast_width(value: ir.Value, result: ir.Type, unsigned: bool) -> ir.Value:
    """`value` (a 0-d integer tensor) as the integer tensor type `result`, as `index_cast` (or
    `index_castui`) casts it."""
    source = ir.IntegerType(ir.RankedTensorType(value.type).element_type).width
    target = ir.IntegerType(ir.RankedTensorType(result).element_type).width
    if source == target:
        return value
    name = "arith.trunci" if target < source else "arith.extui" if unsigned else "arith.extsi"
    return ir.Operation.create(name, results=[result], operands=[value]).results[0]


def _select_at(dest: ir.Value, value: ir.Value, coordinates: list[ir.Value]) -> ir.Value:
    """`dest` with `value` (0-d) at the 0-d i64 `coordinates`: a generic comparing each point's
    indices (iota inputs) with them."""
    dest_type = ir.RankedTensorType(dest.type)
    rank = dest_type.rank
    i64 = ir.IntegerType.get_signless(64)
    iotas = []
    for size in dest_type.shape:
        iota_type = ir.RankedTensorType.get([size], i64)
        attribute = ir.DenseElementsAttr.get(np.arange(size, dtype=np.int64), type=iota_type)
        iotas.append(ir.Operation.create("arith.constant", results=[iota_type], attributes={"value": attribute}).results[0])
    identity = ir.AffineMap.get_identity(rank)
    scalar = ir.AffineMap.get(rank, 0, [])
    maps = [identity, scalar] + [scalar] * rank + [ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d)]) for d in range(rank)] + [identity]

    def body(old: ir.Value, new: ir.Value, *rest: ir.Value) -> ir.Value:
        wanted, indices = rest[:rank], rest[rank : 2 * rank]
        i1 = ir.IntegerType.get_signless(1)
        predicate = ir.IntegerAttr.get(i64, 0)  # eq
        match = None
        for index, at in zip(indices, wanted):
            equal = ir.Operation.create("arith.cmpi", results=[i1], operands=[index, at], attributes={"predicate": predicate}).results[0]
            match = equal if match is None else ir.Operation.create("arith.andi", results=[i1], operands=[match, equal]).results[0]
        return ir.Operation.create("arith.select", results=[old.type], operands=[match, new, old]).results[0]

    init = tensor.EmptyOp(list(dest_type.shape), dest_type.element_type).result
    return tb.generic([dest, value, *coordinates, *iotas], init, maps, body)


def _constant_index(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant" or not isinstance(value.type, ir.IndexType):
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def _is_constant(value: ir.Value) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.name == "arith.constant"


def _inside(value: ir.Value, op: ir.OpView) -> bool:
    """Whether `value` is defined in `op`'s regions (at any depth)."""
    owner = value.owner
    current = owner.owner if isinstance(owner, ir.Block) else owner.operation
    while current is not None:
        parent = current.parent if isinstance(current, ir.Operation) else current.operation.parent
        if parent is None:
            return False
        if parent == op.operation:
            return True
        current = parent
    return False


def _all(values) -> bool:
    """Whether no value is None (`None in values` would compare MLIR values with None)."""
    return all(v is not None for v in values)
