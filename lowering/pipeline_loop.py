"""ipu-pipeline's steady state as one loop (Poplar's Repeat), for `pipeline.py`'s Pipeliner.

With S stages and M micro-batches, steps `S - 1 .. M - 1` run every stage: stage `s` on
micro-batch `t - s`. Those `M - S + 1` steps are one `scf.for` whose body is one step, so the
IR holds each op of the model a bounded number of times (fill, body, flush) whatever M is:

- each stage that reads the batch or writes an output carries its micro-batch number, a 0-d
  counter on its own IPU (starting at `S - 1 - s`), and selects its micro-batch of an input by
  a dynamic slice of the input seen as `M x rows x ..` (Poplar's dynamicSlice,
  `dynamic_slices.py`);
- a value stage `p` makes and a later stage `q` reads was made `q - p` steps earlier: the loop
  carries it down a line of `q - p` tensors (a value between neighbouring stages: one), the
  stash Poplar's pipelines hold between their stages;
- an output is carried as `M x rows x ..`, each step writing its micro-batch by a dynamic update
  (dynamicUpdate); the micro-batches of the fill and the flush are inserted after the loop.

The arithmetic of every micro-batch is the unrolled form's: the outputs are equal bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from ipu_mlir.dialects.ops import tensor_builders as tb

from .dynamic_slices import extract_rows, update_rows
from .pipeline_training import PIPELINE_CYCLE_ATTR
from .plan import IPU_ID_ATTR


@dataclass(eq=False)
class LoopStage:
    """A stage inside the loop: the key of its micro-batch's values in `Pipeliner.micro`."""

    stage: int
    ipu: ir.Attribute
    loop: ir.Operation | None = None
    counter: ir.Value | None = None
    views: dict = field(default_factory=dict)  # an input -> it seen as M x rows x ..

    def __hash__(self) -> int:
        return id(self)


def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def _index_constant(value: int) -> ir.Value:
    index = ir.IndexType.get()
    return ir.Operation.create("arith.constant", results=[index], attributes={"value": ir.IntegerAttr.get(index, value)}).results[0]


def _scalar_constant(value: int) -> ir.Value:
    type_ = ir.RankedTensorType.get([], _i64())
    splat = ir.DenseElementsAttr.get_splat(type_, ir.IntegerAttr.get(_i64(), value))
    return ir.Operation.create("arith.constant", results=[type_], attributes={"value": splat}).results[0]


def _counter(start: int) -> ir.Value:
    """A 0-d i64 tensor holding `start`, computed (a one-element generic) rather than a constant."""
    type_ = ir.RankedTensorType.get([], _i64())
    empty = ir.Operation.create("tensor.empty", results=[type_]).results[0]
    value = ir.Operation.create("arith.constant", results=[_i64()], attributes={"value": ir.IntegerAttr.get(_i64(), start)}).results[0]
    return _fill(empty, value)


def _tag(ops: list[ir.OpView], ipu: ir.Attribute) -> None:
    for op in ops:
        if IPU_ID_ATTR not in op.attributes and op.operation.name != "arith.constant":
            op.attributes[IPU_ID_ATTR] = ipu


def _ops_since(block: ir.Block, count: int, before_terminator: bool) -> list[ir.OpView]:
    """The ops added to `block` since it held `count`: at its end, or before its terminator."""
    ops = list(block.operations)
    end = len(ops) - (1 if before_terminator else 0)
    return ops[count - (1 if before_terminator else 0) : end]


class SteadyLoop:
    """Builds the loop at the current insertion point (after the fill's steps), then maps the
    loop's results for the flush (`Pipeliner.micro`) and builds the outputs (`outputs`)."""

    def __init__(self, pipeliner, lists: list[list[ir.OpView]], outputs: list[ir.Value]):
        self.p, self.lists, self.returned = pipeliner, lists, outputs
        self.count, self.stages = pipeliner.count, len(lists)
        self.stage_of = {r: s for s, ops in enumerate(lists) for op in ops for r in op.results}
        self.ipus = [lists[s][0].attributes[IPU_ID_ATTR] for s in range(self.stages)]
        # (value, its stage p) -> the longest distance q - p to a stage q reading it
        self.lines: dict[ir.Value, int] = {}
        for q, ops in enumerate(lists):
            for op in ops:
                for operand in op.operands:
                    p = self.stage_of.get(operand)
                    if p is not None and p < q:
                        self.lines[operand] = max(self.lines.get(operand, 0), q - p)
        self.outputs = [v for v in dict.fromkeys(outputs) if v in self.p.batched]
        self.counted = {s for s in range(self.stages) if self._reads_batch(s)} | {self.stage_of[v] for v in self.outputs}
        self.keys = [LoopStage(s, self.ipus[s]) for s in range(self.stages)]
        self.results: dict[ir.Value, ir.Value] = {}  # an output -> its M x rows x .. tensor after the loop

    @staticmethod
    def applies(pipeliner, lists: list[list[ir.OpView]], outputs: list[ir.Value]) -> bool:
        """Whether the loop form applies: at least two steady steps, every batched output made
        by a stage."""
        stage_of = {r for ops in lists for op in ops for r in op.results}
        steady = pipeliner.count - len(lists) + 1
        return steady >= 2 and all(v in stage_of for v in outputs if v in pipeliner.batched)

    def _reads_batch(self, s: int) -> bool:
        """Whether stage `s` reads rows of a value no stage makes (an input): a dynamic slice."""
        return any(
            op.operands[i] not in self.stage_of and (op.operands[i] in self.p.inputs or not self.p._alike(op.operands[i]))
            for op in self.lists[s]
            for i in self.p._batch_positions(op)
        )

    def build(self) -> None:
        block = self.p.block
        lines = list(self.lines.items())
        inits: list[ir.Value] = []
        for value, length in lines:  # the line holds micro-batches t-p-1 .. t-p-length at step t
            p = self.stage_of[value]
            inits += [self.p.micro[self.stages - 1 - p - j][value] for j in range(1, length + 1)]
        accumulators = []
        for value in self.outputs:
            p = self.stage_of[value]
            count = len(list(block.operations))
            accumulators.append(self._zeros(value))
            _tag(_ops_since(block, count, before_terminator=True), self.ipus[p])
        inits += accumulators
        counted = sorted(self.counted)
        for s in counted:  # made by a generic on the stage's IPU, so the plan keeps it there
            count = len(list(block.operations))
            inits.append(_counter(self.stages - 1 - s))
            _tag(_ops_since(block, count, before_terminator=True), self.ipus[s])
        loop = ir.Operation.create(
            "scf.for",
            results=[v.type for v in inits],
            operands=[_index_constant(self.stages - 1), _index_constant(self.count), _index_constant(1), *inits],
            regions=1,
            # its body one pipeline cycle: ipu-schedule copies what crosses IPUs into it first
            attributes={PIPELINE_CYCLE_ATTR: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), self.stages - 1)},
        )
        body = loop.regions[0].blocks.append(ir.IndexType.get(), *[v.type for v in inits])
        carried = list(body.arguments)[1:]
        position = 0
        for value, length in lines:
            self._read_line(value, carried[position : position + length])
            position += length
        carried_outputs = carried[position : position + len(self.outputs)]
        counters = dict(zip(counted, carried[position + len(self.outputs) :]))
        for key in self.keys:
            key.loop, key.counter = loop, counters.get(key.stage)
        with ir.InsertionPoint(body):
            for position in range(max(len(ops) for ops in self.lists)):  # interleaved, as the unrolled steps
                for s in range(self.stages):
                    if position < len(self.lists[s]):
                        self.p._emit(self.lists[s][position], self.keys[s])
            yields = self._line_yields(lines, carried)
            yields += [self._update(v, acc) for v, acc in zip(self.outputs, carried_outputs)]
            yields += [self._next(s, counters[s]) for s in counted]
            ir.Operation.create("scf.yield", operands=yields)
        for op in list(body.operations):  # constants live before the loop, as canonicalize leaves them
            if op.operation.name == "arith.constant":
                op.operation.move_before(loop)
        results = list(loop.results)
        position = 0
        for value, length in lines:
            p = self.stage_of[value]
            for j in range(1, length + 1):
                if self.count - p - j >= 0:
                    self.p.micro[self.count - p - j][value] = results[position + j - 1]
            position += length
        self.results = dict(zip(self.outputs, results[position : position + len(self.outputs)]))

    def _read_line(self, value: ir.Value, line: list[ir.Value]) -> None:
        """Each later stage `q` reads `value` of its micro-batch: the line's entry `q - p`."""
        p = self.stage_of[value]
        for q in range(p + 1, p + len(line) + 1):
            self.p.micro[self.keys[q]][value] = line[q - p - 1]

    def _line_yields(self, lines, carried: list[ir.Value]) -> list[ir.Value]:
        """Each line moves down one: the stage's new value enters, the oldest leaves."""
        yields, position = [], 0
        for value, length in lines:
            p = self.stage_of[value]
            yields += [self.p.micro[self.keys[p]][value], *carried[position : position + length - 1]]
            position += length
        return yields

    # A stage's micro-batch: its rows of an input, its output written, its counter moved on.

    def rows(self, key: LoopStage, whole: ir.Value, user: ir.OpView) -> ir.Value:
        """`whole`'s rows of `key`'s micro-batch: a dynamic slice of it seen as M x rows x .."""
        shape = list(ir.RankedTensorType(whole.type).shape)
        rows = shape[0] // self.count
        view = key.views.get(whole)
        if view is None:
            with ir.InsertionPoint(key.loop):
                view = _expand_first(whole, [self.count, rows])
                _tag([view.owner], key.ipu)
            key.views[whole] = view
        body = key.loop.regions[0].blocks[0]
        count = len(list(body.operations))
        one = extract_rows(view, key.counter, 1, user.location)
        sliced = _collapse_first(one)
        _tag(_ops_since(body, count, before_terminator=False), key.ipu)
        return sliced

    def _update(self, value: ir.Value, accumulator: ir.Value) -> ir.Value:
        key = self.keys[self.stage_of[value]]
        body = key.loop.regions[0].blocks[0]
        count = len(list(body.operations))
        new = self.p.micro[key][value]
        shape = list(ir.RankedTensorType(new.type).shape)
        expanded = _expand_first(new, [1, shape[0]])
        updated = update_rows(accumulator, expanded, key.counter, new.owner.location)
        _tag(_ops_since(body, count, before_terminator=False), key.ipu)
        return updated

    def _next(self, s: int, counter: ir.Value) -> ir.Value:
        body = self.keys[s].loop.regions[0].blocks[0]
        count = len(list(body.operations))
        one = _scalar_constant(1)
        empty = ir.Operation.create("tensor.empty", results=[counter.type]).results[0]
        scalar = ir.AffineMap.get(0, 0, [])
        new = _generic([counter, one], empty, [scalar] * 3, "arith.addi")
        _tag(_ops_since(body, count, before_terminator=False), self.ipus[s])
        return new

    def _zeros(self, value: ir.Value) -> ir.Value:
        """The output's M x rows x .. tensor before the loop: zeros (a generic filling them)."""
        type_ = ir.RankedTensorType(value.type)
        shape = [self.count, type_.shape[0] // self.count, *type_.shape[1:]]
        result = ir.RankedTensorType.get(shape, type_.element_type)
        empty = ir.Operation.create("tensor.empty", results=[result]).results[0]
        zero = ir.Operation.create(
            "arith.constant", results=[type_.element_type], attributes={"value": tb.zero_attr(type_.element_type)}
        ).results[0]
        return _fill(empty, zero)

    def output(self, value: ir.Value) -> ir.Value:
        """The returned `value` of the whole batch: the loop's micro-batches with the fill's and
        the flush's inserted (static slices), as the batch."""
        p = self.stage_of[value]
        whole = self.results[value]
        shape = list(ir.RankedTensorType(whole.type).shape)
        unrolled = [m for m in range(self.count) if m <= self.stages - 2 - p or m >= self.count - p]
        for m in unrolled:
            part = _expand_first(self.p.micro[m][value], [1, shape[1]])
            _tag([part.owner], self.ipus[p])
            insert = ir.Operation.create(
                "tensor.insert_slice",
                results=[whole.type],
                operands=[part, whole],
                attributes={
                    "static_offsets": ir.DenseI64ArrayAttr.get([m] + [0] * (len(shape) - 1)),
                    "static_sizes": ir.DenseI64ArrayAttr.get([1, *shape[1:]]),
                    "static_strides": ir.DenseI64ArrayAttr.get([1] * len(shape)),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, 0, 0]),
                    IPU_ID_ATTR: self.ipus[p],
                },
            )
            whole = insert.results[0]
        batch = _collapse_first(whole)
        _tag([batch.owner], self.ipus[p])
        return batch


def _expand_first(value: ir.Value, sizes: list[int]) -> ir.Value:
    """`value` with its first dimension split into `sizes` (a view)."""
    type_ = ir.RankedTensorType(value.type)
    return tb.expand(value, [[0, 1]] + [[d + 1] for d in range(1, type_.rank)], [*sizes, *type_.shape[1:]])


def _collapse_first(value: ir.Value) -> ir.Value:
    """`value` with its first two dimensions joined (a view)."""
    return tb.collapse(value, [[0, 1]] + [[d] for d in range(2, ir.RankedTensorType(value.type).rank)])


def _fill(empty: ir.Value, scalar: ir.Value) -> ir.Value:
    rank = ir.RankedTensorType(empty.type).rank
    return _generic([], empty, [ir.AffineMap.get_identity(rank)], None, yielded=scalar)


def _generic(inputs, init, maps, name, yielded=None) -> ir.Value:
    def body(*arguments):
        if yielded is not None:
            return yielded
        return ir.Operation.create(name, results=[arguments[0].type], operands=list(arguments[: len(inputs)])).results[0]

    return tb.generic(inputs, init, maps, body)
