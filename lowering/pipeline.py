"""`ipu-pipeline` (L1 -> L1): a sharded program's IPUs as pipeline stages, micro-batches flowing through."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from mlir import ir

from ipu_mlir.dialects.ops import record_of
from ipu_mlir.dialects.ops.space import Space
from ipu_mlir.target.diagnostics import op_error

from .pass_registry import ModulePass, register_pass
from .pipeline_loop import LoopStage, SteadyLoop
from .pipeline_training import PIPELINE_CYCLE_ATTR, order_training_step
from .plan import IPU_ID_ATTR
from .resident import resident_names
from .select_entry import public_functions


def batched_inputs_option() -> Any:
    """The `inputs` option of ipu-pipeline and ipu-replicate: which arguments carry the batch."""
    return field(
        default=0,
        metadata={
            "help": "leading arguments that are batched inputs (default 0: those an op reads along its batch dimension)",
            "minimum": 0,
        },
    )


@register_pass
@dataclass
class Pipeline(ModulePass):
    """Run the IPUs `ipu-shard` placed layers on as pipeline stages over micro-batches (L1).

    PopTorch's `PipelinedExecution`: the batch dimension (the first) of each input (an argument
    an op reads along its batch dimension, not a weight; or the first `inputs`) is split into
    `micro-batches` slices, and in pipeline step `t` stage `s` (the `s`-th IPU used) works on
    micro-batch `t - s`, so the stages' supersteps run at once on their own IPUs
    (ipu-merge-supersteps puts independent work on disjoint tiles in one superstep). The
    `M + S - 1` steps hold a fill and a flush of `S - 1` steps each. A stage's activations for
    the next reach it over the IPU-Links (each op marked with its step, `ipu.pipeline_cycle`:
    ipu-schedule copies the values crossing into a step in one link phase at its start); a value
    skipping stages goes straight to its user's IPU. The outputs are the
    micro-batches' outputs concatenated along the batch dimension: per micro-batch it is the
    sharded program's arithmetic on that micro-batch.

    The fill's and the flush's steps are unrolled; the `M - S + 1` steps between them, where every
    stage works, are one `scf.for` whose body is one step (Poplar's Repeat; lowering/pipeline_loop.py):
    each stage selects its micro-batch of an input by a dynamic slice at a counter it carries,
    values between stages are carried from one step to the next, and each output is written by a
    dynamic update. So each op of the model appears at most 2S - 1 times whatever M is (the fill,
    the body, the flush); weights and other work on no input once. With `unroll` (or fewer than
    two steady steps) every step is emitted, each op once per micro-batch. A value of the whole batch computed from no input is made once
    at the micro-batch's shape when its rows are alike for every micro-batch (BERT's token-type
    ids broadcast over the batch), else sliced per micro-batch. An op whose result is not the
    micro-batch's alone (a reduction over the batch, as BatchNorm's batch statistics, a slice of
    it), an op it cannot split, a value flowing from a later stage to an earlier one, fewer
    micro-batches than stages and a batch not divisible by them are refused at the op or the
    function.

    A training step (a function with device variables: frontends/joint.py's joint step, built
    with one micro-batch's forward and backward in a loop over its `micro-batches`) is not split:
    its loop is unrolled into pipeline order (`order_training_step`, lowering/pipeline_training.py).

    Before (`ipu-pipeline{micro-batches=2}`, after ipu-shard on 2 IPUs):

        %h = "ipu.matmul"(%x, %w1) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, ...) -> tensor<8x64xf32>
        %y = "ipu.matmul"(%h, %w2) {ipu.ipu_id = 1 : i64} : (tensor<8x64xf32>, ...) -> tensor<8x64xf32>
        return %y : tensor<8x64xf32>

    After (step 0: stage 0 on micro-batch 0; step 1: both stages; step 2: stage 1):

        %x0 = tensor.extract_slice %x[0, 0] [4, 64] [1, 1] {ipu.ipu_id = 0 : i64}
        %h0 = "ipu.matmul"(%x0, %w1) {ipu.ipu_id = 0 : i64} : ... -> tensor<4x64xf32>
        %x1 = tensor.extract_slice %x[4, 0] [4, 64] [1, 1] {ipu.ipu_id = 0 : i64}
        %h1 = "ipu.matmul"(%x1, %w1) {ipu.ipu_id = 0 : i64} : ... -> tensor<4x64xf32>
        %y0 = "ipu.matmul"(%h0, %w2) {ipu.ipu_id = 1 : i64} : ... -> tensor<4x64xf32>
        %y1 = "ipu.matmul"(%h1, %w2) {ipu.ipu_id = 1 : i64} : ... -> tensor<4x64xf32>
        %y = tensor.concat dim(0) %y0, %y1 {ipu.ipu_id = 1 : i64} : ... -> tensor<8x64xf32>
    """

    name = "ipu-pipeline"

    micro_batches: int = field(default=1, metadata={"help": "micro-batches the batch is split into (1: no pipelining)", "minimum": 1})
    inputs: int = batched_inputs_option()
    unroll: bool = field(default=False, metadata={"help": "emit every step, the steady state too (else the steady state is one scf.for)"})

    def run(self, module: ir.Operation) -> None:
        if self.micro_batches == 1:
            return
        for function in public_functions(module):
            if resident_names(function)[0]:  # device variables: a training step, its loop over micro-batches unrolled
                order_training_step(function, self.micro_batches)
            else:
                Pipeliner(function, self.micro_batches, self.inputs).run(loop=not self.unroll)


class Pipeliner:
    """Splits the batch of `function`'s inputs into `micro_batches` and emits each op on inputs
    once per micro-batch, in pipeline steps (`run`); ipu-replicate's replicas reuse the split.
    `pass_name` and `option` name the pass and its count in errors."""

    def __init__(
        self, function: ir.OpView, micro_batches: int, inputs: int, pass_name: str = "ipu-pipeline", option: str = "micro-batches"
    ):
        self.function, self.count, self.pass_name = function, micro_batches, pass_name
        self.block = function.regions[0].blocks[0]
        self.index_type = ir.IntegerType.get_signless(64)
        arguments = list(self.block.arguments)
        if inputs > len(arguments):
            raise op_error(function, f"{pass_name}: inputs={inputs}, but the function has {len(arguments)} arguments")
        self.inputs = arguments[:inputs] if inputs else [a for a in arguments if _read_along_batch_by_a_user(a)]
        if not self.inputs:
            raise op_error(function, f"{pass_name}: no argument is read along a batch dimension: nothing to split")
        for argument in self.inputs:
            shape = _shape(argument)
            if not shape or shape[0] % micro_batches:
                raise op_error(
                    function,
                    f"{pass_name}: input {argument.get_name()} of type {argument.type} has no batch dimension "
                    f"divisible by {option}={micro_batches}",
                )
        self.batched: set[ir.Value] = set(self.inputs)
        # Per micro-batch (or `LoopStage`, a stage's in the steady loop): original value -> its
        # micro-batch's value.
        self.micro: dict[int | LoopStage, dict[ir.Value, ir.Value]] = defaultdict(dict)
        # Per micro-batch: a value on no input -> its copy for it (a replica's weights; a
        # pipeline has one copy, the value itself).
        self.copies: dict[int | LoopStage, dict[ir.Value, ir.Value]] = defaultdict(dict)
        self.loop: SteadyLoop | None = None
        # (value, `_sharing`) -> a value alike for every micro-batch (an init) at their shape
        self.resized: dict[tuple[ir.Value, int], ir.Value] = {}
        self.alike: dict[ir.Value, bool] = {}  # `_alike`'s answers

    def run(self, loop: bool = True) -> None:
        """Emits the steps; with `loop`, the steady state's as one `scf.for` (pipeline_loop.py)."""
        operations = list(self.block.operations)
        terminator, body = operations[-1], operations[:-1]
        shared, stages = [], {}  # ops on no input, done once; stage -> its ops on inputs, in order
        for op in body:
            if not self._batch_positions(op):
                shared.append(op)
                continue
            stage = self._stage(op)
            stages.setdefault(stage, []).append(op)
            self.batched.update(op.results)
        stage_ids = sorted(stages)
        num_stages = len(stage_ids)
        if num_stages > self.count:
            raise op_error(
                self.function, f"ipu-pipeline: micro-batches={self.count} is fewer than the {num_stages} pipeline stages (IPUs {stage_ids})"
            )
        self._check_forward(stages)
        with ir.InsertionPoint(terminator), self.function.location:
            for op in shared:
                op.operation.move_before(terminator)
            lists = [stages[s] for s in stage_ids]
            steps = range(self.count + num_stages - 1)
            outputs = list(terminator.operands)
            if loop and SteadyLoop.applies(self, lists, outputs):
                self.loop = SteadyLoop(self, lists, outputs)
                steps = [*range(num_stages - 1), *range(self.count, self.count + num_stages - 1)]
            for step in steps:
                if self.loop is not None and step == self.count:
                    self.loop.build()
                self._step(lists, step)
            if self.loop is not None and num_stages == 1:
                self.loop.build()
            self._return(terminator)
        self._erase_unused(body)

    def _step(self, lists: list[list[ir.OpView]], step: int) -> None:
        """Pipeline step `step`: stage `s` on micro-batch `step - s`, the stages' ops interleaved."""
        active = [(s, step - s) for s in range(len(lists)) if 0 <= step - s < self.count]
        for position in range(max(len(lists[s]) for s, _ in active)):
            for s, micro_batch in active:
                if position < len(lists[s]):
                    clone = self._emit(lists[s][position], micro_batch)
                    clone.attributes[PIPELINE_CYCLE_ATTR] = ir.IntegerAttr.get(self.index_type, step)  # ipu-schedule's link phases

    def _erase_unused(self, body: list[ir.OpView]) -> None:
        """The original ops, now unused (those on inputs), last first."""
        for op in reversed(body):
            if not any(len(list(r.uses)) for r in op.results):
                op.operation.erase()

    # What splits, and where.

    def _batch_positions(self, op: ir.OpView) -> list[int]:
        """Operands of `op` read along the batch dimension, when one of them is batched (else [])."""
        operands = list(op.operands)
        if not any(v in self.batched for v in operands):
            return []
        positions = _read_along_batch(op)
        if positions == _UNSPLIT:
            raise op_error(op, f"reads batched data, but {self.pass_name} cannot split this op along the batch")
        if op.operation.name.startswith("tensor."):
            self._check_whole_batch(op)
        if positions is None or any(v in self.batched for i, v in enumerate(operands) if i not in positions):
            raise op_error(op, "mixes the samples of a batch (its result's first dimension is not its inputs'): it cannot be pipelined")
        return positions

    def _check_whole_batch(self, op: ir.OpView) -> None:
        if not self._keeps_whole_batch(op):
            raise op_error(op, "slices, pads or reshapes the batch dimension: it cannot be split into micro-batches")

    def _keeps_whole_batch(self, op: ir.OpView) -> bool:
        """Whether a slice, pad or reshape keeps the batch dimension whole (and first)."""
        name = op.operation.name
        source, result = _shape(op.operands[0]), _shape(op.results[0])
        whole = bool(result) and bool(source)
        if name in ("tensor.extract_slice", "tensor.insert_slice"):
            offsets, sizes, strides = (
                list(ir.DenseI64ArrayAttr(op.attributes[k])) for k in ("static_offsets", "static_sizes", "static_strides")
            )
            big, small = (source, result) if name == "tensor.extract_slice" else (result, source)
            whole = whole and offsets[0] == 0 and strides[0] == 1 and sizes[0] == big[0] == small[0]
        elif name == "tensor.pad":
            whole = whole and list(ir.DenseI64ArrayAttr(op.attributes["static_low"]))[0] == 0
            whole = whole and list(ir.DenseI64ArrayAttr(op.attributes["static_high"]))[0] == 0
        elif name == "tensor.expand_shape":
            whole = whole and result[0] % self.count == 0
        return whole

    def _stage(self, op: ir.OpView) -> int:
        if IPU_ID_ATTR not in op.attributes:
            raise op_error(op, "has no 'ipu.ipu_id': run ipu-shard before ipu-pipeline")
        return ir.IntegerAttr(op.attributes[IPU_ID_ATTR]).value

    def _check_forward(self, stages: dict[int, list[ir.OpView]]) -> None:
        stage_of = {result: s for s, ops in stages.items() for op in ops for result in op.results}
        for s, ops in stages.items():
            for op in ops:
                for operand in op.operands:
                    if stage_of.get(operand, s) > s:
                        raise op_error(
                            op,
                            f"on IPU {s} reads a value of IPU {stage_of[operand]}, a later pipeline stage: stages run in program order",
                        )

    # Building the micro-batches' ops.

    def _emit(self, op: ir.OpView, micro_batch: int) -> ir.Operation:
        positions = self._batch_positions(op)
        operands = [
            self._micro_value(v, micro_batch, op) if i in positions else self.copies[micro_batch].get(v, v)
            for i, v in enumerate(op.operands)
        ]
        clone = self._clone(op, micro_batch)
        for i, value in enumerate(operands):
            clone.operands[i] = value
        for old, new in zip(op.results, clone.results):
            new.set_type(self._split_type(old.type, op))
            self.micro[micro_batch][old] = new
        self._divide_static_shape(clone)
        return clone

    def _micro_value(self, value: ir.Value, micro_batch: int, user: ir.OpView) -> ir.Value:
        if value in self.micro[micro_batch]:
            return self.micro[micro_batch][value]
        if isinstance(value.owner, ir.Block) and value not in self.inputs:
            raise op_error(user, f"reads argument {value.get_name()} along the batch dimension, but it is not a batched input (inputs=)")
        if value not in self.inputs and self._alike(value):
            return self._resize(value, user, micro_batch)
        # An input, or a value of the whole batch computed from no input whose micro-batches'
        # rows differ (an iota over the batch, a constant): each micro-batch reads its rows.
        whole = value if value in self.inputs else self.copies[micro_batch].get(value, value)
        if isinstance(micro_batch, LoopStage):
            self.micro[micro_batch][value] = self.loop.rows(micro_batch, whole, user)
            return self.micro[micro_batch][value]
        shape = _shape(value)
        rows = shape[0] // self.count
        offsets = [micro_batch * rows] + [0] * (len(shape) - 1)
        sliced = ir.Operation.create(
            "tensor.extract_slice",
            results=[self._split_type(value.type, user)],
            operands=[whole],
            attributes={
                "static_offsets": ir.DenseI64ArrayAttr.get(offsets),
                "static_sizes": ir.DenseI64ArrayAttr.get([rows, *shape[1:]]),
                "static_strides": ir.DenseI64ArrayAttr.get([1] * len(shape)),
                "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0]),
                IPU_ID_ATTR: self._ipu_id(user, micro_batch),
            },
            loc=user.location,
        )
        self.micro[micro_batch][value] = sliced.result
        return sliced.result

    def _alike(self, value: ir.Value) -> bool:
        """Whether `value`, of the whole batch and computed from no input, has the same rows in
        every micro-batch's share, so that one copy made at the micro-batch's shape serves them
        all: a tensor.empty, a splat, and what ops reading along the batch (not by its index)
        make of such values only: a fill, a broadcast, BERT's token-type ids and their
        embedding lookup."""
        if value in self.alike:
            return self.alike[value]
        owner = value.owner
        alike = False
        if isinstance(owner, ir.Block):
            alike = False
        elif owner.operation.name == "tensor.empty":
            alike = True
        elif owner.operation.name == "arith.constant":
            constant = owner.attributes["value"]
            alike = isinstance(constant, ir.DenseElementsAttr) and ir.DenseElementsAttr(constant).is_splat
        else:
            positions = _read_along_batch(owner)
            alike = (
                positions not in (None, _UNSPLIT)
                and not (owner.operation.name.startswith("tensor.") and not self._keeps_whole_batch(owner))
                and not _reads_loop_index(owner)
                and all(self._alike(owner.operands[i]) for i in positions)
            )
        self.alike[value] = alike
        return alike

    # Hooks: a pipeline shares its values alike for all micro-batches and keeps each op's IPU.

    def _sharing(self, micro_batch: int) -> int:
        """Which copy of a value alike for every micro-batch `micro_batch` uses."""
        return 0

    def _ipu_id(self, op: ir.OpView, micro_batch: int) -> ir.Attribute:
        return op.attributes[IPU_ID_ATTR]

    def _clone(self, op: ir.OpView, micro_batch: int) -> ir.Operation:
        clone = op.operation.clone()
        if IPU_ID_ATTR in op.attributes:
            clone.attributes[IPU_ID_ATTR] = self._ipu_id(op, micro_batch)
        return clone

    def _resize(self, value: ir.Value, user: ir.OpView, micro_batch: int) -> ir.Value:
        """A value `_alike` for every micro-batch, made once at the micro-batch's shape (its op
        and those of its operands read along the batch) and shared by the micro-batches."""
        key = (value, self._sharing(micro_batch))
        if key in self.resized:
            return self.resized[key]
        if isinstance(micro_batch, LoopStage):  # made once, before the loop
            with ir.InsertionPoint(micro_batch.loop):
                return self._resize(value, user, 0)
        owner = value.owner
        positions = [] if owner.operation.name in ("tensor.empty", "arith.constant") else _read_along_batch(owner)
        # Before the clone, which they dominate: its other operands are shared (weights).
        operands = {
            i: self._resize(v, user, micro_batch) if i in positions else self.copies[micro_batch].get(v, v)
            for i, v in enumerate(owner.operands)
        }
        clone = self._clone(owner, micro_batch)
        for i, operand in operands.items():
            clone.operands[i] = operand
        for old, new in zip(owner.results, clone.results):
            new.set_type(self._split_type(old.type, user))
            self.resized[(old, self._sharing(micro_batch))] = new
        self._divide_static_shape(clone)
        if owner.operation.name == "arith.constant":
            splat = ir.DenseElementsAttr(owner.attributes["value"])
            clone.attributes["value"] = ir.DenseElementsAttr.get_splat(clone.results[0].type, splat.get_splat_value())
        return self.resized[key]

    def _divide_static_shape(self, clone: ir.Operation) -> None:
        """A split op's static sizes of the batch dimension, a micro-batch's."""
        name = clone.name
        if name in ("tensor.extract_slice", "tensor.insert_slice"):
            clone.attributes["static_sizes"] = _first_divided(clone.attributes["static_sizes"], self.count)
        elif name == "tensor.expand_shape":
            clone.attributes["static_output_shape"] = _first_divided(clone.attributes["static_output_shape"], self.count)

    def _split_type(self, type_: ir.Type, op: ir.OpView) -> ir.Type:
        tensor = ir.RankedTensorType(type_)
        shape = list(tensor.shape)
        if not shape or shape[0] % self.count:
            raise op_error(op, f"has a result of type {type_}, whose batch dimension does not divide into {self.count} micro-batches")
        return ir.RankedTensorType.get([shape[0] // self.count, *shape[1:]], tensor.element_type, tensor.encoding)

    def _return(self, terminator: ir.OpView) -> None:
        for i, value in enumerate(terminator.operands):
            if value not in self.batched:
                continue
            if self.loop is not None:
                terminator.operands[i] = self.loop.output(value)
                continue
            parts = [self.micro[m][value] for m in range(self.count)]
            owner = parts[-1].owner
            concat = ir.Operation.create(
                "tensor.concat",
                results=[value.type],
                operands=parts,
                attributes={"dim": ir.IntegerAttr.get(self.index_type, 0), IPU_ID_ATTR: owner.attributes[IPU_ID_ATTR]},
                loc=terminator.location,
            )
            terminator.operands[i] = concat.result


# `_read_along_batch` of an op the batch split does not handle.
_UNSPLIT = [-1]


def _read_along_batch(op: ir.OpView) -> list[int] | None:
    """The operands `op` reads along the batch dimension (the first of its results): None when
    its results' first dimension is no loop over its operands' first (a reduction over it),
    `_UNSPLIT` for an op the pass does not split."""
    name, operands = op.operation.name, list(op.operands)
    if name == "linalg.generic":
        return _generic_batch_positions(op)
    record = record_of(op)
    if record is not None:  # a compute op: its record's loops say which operands the batch runs through
        return _record_batch_positions(record.space(op))
    if name in ("tensor.extract_slice", "tensor.pad", "tensor.expand_shape", "tensor.collapse_shape"):
        return [0]
    if name == "tensor.insert_slice":
        return [0, 1]
    if name == "tensor.concat" and ir.IntegerAttr(op.attributes["dim"]).value != 0:
        return list(range(len(operands)))
    return _UNSPLIT


def _reads_loop_index(op: ir.OpView) -> bool:
    """Whether a generic's body asks for its loop indices (its rows then differ by position)."""
    return op.operation.name == "linalg.generic" and any(
        inner.operation.name == "linalg.index" for inner in op.regions[0].blocks[0].operations
    )


def _read_along_batch_by_a_user(argument: ir.BlockArgument) -> bool:
    """Whether an op reads `argument` along its batch dimension: a batched input (the first
    operand of a matmul or a convolution, an operand a generic indexes first by its results'
    first loop), not a weight."""
    for use in argument.uses:
        positions = _read_along_batch(use.owner)
        if positions not in (None, _UNSPLIT) and use.operand_number in positions:
            return True
    return False


def _record_batch_positions(space: Space) -> list[int] | None:
    """Inputs a compute op reads along its batch loop (the loop of its result's first
    dimension, not summed), each indexing it first and once; None: no such loop."""
    if not space.result or space.result[0] in space.reductions:
        return None
    batch, positions = space.result[0], []
    for i, accesses in enumerate(space.operands):
        along = [k for k, access in enumerate(accesses) if access.loop == batch]
        if not along:
            continue
        if along != [0] or accesses[0].kind != "dim":
            return None
        positions.append(i)
    return positions


def _generic_batch_positions(op: ir.OpView) -> list[int] | None:
    """Operands of a linalg.generic read along its batch loop: the loop of its results' first
    dimension, parallel, which each batched operand must index first. None: no such loop."""
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    iterators = [str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])]
    num_inputs = len(op.operands) - len(op.results)
    firsts = {str(m.results[0]) if m.results else None for m in maps[num_inputs:]}
    if len(firsts) != 1 or None in firsts:
        return None
    loop = firsts.pop()
    if not loop.startswith("d") or "parallel" not in iterators[int(loop[1:])]:
        return None
    positions = []
    for i, indexing in enumerate(maps):
        uses = [str(r) for r in indexing.results]
        if loop in " ".join(uses).replace("+", " ").replace("*", " ").split():
            if uses[0] != loop or uses.count(loop) > 1:
                return None
            positions.append(i)
    return positions


def _first_divided(attribute: ir.Attribute, count: int) -> ir.Attribute:
    values = list(ir.DenseI64ArrayAttr(attribute))
    return ir.DenseI64ArrayAttr.get([values[0] // count, *values[1:]])


def _shape(value: ir.Value) -> list[int]:
    return list(ir.RankedTensorType(value.type).shape) if isinstance(value.type, ir.RankedTensorType) else []
