"""Device variables through the compiler: the L0 `ipu.resident` attributes, checked, kept by
`ipu-plan`, and turned by `ipu-schedule` into buffers the program updates in place.

An entry argument with `ipu.resident = "<name>"` is a device variable: it lives in tile memory
for the life of the loaded program, written by the host by name (`Simulator.write_variable`),
never streamed by a run. A result with the same attribute is its new value (same type): the
program writes it into the variable's buffer, computed there directly when nothing reads the
old value after the op computing it (`Schedule.in_place`, as for a loop's carried tensor), else
copied in at the end of the program. Neither appears in the L3 program's signature: its
arguments and results are the streams of one run only (`docs/contracts.md`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.target.diagnostics import op_error


def _names(function: ir.OpView, key: str, count: int) -> dict[int, ir.Attribute]:
    if key not in function.attributes:
        return {}
    found = {}
    for index, attrs in enumerate(ir.ArrayAttr(function.attributes[key])):
        attrs = ir.DictAttr(attrs)
        if index < count and ipu.RESIDENT_ATTR in attrs:
            found[index] = attrs[ipu.RESIDENT_ATTR]
    return found


# Inside `names_memoized`: the signature attributes of a function -> its `resident_names`.
# Attributes are uniqued and immutable, so a function whose attributes change gets a new key;
# the memo lives for one pass only, so it keeps no context (nor its weights) alive after it.
_memo: dict[tuple, tuple[dict[int, str], dict[int, str]]] | None = None


@contextlib.contextmanager
def names_memoized() -> Iterator[None]:
    """`resident_names` read once per function signature while inside: ipu-plan asks of each op
    whether it overwrites a variable, and ResNet-50's training step read its function's
    hundreds of argument and result attributes 1,126 times."""
    global _memo
    outer = _memo
    _memo = {} if outer is None else outer
    try:
        yield
    finally:
        _memo = outer


def resident_names(function: ir.OpView) -> tuple[dict[int, str], dict[int, str]]:
    """(argument index -> variable name, result index -> variable name) of an entry function
    whose attributes `check_residents` accepted."""
    if _memo is None:
        return _read_names(function)
    attributes = function.attributes
    key = tuple(attributes[name] if name in attributes else None for name in ("function_type", "arg_attrs", "res_attrs"))
    if key not in _memo:
        _memo[key] = _read_names(function)
    return _memo[key]


def _read_names(function: ir.OpView) -> tuple[dict[int, str], dict[int, str]]:
    signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    arguments = _names(function, "arg_attrs", len(signature.inputs))
    results = _names(function, "res_attrs", len(signature.results))
    return (
        {k: ir.StringAttr(v).value for k, v in arguments.items()},
        {k: ir.StringAttr(v).value for k, v in results.items()},
    )


def overwritten_variable(op: ir.OpView) -> int | None:
    """The input of `op` (its operand index) holding a device variable's old value that `op`'s
    result, the variable's new value, is written over in place by `ipu-schedule`
    (`Schedule.in_place`), so the two share one buffer: a generic of parallel loops in the
    entry function, reading the variable indexed as its result, no op after it reading the old
    value. An optimizer's state update (SGD's momentum, Adam's moments) is such an op. None
    otherwise."""
    if op.operation.name != "linalg.generic" or len(op.results) != 1:
        return None
    function = op.operation.parent
    if function.name != "func.func" or any(
        str(i) != "#linalg.iterator_type<parallel>" for i in ir.ArrayAttr(op.attributes["iterator_types"])
    ):
        return None
    # the positions the function returns the result at, from its uses (the return has ~500 operands)
    positions = [use.operand_number for use in op.results[0].uses if use.owner.operation.name == "func.return"]
    if len(positions) != 1:
        return None
    arguments, results = resident_names(function.opview)
    if positions[0] not in results:
        return None
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    for index, value in enumerate(op.operands[: len(maps) - 1]):
        if not isinstance(value, ir.BlockArgument) or arguments.get(value.arg_number) != results[positions[0]]:
            continue
        if maps[index] == maps[-1] and all(_before(use.owner.operation, op.operation) for use in value.uses):
            return index
    return None


def _before(user: ir.Operation, op: ir.Operation) -> bool:
    """Whether `user` is `op` or comes before it in `op`'s block (a use nested in an earlier op
    counts as that op's)."""
    while user.block != op.block:
        user = user.parent
    return user == op or user.is_before_in_block(op)


def check_residents(function: ir.OpView) -> None:
    """Raises an error at the function for each malformed `ipu.resident`: not a non-empty
    string, a name on two arguments or two results, a result naming no resident argument, or a
    result whose type is not its variable's."""
    signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    errors, arguments = [], {}
    for role, key, types in (("argument", "arg_attrs", signature.inputs), ("result", "res_attrs", signature.results)):
        seen: dict[str, int] = {}
        for index, attr in _names(function, key, len(types)).items():
            where = f"{role} #{index}"
            if not isinstance(attr, ir.StringAttr) or not ir.StringAttr(attr).value:
                errors.append(
                    op_error(function, f"has '{ipu.RESIDENT_ATTR}' = {attr} on {where}: expected a variable's name (a non-empty string)")
                )
                continue
            name = ir.StringAttr(attr).value
            if name in seen:
                errors.append(
                    op_error(function, f"names device variable '{name}' on {role}s #{seen[name]} and #{index}: one {role} per variable")
                )
                continue
            seen[name] = index
            if role == "argument":
                arguments[name] = types[index]
            elif name not in arguments:
                errors.append(op_error(function, f"updates device variable '{name}' ({where}), which no argument declares resident"))
            elif types[index] != arguments[name]:
                errors.append(
                    op_error(
                        function,
                        f"updates device variable '{name}' ({where}) with a {types[index]}, but the variable is a {arguments[name]}",
                    )
                )
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ExceptionGroup(f"{len(errors)} malformed '{ipu.RESIDENT_ATTR}' attributes", errors)


def argument_attributes(function: ir.OpView, index: int, mapping: ir.Attribute) -> ir.DictAttr:
    """Argument `index`'s attributes with `ipu.mapping` set to `mapping` (others kept: the
    `ipu.resident` names go on to `ipu-schedule`)."""
    entries = {}
    if "arg_attrs" in function.attributes:
        attrs = ir.DictAttr(ir.ArrayAttr(function.attributes["arg_attrs"])[index])
        entries = {attrs[k].name: attrs[k].attr for k in range(len(attrs))}
    entries[ipu.MAPPING_ATTR] = mapping
    return ir.DictAttr.get(entries)


def declare_variable(scheduler, argument: ir.Value, name: str, layout) -> str:
    """A buffer for the variable `name` and its `ipu.variable`, in `layout` (the argument's
    plan). Nothing streams it: the host writes it by name."""
    tensor = ir.RankedTensorType(argument.type)
    buffer = scheduler.buffer("var", layout, tensor.element_type, argument.location)  # errors about it point at the argument
    ipu.variable(name, buffer, tensor, layout.mapping(), loc=argument.location, ip=ir.InsertionPoint(scheduler.program))
    return buffer


def update_variables(scheduler, op: ir.OpView, updates: dict[int, object]) -> dict[int, object]:
    """At the function's return: each updated variable's new value copied into its buffer
    (nothing when the op computing it wrote it there). A value held in another variable's
    buffer being overwritten (a swap), or a streamed result reading such a buffer (the old
    value, returned too), is first staged in a buffer of its own, a superstep earlier: one
    exchange phase must not write a buffer it reads. `updates`: result index -> the variable's
    `Stored`. Returns the staged streamed results (result index -> `Stored`)."""
    overwritten = set()
    for position, target in updates.items():
        if scheduler.get(op, op.operands[position]) != target:
            overwritten.add(target.buffer)
    staged = scheduler.assign(op, [(value, updates.get(position)) for position, value in enumerate(op.operands)], overwritten)
    return {k: v for k, v in staged.items() if k not in updates}
