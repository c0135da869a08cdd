"""`ipu-shard` (L1 -> L1): place the entry function's layers on the IPUs of a multi-IPU target."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.target import target_of
from ipu_mlir.target.diagnostics import op_error

from .accumulations import ACCUMULATE_ATTR, ACCUMULATION
from .pass_registry import ModulePass, register_pass
from .plan import IPU_ID_ATTR
from .resident import resident_names
from .select_entry import public_functions

# The function attribute naming where the user's blocks begin (PopTorch's `BeginBlock`).
BEGIN_BLOCKS_ATTR = "ipu.begin_blocks"

# Ops with no work or storage of their own: they take no IPU (a constant is placed with its
# first user by ipu-plan).
# A training step's ops name their phase in their locations (`phase:forward`, `phase:backward`,
# `phase:update`; the torch front end's importer, frontends/torch.py).
_PHASE_PREFIX = "phase:"

_UNPLACED = frozenset({"arith.constant", "tensor.empty", "func.return"})


@register_pass
@dataclass
class Shard(ModulePass):
    """Give every op of the entry function the IPU it runs on, `ipu.ipu_id` (L1 -> L1).

    Poplar's virtual graphs, as PopTorch's sharded execution places layers: ops of a model run
    one IPU after another, and a tensor that crosses from one IPU to the next becomes an
    inter-IPU copy over the IPU-Links (ipu-schedule, in an exchange phase after a global sync).
    Two ways:

    - **Annotations**, when any op arrives with `ipu.ipu_id` (PopTorch's
      `BeginBlock(ipu_id=...)` / `Block`, set by the front end): an op without one runs on the
      IPU of the op before it, as a PopTorch block runs until the next begins; ops before the
      first annotation on IPU 0.
    - **Blocks by layer**, when the function carries `ipu.begin_blocks`, a dictionary from a
      layer's module path to an IPU (the torch front end's `BeginBlock(layer, ipu_id=...)`):
      an op whose location names that layer or one inside it (`loc("encoder.layer.3.output"(...))`
      is inside `encoder.layer.3`) starts on that IPU, the innermost layer named winning; the
      ops after it follow as with annotations. Locations survive every conversion before this
      pass, where attributes set on torch-mlir's ops would not.
    - **Memory balance** otherwise: each op weighs the bytes of the constants it is the first to
      read (weights) plus those of its results (activations); the ops, in program order, are cut
      into `ipus` contiguous stages of about equal cumulative bytes (an op goes to the stage its
      middle byte falls in). A loop (`scf.for`) is one op, weighing its body.

    ipu-plan then plans each op on its IPU's tiles. On a one-IPU target the pass only checks
    annotations (all must be 0).

    Before (m2000, `ipu-shard{ipus=2}`), two matmuls with 64 KiB weights each:

        %h = "ipu.matmul"(%x, %w1) : ...
        %y = "ipu.matmul"(%h, %w2) : ...

    After:

        %h = "ipu.matmul"(%x, %w1) {ipu.ipu_id = 0 : i64} : ...
        %y = "ipu.matmul"(%h, %w2) {ipu.ipu_id = 1 : i64} : ...
    """

    name = "ipu-shard"

    target: str = field(default="", metadata={"help": "target name or file (default: the module's ipu.target, else gc200)"})
    ipus: int = field(default=0, metadata={"help": "IPUs to shard over by memory balance (default: all of the target's)", "minimum": 0})
    replicas: int = field(
        default=1, metadata={"help": "replicas to come (ipu-replicate): memory balance over ipus / replicas IPUs", "minimum": 1}
    )

    def run(self, module: ir.Operation) -> None:
        target = target_of(module, self.target or None)
        ipus = (self.ipus or target.num_ipus) // self.replicas
        if not 1 <= ipus <= target.num_ipus:
            asked = f"ipus={self.ipus or target.num_ipus} over replicas={self.replicas}" if self.replicas > 1 else f"ipus={ipus}"
            raise op_error(module, f"ipu-shard: {asked}, but target '{target.name}' has {target.num_ipus} IPU(s)")
        for function in public_functions(module):
            ops = _placed_ops(function.regions[0].blocks[0])
            # a training step's forward is placed as a model is; its backward and update follow
            phases = [step_phase(op) for op in ops]
            training = any(phases)
            forward = [op for op, phase in zip(ops, phases) if phase == "forward" or not training]
            if BEGIN_BLOCKS_ATTR in function.attributes:
                stages = _blocks(function, forward, target.num_ipus)
            elif any(IPU_ID_ATTR in op.attributes for op in forward):
                stages = _annotated(forward, target.num_ipus)
            else:
                stages = _balanced(forward, ipus, _variables(function))
            if training:
                stages = _by_layer(ops, phases, stages)
            for op, stage in zip(ops, stages):
                op.attributes[IPU_ID_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64, module.context), stage)


def _placed_ops(block: ir.Block) -> list[ir.OpView]:
    """The ops of `block` to place, those of a pipelined step's loop over its micro-batches
    (frontends/accumulation_loop.py) in its place: its body is one micro-batch's step."""
    ops = []
    for op in block.operations:
        if ACCUMULATE_ATTR in op.attributes:
            ops += [inner for inner in list(op.regions[0].blocks[0].operations)[:-1] if inner.operation.name not in _UNPLACED]
        elif op.operation.name not in _UNPLACED:
            ops.append(op)
    return ops


def _annotated(ops: list[ir.OpView], num_ipus: int) -> list[int]:
    stages, current = [], 0
    for op in ops:
        if IPU_ID_ATTR in op.attributes:
            attribute = op.attributes[IPU_ID_ATTR]
            current = ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else -1
            if not 0 <= current < num_ipus:
                raise op_error(op, f"has '{IPU_ID_ATTR}' {attribute}, but the target has IPUs 0..{num_ipus - 1}")
        stages.append(current)
    return stages


def _blocks(function: ir.OpView, ops: list[ir.OpView], num_ipus: int) -> list[int]:
    blocks: dict[str, int] = {}
    for named in ir.DictAttr(function.attributes[BEGIN_BLOCKS_ATTR]):
        value = named.attr
        blocks[named.name] = ir.IntegerAttr(value).value if isinstance(value, ir.IntegerAttr) else -1
        if not 0 <= blocks[named.name] < num_ipus:
            raise op_error(
                function, f"'{BEGIN_BLOCKS_ATTR}' puts layer '{named.name}' on IPU {value}, but the target has IPUs 0..{num_ipus - 1}"
            )
    stages, current = [], 0
    for op in ops:
        begun = [block for name in _location_names(op.location) if (block := _block_of(name, blocks))]
        if begun:
            current = blocks[max(begun, key=len)]
        stages.append(current)
    return stages


def _block_of(name: str, blocks: dict[str, int]) -> str | None:
    """The innermost layer of `blocks` that `name` (a module path) is or lies inside."""
    while name:
        if name in blocks:
            return name
        name = name.rpartition(".")[0]
    return None


def _location_names(location: ir.Location) -> list[str]:
    """The names of the name locations in `location`'s chain, outermost first."""
    names = []
    while location.is_a_name():
        names.append(location.name_str)
        location = location.child_loc
    return names


def _by_layer(ops: list[ir.OpView], phases: list[str], forward_stages: list[int]) -> list[int]:
    """The stages of a training step's ops, given its forward ops' (in order), the forward kept
    in whole layers; a backward or update op naming a layer (frontends/joint.py names them) goes to the IPU of that layer's
    first forward op, so that a layer's backward and its weights' update run where its weights
    and the activations it kept live; one naming none follows the op before it."""
    forward = iter(forward_stages)
    stages, layers, current = [], {}, 0
    for op, phase in zip(ops, phases):
        layer = _layer_name(op)
        if phase == "forward":
            stage = next(forward)
            # memory balance may cut inside a layer: a layer is kept whole on its first op's IPU, an
            # op of none (an activation, the bias add fused into it) with the op before it
            current = layers.setdefault(layer, stage) if layer else current
        elif layer:
            current = next((layers[name] for name in _enclosing(layer) if name in layers), current)
        stages.append(current)
    return stages


def _enclosing(layer: str) -> list[str]:
    """`layer`'s module path and those of the modules holding it, innermost first."""
    names = [layer]
    while "." in names[-1]:
        names.append(names[-1].rpartition(".")[0])
    return names


def step_phase(op: ir.OpView) -> str:
    """The training step's phase an op's location names (`phase:forward`, from the front
    end), '' for none."""
    return next((name[len(_PHASE_PREFIX) :] for name in _step_names(op) if name.startswith(_PHASE_PREFIX)), "")


def _layer_name(op: ir.OpView) -> str:
    """The layer (a module path) an op's location names, '' for none: its name other than the
    phase and the ATen op."""
    return next((name for name in _step_names(op) if not name.startswith((_PHASE_PREFIX, "aten.", "prims.")) and name != ACCUMULATION), "")


def _step_names(op: ir.OpView) -> list[str]:
    """The names of an op's location; of an op canonicalize made of several (a fused location),
    the first one's: the op it kept, its phase and layer."""
    location = op.location
    while location.is_a_fused() and location.locations:
        location = location.locations[0]
    return _location_names(location)


def _variables(function: ir.OpView) -> dict[ir.Value, int]:
    """The device variables among `function`'s arguments (a training step's parameters and
    optimizer state), each with how many tensors of its size it brings to its IPU: weights, as
    constants are, a parameter (`param:NAME`) counting also its gradient and each variable
    kept for it (`opt:KIND:NAME`, `accum:grad:NAME`: the front end's names, frontends/joint_layout.py),
    which the forward does not read but its layer's update keeps on the same IPU."""
    arguments = function.regions[0].blocks[0].arguments
    names = resident_names(function)[0]
    kept: dict[str, int] = {}
    for name in names.values():
        if name.startswith(("opt:", "accum:grad:")):
            owner = name.rpartition(":")[2]
            kept[owner] = kept.get(owner, 0) + 1
    return {
        arguments[index]: 2 + kept.get(name.removeprefix("param:"), 0) if name.startswith("param:") else 1 for index, name in names.items()
    }


def _balanced(ops: list[ir.OpView], ipus: int, variables: dict[ir.Value, int] | None = None) -> list[int]:
    seen: set[ir.Value] = set()
    weights = [_bytes(op, seen, variables or {}) for op in ops]
    total = sum(weights) or 1
    stages, before = [], 0
    for weight in weights:
        stages.append(min(ipus - 1, math.floor((before + weight / 2) * ipus / total)))
        before += weight
    return stages


def _bytes(op: ir.OpView, seen: set[ir.Value], variables: dict[ir.Value, int]) -> int:
    """Bytes an op brings to its IPU: constants and device variables it reads first (weights,
    a parameter with its training state), its results."""
    total = sum(_tensor_bytes(result) for result in op.results)
    for region in op.operation.regions:
        for block in region.blocks:
            for inner in block.operations:
                total += _bytes(inner, seen, variables)
    for operand in op.operands:
        owner = operand.owner  # a Block for a block argument, else the defining op
        weight = operand in variables or (not isinstance(owner, ir.Block) and owner.operation.name == "arith.constant")
        if operand not in seen and weight:
            seen.add(operand)
            total += _tensor_bytes(operand) * variables.get(operand, 1)
    return total


def _tensor_bytes(value: ir.Value) -> int:
    if not isinstance(value.type, ir.RankedTensorType):
        return 0
    tensor = ir.RankedTensorType(value.type)
    return math.prod(tensor.shape) * ipu.element_bytes(tensor.element_type)
