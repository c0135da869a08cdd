"""`ipu-replicate` (L1 -> L1): data-parallel replicas of a (sharded) model on the IPUs of a system."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from ipu_mlir.dialects import ipu
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

    Refused at the function: a replica count not a power of two (GCL's ring), more IPUs than the
    target has, a batch not divisible by the count, device variables without any
    `ipu.all_reduce` (the replicas' updates would drift apart), a sharded training step; at the
    op, an all-reduce over another count.

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
                if ipus > 1:
                    raise op_error(function, "ipu-replicate: replicas of a sharded training step are not implemented (one IPU each)")
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
