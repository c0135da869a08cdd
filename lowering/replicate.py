"""`ipu-replicate` (L1 -> L1): data-parallel replicas of a (sharded) model on the IPUs of a system."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import scf, tensor

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.ops import tensor_builders as tb
from ipu_mlir.target import target_of
from ipu_mlir.target.diagnostics import op_error

from .pass_registry import ModulePass, register_pass
from .pipeline import Pipeliner, batched_inputs_option
from .plan import IPU_ID_ATTR
from .resident import resident_names
from .select_entry import public_functions


@register_pass
@dataclass
class Replicate(ModulePass):
    """Run data-parallel replicas of the model, each on its own IPUs and slice of the batch (L1).

    `replicas` copies side by side: PopTorch's `replicationFactor`, inference form. The model's
    IPUs (`ipu.ipu_id` 0..K-1, from ipu-shard; K = 1 unsharded) are replica 0's;
    replica r runs on IPUs r*K..r*K+K-1 with its own copy of every weight (loaded once, as
    Poplar's replicated graphs hold them) on the r-th slice of the batch dimension of each input
    (the arguments read along it, as ipu-pipeline finds them, or the first `inputs`). The
    outputs are the replicas' concatenated along the batch dimension, gathered on the last
    replica's IPU (over the IPU-Links: the one transfer between replicas). The replicas' ops are
    emitted side by side, so ipu-merge-supersteps runs them in the same supersteps.

    Training form: a function with `ipu.all_reduce`s (the training front end's, on the
    gradients) is each replica's program already (SPMD): it is kept as it is, its size
    independent of the count; the simulator runs one copy per replica (runtime/replicated.py)
    and `ipu-schedule` lowers the all-reduces to rings over the IPU-Links.

    A sharded or pipelined step (K IPUs a replica) is replicated the same way: replica r runs it
    on IPUs rK..rK+K-1, and each all-reduce runs on its gradient's IPU s, over the ring of IPUs
    s, s + K, ... holding that stage in every replica; the all-reduces of one IPU are joined into
    one (`_join_by_ipu`).

    Refused at the function: a replica count not a power of two (GCL's ring), more IPUs than the
    target has, a batch not divisible by the count, device variables without any
    `ipu.all_reduce` (the replicas' updates would drift apart); at the op, an all-reduce over
    another count.

    Before (`ipu-replicate{replicas=2}`, m2000):

        %y = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, ...) -> tensor<8x64xf32>

    After:

        %x0 = tensor.extract_slice %x[0, 0] [4, 64] [1, 1] {ipu.ipu_id = 0 : i64}
        %x1 = tensor.extract_slice %x[4, 0] [4, 64] [1, 1] {ipu.ipu_id = 1 : i64}
        %w0 = arith.constant ...                       // each replica its copy of the weight
        %w1 = arith.constant ...
        %y0 = "ipu.matmul"(%x0, %w0) {ipu.ipu_id = 0 : i64} : ... -> tensor<4x64xf32>
        %y1 = "ipu.matmul"(%x1, %w1) {ipu.ipu_id = 1 : i64} : ... -> tensor<4x64xf32>
        %y = tensor.concat dim(0) %y0, %y1 {ipu.ipu_id = 1 : i64}
    """

    name = "ipu-replicate"

    target: str = field(default="", metadata={"help": "target name or file (default: the module's ipu.target, else gc200)"})
    replicas: int = field(default=1, metadata={"help": "replicas, a power of two (PopTorch's replicationFactor)", "minimum": 1})
    inputs: int = batched_inputs_option()

    def run(self, module: ir.Operation) -> None:
        if self.replicas == 1:
            return
        target = target_of(module, self.target or None)
        for function in public_functions(module):
            if self.replicas & (self.replicas - 1):
                raise op_error(function, f"ipu-replicate: replicas={self.replicas} is not a power of two (GCL's ring all-reduce needs one)")
            reductions = _all_reduces(function)
            if resident_names(function)[0] and not reductions:
                raise op_error(
                    function,
                    "ipu-replicate: device variables (training) but no ipu.all_reduce: the replicas' updates would drift apart",
                )
            ipus = 1 + max((_ipu_of(op) for op in function.regions[0].blocks[0].operations), default=0)
            if self.replicas * ipus > target.num_ipus:
                raise op_error(
                    function,
                    f"ipu-replicate: {self.replicas} replicas of {ipus} IPU(s) need {self.replicas * ipus} IPUs, "
                    f"but target '{target.name}' has {target.num_ipus}",
                )
            for op in reductions:  # training: the program is each replica's (SPMD), kept as it is
                count = ipu.AllReduceOp(op.operation).replicas
                if count != self.replicas:
                    raise op_error(op, f"ipu-replicate: all-reduces over {count} replicas, not {self.replicas}")
            if reductions:
                _join_by_ipu(function, self.replicas, ipus)
                continue
            _Replicator(function, self.replicas, self.inputs, ipus).run()


def _all_reduces(function: ir.OpView) -> list[ir.OpView]:
    """The function's `ipu.all_reduce`s, those in an `scf.if` too (once per accumulated step)."""
    found: list[ir.OpView] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "ipu.all_reduce":
            found.append(op.opview)
        return ir.WalkResult.ADVANCE

    function.operation.walk(visit)
    return found


def _join_by_ipu(function: ir.OpView, replicas: int, ipus_per_replica: int) -> None:
    """A training step's all-reduces, each on its gradient's IPU, joined into one per IPU, element
    type and condition (PopART merges the collectives of a step: one ring, its global syncs paid
    once), each with its ring (`ipu.RING_ATTR`): the IPUs holding that stage in every replica,
    IPU s in replica 0 and s + r x `ipus_per_replica` in replica r, as GCL's rings run over the
    IPUs of the same pipeline stage. The front end reduces each gradient apart (frontends/joint_all_reduce.py);
    an all-reduce is either at the top of the function or alone in an `scf.if` (once per update)."""
    block = function.regions[0].blocks[0]
    groups: dict[tuple, list[ir.OpView]] = {}
    for op in block.operations:
        reduction = op if op.operation.name == "ipu.all_reduce" else _lone_all_reduce(op)
        if reduction is None:
            continue
        source = reduction.operands[0]
        ipu_id = 0 if isinstance(source.owner, ir.Block) else _ipu_of(source.owner)
        condition = op.operands[0] if op.operation.name == "scf.if" else None
        key = (ipu_id, str(ir.RankedTensorType(source.type).element_type), ipu.AllReduceOp(reduction.operation).reduction, condition)
        groups.setdefault(key, []).append(op)
    if ipus_per_replica > 1 and sum(map(len, groups.values())) != len(_all_reduces(function)):
        raise op_error(function, "ipu-replicate: an all-reduce of a sharded replica must be at the top of the step or alone in an scf.if")
    for (ipu_id, *_), members in groups.items():
        ring = [ipu_id + replica * ipus_per_replica for replica in range(replicas)]
        _Join(block, members, ipu_id, ring).run()


def _lone_all_reduce(op: ir.OpView) -> ir.OpView | None:
    """The `ipu.all_reduce` of an `scf.if` that reduces a value when it holds and passes it on
    unreduced otherwise (the front end's once-per-update all-reduce), else None."""
    if op.operation.name != "scf.if" or len(op.results) != 1:
        return None
    then_ops, else_ops = (list(region.blocks[0].operations) for region in op.operation.regions)
    if len(then_ops) != 2 or len(else_ops) != 1 or then_ops[0].operation.name != "ipu.all_reduce":
        return None
    reduction = then_ops[0]
    passes_on = else_ops[0].operands[0] == reduction.operands[0]
    return reduction if passes_on and then_ops[1].operands[0] == reduction.results[0] else None


class _Join:
    """`members` (all-reduces, or `scf.if`s holding one, under one condition) as one all-reduce of
    their gradients flattened and joined, its result split again, on IPU `ipu_id` with `ring`."""

    def __init__(self, block: ir.Block, members: list[ir.OpView], ipu_id: int, ring: list[int]):
        self.block, self.members, self.ring = block, members, ring
        self.ipu_id = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), ipu_id)
        self.reductions = [member if member.operation.name == "ipu.all_reduce" else _lone_all_reduce(member) for member in members]

    def placed(self, value: ir.Value) -> ir.Value:
        value.owner.attributes[IPU_ID_ATTR] = self.ipu_id
        return value

    def run(self) -> None:
        if len(self.members) == 1:
            for op in (self.members[0], self.reductions[0]):
                op.attributes[IPU_ID_ATTR] = self.ipu_id
            self.reductions[0].attributes[ipu.RING_ATTR] = ir.DenseI64ArrayAttr.get(self.ring)
            return
        sources = [reduction.operands[0] for reduction in self.reductions]
        condition = self.members[0].operands[0] if self.members[0].operation.name == "scf.if" else None
        where = self._insertion_point(sources + ([condition] if condition is not None else []))
        with where, self.members[0].location:
            flat = [self.placed(self._flattened(source)) for source in sources]
            sizes = [ir.RankedTensorType(value.type).shape[0] for value in flat]
            element_type = ir.RankedTensorType(flat[0].type).element_type
            joined = self.placed(tensor.ConcatOp(ir.RankedTensorType.get([sum(sizes)], element_type), 0, flat).result)
            reduced = self._all_reduce(joined, condition)
            offset = 0
            for member, source, size in zip(self.members, sources, sizes):
                piece = self.placed(
                    tensor.ExtractSliceOp(ir.RankedTensorType.get([size], element_type), reduced, [], [], [], [offset], [size], [1]).result
                )
                member.results[0].replace_all_uses_with(self._shaped(piece, ir.RankedTensorType(source.type)))
                offset += size
        for member in self.members:
            member.operation.erase()

    def _insertion_point(self, values: list[ir.Value]) -> ir.InsertionPoint:
        """Just after the last definition of `values`, which must come before every use of the members' results."""
        order = {op: index for index, op in enumerate(self.block.operations)}
        defined = max((order[value.owner] for value in values if not isinstance(value.owner, ir.Block)), default=-1)
        first_use = min(order.get(self._top(use.owner), len(order)) for member in self.members for use in member.results[0].uses)
        if first_use <= defined:
            raise op_error(
                self.members[0],
                "ipu-replicate: a reduced gradient is read before the last gradient of its IPU is computed: cannot join the all-reduces",
            )
        return (
            ir.InsertionPoint.at_block_begin(self.block) if defined < 0 else ir.InsertionPoint.after(list(self.block.operations)[defined])
        )

    def _top(self, op: ir.Operation) -> ir.OpView:
        """The op of this block holding `op`."""
        op = op.operation
        while op.block != self.block:
            op = op.parent.operation
        return op.opview

    def _flattened(self, value: ir.Value) -> ir.Value:
        shape = ir.RankedTensorType(value.type).shape
        if len(shape) == 1:
            return value
        return tb.expand(value, [], [1]) if not shape else tb.collapse(value, [list(range(len(shape)))])

    def _shaped(self, piece: ir.Value, like: ir.RankedTensorType) -> ir.Value:
        if like.rank == 1:
            return piece
        return self.placed(tb.collapse(piece, []) if like.rank == 0 else tb.expand(piece, [list(range(like.rank))], like.shape))

    def _all_reduce(self, joined: ir.Value, condition: ir.Value | None) -> ir.Value:
        model = ipu.AllReduceOp(self.reductions[0].operation)
        if condition is None:
            reduced = ipu.all_reduce(joined, model.replicas, model.reduction)
            reduced.attributes[IPU_ID_ATTR] = self.ipu_id
            reduced.attributes[ipu.RING_ATTR] = ir.DenseI64ArrayAttr.get(self.ring)
            return reduced.result
        branch = scf.IfOp(condition, [joined.type], has_else=True)
        branch.attributes[IPU_ID_ATTR] = self.ipu_id
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([self._all_reduce(joined, None)])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([joined])
        return branch.results[0]


def _ipu_of(op: ir.OpView) -> int:
    attribute = op.attributes[IPU_ID_ATTR] if IPU_ID_ATTR in op.attributes else None
    return ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else 0


class _Replicator(Pipeliner):
    """The pipeline's batch splitting with a copy of every op per replica, on its IPUs."""

    def __init__(self, function: ir.OpView, replicas: int, inputs: int, ipus_per_replica: int):
        super().__init__(function, replicas, inputs, "ipu-replicate", "replicas")
        self.ipus_per_replica = ipus_per_replica

    def _sharing(self, replica: int) -> int:
        return replica  # each replica its own copy, on its own IPUs

    def _ipu_id(self, op: ir.OpView, replica: int) -> ir.Attribute:
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), _ipu_of(op) + replica * self.ipus_per_replica)

    def run(self) -> None:
        operations = list(self.block.operations)
        terminator, body = operations[-1], operations[:-1]
        batched = []
        for op in body:
            batched.append(bool(self._batch_positions(op)))
            if batched[-1]:
                self.batched.update(op.results)
        with ir.InsertionPoint(terminator), self.function.location:
            # Every replica's slices of the inputs first: they move in one exchange phase, before
            # the replicas' work rather than between it.
            for argument in self.inputs:
                user = next((op for op in body if argument in list(op.operands)), None)
                for replica in range(self.count if user is not None else 0):
                    self._micro_value(argument, replica, user)
            for op, on_inputs in zip(body, batched):
                for replica in range(self.count):  # side by side: the replicas' supersteps merge
                    if on_inputs:
                        self._emit(op, replica)
                        continue
                    clone = self._clone(op, replica)
                    for i, operand in enumerate(op.operands):
                        clone.operands[i] = self.copies[replica].get(operand, operand)
                    for old, new in zip(op.results, clone.results):
                        self.copies[replica][old] = new
            self._return(terminator)
        self._erase_unused(body)
