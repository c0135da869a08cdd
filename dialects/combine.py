"""The mark of a partial-sum combine: the second stage of a reduction cut across tiles.

`ipu-schedule` builds each combine codelet (lowering/codelets.py `combine_codelet`) with

    ipu.combine = {combiner = "arith.addf", epilogue = false, init = false}

on its `func.func`: its first argument holds the k partial results stacked along a leading
axis, read only by the combine, which starts from the combiner's identity (`init = false`) or
from the op's init, its second argument (`init = true`), and combines the k pieces in order
along that axis. `epilogue = false`: the combined value is the codelet's result;
`epilogue = true`: more IR follows that reads it (`ipu-fuse-compute-sets` runs an
element-wise consumer after the combine). The verifier checks that a marked codelet is
exactly that (`mark_problem`), so the simulator relies on the mark alone
(runtime/partials_in_place.py sums the partials where the products left them).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from .ops.generic import identity_attribute
from .ops.space import COMBINERS

COMBINE_ATTR = "ipu.combine"


@dataclass(frozen=True)
class CombineMark:
    combiner: str  # the arith op combining two values (`arith.addf`...)
    init: bool  # starts from the codelet's second argument, not the identity
    epilogue: bool  # IR after the combine reads its value

    def attribute(self) -> ir.Attribute:
        return ir.DictAttr.get(
            {"combiner": ir.StringAttr.get(self.combiner), "init": ir.BoolAttr.get(self.init), "epilogue": ir.BoolAttr.get(self.epilogue)}
        )

    @staticmethod
    def of(function: ir.Operation | ir.OpView | None) -> CombineMark | None:
        """The mark of a codelet, None if it has none or a malformed one (the verifier
        reports that)."""
        if function is None or COMBINE_ATTR not in function.operation.attributes:
            return None
        return _decode(function.operation.attributes[COMBINE_ATTR])


def _decode(attribute: ir.Attribute) -> CombineMark | None:
    if not isinstance(attribute, ir.DictAttr) or len(attribute) != 3:
        return None
    try:
        combiner, init, epilogue = attribute["combiner"], attribute["init"], attribute["epilogue"]
    except KeyError:
        return None
    if not isinstance(combiner, ir.StringAttr) or combiner.value not in COMBINERS:
        return None
    if not isinstance(init, ir.BoolAttr) or not isinstance(epilogue, ir.BoolAttr):
        return None
    return CombineMark(combiner.value, init.value, epilogue.value)


def mark_problem(function: ir.OpView) -> str | None:
    """What makes a marked codelet other than its mark says (module docstring), or None."""
    mark = CombineMark.of(function)
    if mark is None:
        return f"expects a dictionary {{combiner = one of {', '.join(COMBINERS)}, init = bool, epilogue = bool}}"
    if not function.regions[0].blocks:
        return "has no body"
    block = function.regions[0].blocks[0]
    arguments, ops = list(block.arguments), list(block.operations)
    partials = arguments[0].type if arguments else None
    if not isinstance(partials, ir.RankedTensorType) or partials.rank < 1:
        return "expects its first argument to be the partials, a ranked tensor"
    element_type, rank = partials.element_type, partials.rank
    box = ir.RankedTensorType.get(list(partials.shape[1:]), element_type)
    if mark.init:
        if len(arguments) < 2 or arguments[1].type != box:
            return f"expects its second argument to be the init, a {box}"
        start, combined = arguments[1], ops[:1]
    else:
        if len(ops) < 5 or [op.operation.name for op in ops[:3]] != ["arith.constant", "tensor.empty", "linalg.fill"]:
            return "expects it to start with the combiner's identity filled into a tensor.empty"
        constant, empty, fill = ops[:3]
        if constant.attributes["value"] != identity_attribute(mark.combiner, element_type):
            return f"expects its fill to be {identity_attribute(mark.combiner, element_type)}, the identity of {mark.combiner}"
        if list(fill.operands) != [constant.results[0], empty.results[0]]:
            return "expects its fill to fill the tensor.empty with that identity"
        start, combined = fill.results[0], ops[3:4]
    if not combined or combined[0].operation.name != "linalg.generic" or list(combined[0].operands) != [arguments[0], start]:
        return "expects a linalg.generic combining the partials onto the start value next"
    generic = combined[0]
    kinds = [str(k).split("<")[-1].rstrip(">") for k in ir.ArrayAttr(generic.attributes["iterator_types"])]
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    dims = [ir.AffineDimExpr.get(i) for i in range(rank)]
    if kinds != ["reduction"] + ["parallel"] * (rank - 1) or maps != [ir.AffineMap.get(rank, 0, dims), ir.AffineMap.get(rank, 0, dims[1:])]:
        return "expects its linalg.generic to reduce the leading axis of the partials, element by element"
    body = list(generic.regions[0].blocks[0].operations)
    values = list(generic.regions[0].blocks[0].arguments)
    if not (
        [op.operation.name for op in body] == [mark.combiner, "linalg.yield"]
        and list(body[0].operands) in (values, values[::-1])
        and list(body[1].operands) == [body[0].results[0]]
    ):
        return f"expects its linalg.generic's body to be one {mark.combiner} of the partial and the accumulator"
    if sum(1 for _ in arguments[0].uses) != 1:
        return "expects the partials to be read by the combine only"
    after = ops[1 if mark.init else 4]
    returned = after.operation.name == "func.return" and list(after.operands) == [generic.results[0]]
    if returned == mark.epilogue:
        return (
            "expects IR after the combine reading its value (epilogue = true)"
            if mark.epilogue
            else "expects it to return the combine's value"
        )
    return None
