"""Verification of `ipu` IR beyond what IRDL can express.

IRDL checks each op's operand, result and attribute kinds when the IR is parsed or built. This
module checks the rest, listed per op under "Verified in Python" in `ipu.irdl.mlir`: shapes,
symbol targets, tile indices within the target, slices within buffers, mappings that cover a
tensor exactly once, and no two writers of the same bytes in a compute set or exchange copy.

    errors = verify(module.operation)          # [] when valid; else IpuErrors with locations

One walk over the IR; each op kind has one rule function: below for L1, L2 and attribute
marks, in `verify_program.py` for L3 ops; `verify_scope.py` holds what the rules share.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from ipu_mlir.target import TARGET_ATTR, target_of
from ipu_mlir.target.diagnostics import IpuError, op_error

from . import ipu
from .attrs import PARTITION_ATTR, TILES_ATTR, MalformedAttribute, PartitionAttr, TileMapping, decode_mapping
from .combine import COMBINE_ATTR, mark_problem
from .ops import REGISTRY, record_of
from .ops.registry import static_tensor
from .program import Program
from .verify_program import PROGRAM_RULES
from .verify_scope import ReportedElsewhere, Scope, check_mapping

# --- L1 -------------------------------------------------------------------------------------


def _verify_compute(op: ir.OpView, scope: Scope) -> None:
    """A compute op: the rules of its record (`dialects/ops/`)."""
    record_of(op).verify(op)


# --- L2 -------------------------------------------------------------------------------------


def _verify_mapping_attribute(op: ir.OpView, scope: Scope) -> None:
    """`ipu.mapping` on any op places its one tensor result; on a function, its arguments."""
    if op.operation.name == "func.func":
        _verify_argument_mappings(op, scope)
        if ipu.MAPPING_ATTR not in op.attributes:
            return
    results = list(op.results)
    if len(results) != 1 or not isinstance(results[0].type, ir.RankedTensorType):
        raise op_error(op, f"has '{ipu.MAPPING_ATTR}' but does not produce exactly one ranked tensor")
    shape = static_tensor(op, results[0].type, "result").shape
    check_mapping(op, f"'{ipu.MAPPING_ATTR}'", _decode(op, op.attributes[ipu.MAPPING_ATTR]), shape, scope)


def _verify_argument_mappings(op: ir.OpView, scope: Scope) -> None:
    if "arg_attrs" not in op.attributes:
        return
    argument_types = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value).inputs
    for index, (attrs, argument_type) in enumerate(zip(ir.ArrayAttr(op.attributes["arg_attrs"]), argument_types)):
        attrs = ir.DictAttr(attrs)
        if ipu.MAPPING_ATTR not in attrs:
            continue
        if not isinstance(argument_type, ir.RankedTensorType):
            raise op_error(op, f"has '{ipu.MAPPING_ATTR}' on argument {index}, which is not a ranked tensor")
        mapping = _decode(op, attrs[ipu.MAPPING_ATTR])
        shape = static_tensor(op, argument_type, f"argument {index}").shape
        check_mapping(op, f"'{ipu.MAPPING_ATTR}' of argument {index}", mapping, shape, scope)


def _decode(op: ir.OpView, attr: ir.Attribute) -> TileMapping:
    try:
        return decode_mapping(attr)
    except MalformedAttribute as error:
        raise op_error(op, f"'{ipu.MAPPING_ATTR}': {error}") from None


def _verify_partition_attribute(op: ir.OpView, scope: Scope) -> None:
    """`ipu.partition` / `ipu.tiles` on a planned compute op: well formed, both present, one
    grid dimension per loop, on distinct tiles of the target (ipu-schedule matches them
    against the op's loops)."""
    try:
        partition = PartitionAttr.decode(op.attributes)
    except MalformedAttribute as error:
        raise op_error(op, str(error)) from None
    if len(op.results) != 1 or not isinstance(op.results[0].type, ir.RankedTensorType):
        raise op_error(op, f"has '{PARTITION_ATTR}' but does not produce exactly one ranked tensor")
    scope.check_grid(op, TILES_ATTR, partition.tiles, distinct=True)
    scope.check_one_ipu(op, TILES_ATTR, partition.tiles)


def _verify_exchange(op: ipu.ExchangeOp, scope: Scope) -> None:
    if op.source.type != op.result.type:
        raise op_error(op, f"expects the result type to equal the source type, got {op.result.type} and {op.source.type}")
    check_mapping(op, "'mapping'", op.mapping, static_tensor(op, op.source.type, "source").shape, scope)


def _verify_combine_mark(op: ir.OpView, scope: Scope) -> None:
    problem = mark_problem(op)
    if problem is not None:
        raise op_error(op, f"is marked '{COMBINE_ATTR}' (a partial-sum combine) but {problem}")


_RULES: dict[str, Callable[[ir.OpView, Scope], None]] = {
    "ipu.exchange": _verify_exchange,
    **PROGRAM_RULES,
}


def _enclosing_module(op: ir.Operation) -> ir.Operation | None:
    parent = op.parent
    while parent is not None and parent.name != "builtin.module":
        parent = parent.parent
    return parent


def verify(root: ir.Operation, target=None) -> list[IpuError]:
    """Checks every `ipu` op under `root`; returns the errors found, empty if valid.

    Symbols resolve in each op's nearest enclosing module, as MLIR's symbol tables do. The
    target is `target` (a `ipu_mlir.target.Target`) if given, else the nearest enclosing
    module's `ipu.target` attribute, else the default target.
    """
    errors: list[IpuError] = []
    scopes: dict[ir.Operation, Scope | None] = {}

    def scope_of(module: ir.Operation | None) -> Scope | None:
        if module is None:
            return None
        if module not in scopes:
            outer = scope_of(_enclosing_module(module))
            try:
                if target is not None:
                    chosen = target
                elif TARGET_ATTR in module.attributes or outer is None:
                    chosen = target_of(module)
                else:
                    chosen = outer.target
                scopes[module] = Scope(chosen, Program(module))
            except IpuError as error:
                errors.append(error)
                scopes[module] = None
        return scopes[module]

    root = root.operation
    ops: list[tuple[ir.Operation, list[Callable[[ir.OpView, Scope], None]]]] = []  # with the rules each op is checked by
    modules = 0

    def collect(op: ir.Operation) -> ir.WalkResult:
        nonlocal modules
        name = op.name
        if name == "builtin.module":
            modules += 1
            scope_of(op)  # reports a bad `ipu.target` even on a module without ipu ops
            return ir.WalkResult.ADVANCE
        rules = [_RULES[name]] if name in _RULES else [_verify_compute] if name in REGISTRY else []
        attributes = op.attributes
        if name == "func.func" or ipu.MAPPING_ATTR in attributes:
            rules.append(_verify_mapping_attribute)
        if name == "func.func" and COMBINE_ATTR in attributes:
            rules.append(_verify_combine_mark)
        if PARTITION_ATTR in attributes or TILES_ATTR in attributes:
            rules.append(_verify_partition_attribute)
        if rules:
            ops.append((op, rules))
        return ir.WalkResult.ADVANCE

    root.walk(collect, ir.WalkOrder.PRE_ORDER)
    # A module holding no other module is every op's nearest one: no walk up from each op.
    alone = root.name == "builtin.module" and modules == 1
    with root.context, ir.Location.unknown():  # building expected types needs a location
        for op, rules in ops:
            scope = scope_of(root if alone else _enclosing_module(op))
            if scope is None:
                continue  # its module's target is already reported
            view = op.opview
            for rule in rules:
                try:
                    rule(view, scope)
                except IpuError as error:
                    errors.append(error)
                except MalformedAttribute as error:
                    errors.append(op_error(view, str(error)))
                except ReportedElsewhere:
                    pass
    return errors
