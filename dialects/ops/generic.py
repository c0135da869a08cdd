"""`linalg.generic` as an L1 compute op: element-wise work, broadcasts, transposes, reductions
and pooling windows, on its own loops and indexing maps.

It converts from nothing (upstream `linalg-generalize-named-ops` makes it) and the codelet
interpreter runs its body itself (`kernel` is None). A reduction whose body is
`yield combine(f(inputs), acc)` with an associative `combine` (`COMBINERS`) may be cut across
tiles; its codelet then starts each piece from the combiner's identity.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from ipu_mlir.target import Target, cost_model
from ipu_mlir.target.diagnostics import op_error
from ipu_mlir.target.element_types import identity_value

from .. import ipu
from .registry import ComputeOp, Example, Piece, register_op
from .space import COMBINERS, SUM, Access, Space, loop_extents, shape


@register_op
class Generic(ComputeOp):
    name = "linalg.generic"
    kernel_shared = True  # runtime/fused.py's kernels cache layouts by shapes and strides only

    def extents(self, op: ir.OpView) -> tuple[int, ...]:
        return loop_extents(op)

    def space(self, op: ir.OpView) -> Space:
        maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
        iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
        if len(op.results) != 1:
            raise op_error(
                op,
                f"with {len(op.results)} results is not supported by ipu-plan (one result per op; ipu-convert-to-ipu splits "
                f"generics whose results do not read each other's accumulators, unlike an arg-max)",
            )
        num_inputs = len(op.operands) - 1
        accesses = [
            tuple(_access(op, expr, size) for expr, size in zip(amap.results, shape(value))) for value, amap in zip(op.operands, maps)
        ]
        extents = self.extents(op)
        reductions = tuple(d for d, it in enumerate(iterators) if "reduction" in it)
        # Each window over the loop better kept whole, its extent that loop's (`_oriented`).
        accesses = [tuple(_oriented(a, extents, reductions) if isinstance(a, _WindowAccess) else a for a in row) for row in accesses]
        windows = {a.window_loop for row in accesses for a in row if isinstance(a, _WindowAccess)}
        result_loops = tuple(a.loop for a in accesses[-1])
        if any(a.kind != "dim" for a in accesses[-1]) or set(result_loops) & set(reductions):
            raise op_error(op, "has a result indexing map that is not a projection of its parallel loops; ipu-plan cannot place it")
        combiner = _combiner(op) if reductions else None
        splittable = tuple(d not in windows and (d not in reductions or combiner is not None) for d in range(len(extents)))
        return Space(
            op,
            extents,
            reductions,
            splittable,
            tuple(accesses[:num_inputs]),
            result_loops,
            ir.RankedTensorType(op.results[0].type).element_type,
            combiner=combiner,
        )

    def reads_init(self, op: ir.OpView) -> bool:
        block = op.regions[0].blocks[0]
        return any(True for _ in block.arguments[len(block.arguments) - 1].uses)

    def codelet(self, op: ir.OpView, name: str, piece: Piece, ip: ir.InsertionPoint, loc: ir.Location) -> None:
        """`op` on pieces: the same maps and body, smaller tensors. Scalars the body captures
        from outside (constants) are cloned in. With `piece.combiner`, the piece of a reduction
        cut across tiles starts from the combiner's identity instead of the init."""
        inputs = list(op.operands)[:-1]
        init = op.operands[len(op.operands) - 1]
        types = [_tensor(s, ir.RankedTensorType(v.type).element_type) for s, v in zip(piece.shapes, inputs)]
        init_type = _tensor(piece.box, ir.RankedTensorType(init.type).element_type)
        function = ipu.codelet_function(name, types + ([init_type] if piece.uses_init else []), [init_type], loc=loc, ip=ip)
        block = function.regions[0].blocks[0]
        with ir.InsertionPoint(block), loc:
            if piece.combiner is not None:
                outs = filled(piece.box, init_type.element_type, identity_constant(piece.combiner, init_type.element_type))
            else:
                outs = block.arguments[len(types)] if piece.uses_init else _empty(init_type)
            generic = ir.Operation.create(
                "linalg.generic",
                results=[init_type],
                operands=list(block.arguments)[: len(types)] + [outs],
                attributes={n: op.attributes[n] for n in op.attributes if not n.startswith("ipu.")},
                regions=1,
                loc=loc,
            )
            _clone_body(op, generic, block)
            func.ReturnOp([generic.results[0]])

    def kernel(self, op: ir.OpView, batch: int) -> None:
        return None  # the codelet interpreter runs the body

    def examples(self) -> list[Example]:
        """Element-wise work with a broadcast, a reduction into a transposed result, every
        combiner of `COMBINERS` (the sums accumulating onto an input), a pooling window, and the
        two cases of issue 24 (a window of two parallel loops, a non-associative reduction)."""
        floats = [_reduction(c, "f32", i) for i, c in enumerate(sorted(c for c in COMBINERS if c.endswith("f")))]
        integers = [_reduction(c, "i32", i) for i, c in enumerate(sorted(c for c in COMBINERS if not c.endswith("f")))]
        return [
            Example("broadcast-relu", _BROADCAST_RELU),
            Example("reduce-transposed", _REDUCE_TRANSPOSED),
            Example("combiners-f32", _program("f32", floats)),
            Example("combiners-i32", _program("i32", integers)),
            Example(
                "combiners-i1", _program("i1", [_reduction(c, "i1", i) for i, c in enumerate(("arith.andi", "arith.ori", "arith.xori"))])
            ),
            Example("two-reductions-broadcast", _TWO_REDUCTIONS),
            Example("max-pool", _MAX_POOL),
            Example("generalized-named-ops", _GENERALIZED),
            Example("unfold", _UNFOLD),
            Example("subi-reduction", _program("i32", [_reduction("arith.subi", "i32", 0)])),
        ]

    def work(self, op: ir.OpView, extents: tuple[int, ...], target: Target) -> int:
        return self.space_work(self.space(op), extents, target)

    def space_work(self, space: Space, extents: tuple[int, ...], target: Target) -> int:
        """Each point of the box runs the body's instructions (`body_instructions`), or the
        memory traffic bounds it (`cost_model.elementwise_work`): each input's piece read once
        and the result's piece written once (a reduction writes its result, not its points)."""
        op = space.op
        instructions = body_instructions(op.regions[0].blocks[0])
        reads = sum(
            box_elements(accesses, extents) * ipu.element_bytes(_element_type(value))
            for accesses, value in zip(space.operands, op.operands)
        )
        element_type = _element_type(op.results[0])
        writes = math.prod(extents[d] for d in space.result) * ipu.element_bytes(element_type)
        return cost_model.elementwise_work(math.prod(extents), max(1, instructions), element_type, target, reads, writes)


def _element_type(value: ir.Value) -> ir.Type:
    return ir.ShapedType(value.type).element_type if isinstance(value.type, ir.ShapedType) else value.type


def box_elements(accesses: Sequence[Access], extents: Sequence[int]) -> int:
    """The elements of an operand that the box `extents` of the loops reads (a window with its
    padding included: the tile pads its piece)."""
    elements = 1
    for a in accesses:
        if a.kind == "const":
            continue
        if a.loop is None:
            elements *= a.size
            continue
        r = a.region(0, extents[a.loop])
        elements *= r.hi - r.lo + r.pad_low + r.pad_high if a.kind == "window" else r.hi - r.lo
    return elements


# --- The body's instructions ---------------------------------------------------------------


def body_instructions(block: ir.Block) -> int:
    """Vector instructions per point of a generic's body (`cost_model.OP_INSTRUCTIONS`; one for
    anything not listed, none for constants, which live in registers). A multiply by a scalar
    constant whose only use adds it to something is one instruction with that add, not two:
    the IPU's `f32v2axpy` (z = a x + y on 2 floats) and `f16v4mix` (z = a x + b y on 4 halves)
    take the scalar from the `$TAS` state register (graphcore/ipu_assembly_support,
    isa_doc_generated/hover/f32v2axpy.md and f16v4mix.md), and a worker co-issues its loads and
    store with it (`ld2xst64pace`, ld2xst64pace.md): the STREAM triad of simehaa/IPU
    (STREAMTriad/codelets.cpp) runs one such bundle per 2 floats, at 99.1% of peak bandwidth.
    A product of two tensors is not fused: `f32v2mac` accumulates it, but adding a third operand
    to the accumulators is a second instruction."""
    operations = list(block.operations)[:-1]  # the yield moves nothing
    fused: list[ir.Operation] = []  # the adds that took a multiply in
    total = 0
    for inner in operations:
        name = inner.operation.name
        if name == "arith.constant":
            continue
        if name == "arith.mulf":
            add = _axpy_add(inner)
            if add is not None and not any(add == other for other in fused):
                fused.append(add)
                continue
        total += cost_model.OP_INSTRUCTIONS.get(name, 1)
    return total


def _axpy_add(multiply: ir.OpView) -> ir.Operation | None:
    """The add or subtract that `multiply` (k * x, k a constant) folds into as a*x + y: its only
    use, as either operand of an addf or as the subtrahend of a subf (y - k x = (-k) x + y)."""
    if not any(_is_constant(v) for v in multiply.operands):
        return None
    uses = list(multiply.results[0].uses)
    if len(uses) != 1:
        return None
    user = uses[0].owner.operation
    if user.name == "arith.addf" or (user.name == "arith.subf" and uses[0].operand_number == 1):
        return user
    return None


def _is_constant(value: ir.Value) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.name == "arith.constant"


# --- Building codelets ---------------------------------------------------------------------


def _tensor(sizes: Sequence[int], element_type: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(sizes), element_type)


def _empty(result_type: ir.RankedTensorType) -> ir.Value:
    return ir.Operation.create("tensor.empty", results=[result_type]).results[0]


def _clone_body(source: ir.OpView, target: ir.Operation, function_block: ir.Block) -> None:
    old = source.regions[0].blocks[0]
    new = target.regions[0].blocks.append(*[a.type for a in old.arguments])
    mapping = {old.arguments[i]: new.arguments[i] for i in range(len(old.arguments))}
    captured: dict = {}
    with ir.InsertionPoint(new):
        for op in old.operations:
            copy = op.operation.clone()
            for index, operand in enumerate(op.operands):
                if operand in mapping:
                    copy.operands[index] = mapping[operand]
                else:
                    copy.operands[index] = _capture(source, operand, function_block, captured)
            for old_result, new_result in zip(op.results, copy.results):
                mapping[old_result] = new_result


def _capture(source: ir.OpView, value: ir.Value, function_block: ir.Block, captured: dict) -> ir.Value:
    if value in captured:
        return captured[value]
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        raise op_error(source, "uses a value from outside its body that is not a constant; ipu-schedule cannot copy it to tiles")
    copy = owner.clone(ip=ir.InsertionPoint.at_block_begin(function_block))
    captured[value] = copy.results[0]
    return copy.results[0]


def _is_float(element_type: ir.Type) -> bool:
    return isinstance(element_type, ir.FloatType)


def combiner_of(combiner: str, element_type: ir.Type) -> str:
    """The arith op of a combiner (`SUM`: addf or addi, by element type)."""
    if combiner == SUM:
        return "arith.addf" if _is_float(element_type) else "arith.addi"
    return combiner


def identity_attribute(combiner: str, element_type: ir.Type) -> ir.Attribute:
    """The scalar that `combiner` leaves unchanged (0 for a sum...)."""
    value = COMBINERS[combiner_of(combiner, element_type)] if combiner != SUM else 0
    if _is_float(element_type):
        return ir.FloatAttr.get(element_type, identity_value(str(element_type), float(value)))
    width = ir.IntegerType(element_type).width
    value = {"min": -(2 ** (width - 1)), "max": 2 ** (width - 1) - 1}.get(value, value)
    return ir.IntegerAttr.get(element_type, int(value))


def identity_constant(combiner: str, element_type: ir.Type) -> ir.Value:
    """An `arith.constant` of `identity_attribute`."""
    attr = identity_attribute(combiner, element_type)
    return ir.Operation.create("arith.constant", results=[element_type], attributes={"value": attr}).results[0]


def filled(sizes: Sequence[int], element_type: ir.Type, value: ir.Value) -> ir.Value:
    """A `linalg.fill` of a new tensor with the scalar `value`."""
    result_type = _tensor(sizes, element_type)
    fill = ir.Operation.create(
        "linalg.fill",
        results=[result_type],
        operands=[value, _empty(result_type)],
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])},
        regions=1,
    )
    body = fill.regions[0].blocks.append(element_type, element_type)
    with ir.InsertionPoint(body):
        ir.Operation.create("linalg.yield", operands=[body.arguments[0]])
    return fill.results[0]


# --- The iteration space -------------------------------------------------------------------


def _combiner(op: ir.OpView) -> str | None:
    """The op folding each value into the accumulator, when the body is
    `yield combine(f(inputs), acc)` with the accumulator used nowhere else: then the
    reduction can be cut across tiles and the partial results combined."""
    block = op.regions[0].blocks[0]
    accumulator = block.arguments[len(block.arguments) - 1]
    terminator = list(block.operations)[-1]
    value = terminator.operands[0]
    if isinstance(value.owner, ir.Block) or value.owner.name not in COMBINERS:
        return None
    uses = [use.owner for use in accumulator.uses]
    if len(uses) != 1 or uses[0] != value.owner or list(value.owner.operands).count(accumulator) != 1:
        return None
    return value.owner.name


@dataclass(frozen=True)
class _WindowAccess(Access):
    window_loop: int = 0


def _access(op: ir.OpView, expr: ir.AffineExpr, size: int) -> Access:
    if isinstance(expr, ir.AffineDimExpr):
        return Access("dim", size, expr.position)
    if isinstance(expr, ir.AffineConstantExpr) and expr.value == 0 and size == 1:
        return Access("const", size)
    if isinstance(expr, ir.AffineAddExpr):
        terms = [_scaled_dim(t) for t in (expr.lhs, expr.rhs)]
        if all(terms):
            (stride, out_loop), (dilation, window_loop) = terms
            return _WindowAccess("window", size, out_loop, stride, dilation, 0, 0, window_loop=window_loop)
    raise op_error(op, f"has an indexing expression '{expr}' that ipu-plan cannot place")


def _oriented(access: _WindowAccess, extents: tuple[int, ...], reductions: tuple[int, ...]) -> _WindowAccess:
    """`access` (`stride * d[loop] + dilation * d[window_loop]`) with its window over the loop
    better kept whole, and that loop's extent: a summed loop rather than a result loop (a
    convolution's taps), else the shorter one, so that the longer one can be cut (an unfold's
    `d0 + d1` over 4 and 64 values cuts the 64). Both orders read the same elements."""

    def rank(loop: int) -> tuple[bool, int]:
        return loop in reductions, -extents[loop]

    if rank(access.loop) > rank(access.window_loop):
        access = dataclasses.replace(
            access, loop=access.window_loop, window_loop=access.loop, stride=access.dilation, dilation=access.stride
        )
    return dataclasses.replace(access, window=extents[access.window_loop])


def _scaled_dim(expr: ir.AffineExpr) -> tuple[int, int] | None:
    if isinstance(expr, ir.AffineDimExpr):
        return (1, expr.position)
    if isinstance(expr, ir.AffineMulExpr):
        a, b = expr.lhs, expr.rhs
        if isinstance(a, ir.AffineConstantExpr):
            a, b = b, a
        if isinstance(a, ir.AffineDimExpr) and isinstance(b, ir.AffineConstantExpr):
            return (b.value, a.position)
    return None


# --- The conformance examples (test/python/test_conformance.py) -----------------------------

_BROADCAST_RELU = """
func.func @main(%a: tensor<7x5xf32>, %b: tensor<5xf32>) -> tensor<7x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<7x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<7x5xf32>, tensor<5xf32>) outs(%e : tensor<7x5xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<7x5xf32>
  return %r : tensor<7x5xf32>
}
"""
_REDUCE_TRANSPOSED = """
func.func @main(%a: tensor<3x7x5xf32>) -> tensor<5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2, d0)>],
                       iterator_types = ["parallel", "reduction", "parallel"]} ins(%a : tensor<3x7x5xf32>) outs(%init : tensor<5x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
"""
_TWO_REDUCTIONS = """
func.func @main(%a: tensor<4x5x6xf32>, %b: tensor<4x1xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0)>,
                                        affine_map<(d0, d1, d2) -> (d0)>],
                       iterator_types = ["parallel", "reduction", "reduction"]} ins(%a, %b : tensor<4x5x6xf32>, tensor<4x1xf32>)
         outs(%init : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
_MAX_POOL = """
func.func @main(%x: tensor<1x3x9x8xf32>) -> tensor<1x3x4x3xf32> {
  %low = arith.constant -3.0e+38 : f32
  %e = tensor.empty() : tensor<1x3x4x3xf32>
  %init = linalg.fill ins(%low : f32) outs(%e : tensor<1x3x4x3xf32>) -> tensor<1x3x4x3xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%x, %window : tensor<1x3x9x8xf32>, tensor<3x3xf32>) outs(%init : tensor<1x3x4x3xf32>) -> tensor<1x3x4x3xf32>
  return %r : tensor<1x3x4x3xf32>
}
"""
# Named ops no record converts, which linalg-generalize-named-ops makes generics.
_GENERALIZED = """
func.func @main(%x1: tensor<2x9x3xf32>, %w1: tensor<3x3x4xf32>, %o1: tensor<2x7x4xf32>,
                %x3: tensor<1x4x5x6x2xf32>, %w3: tensor<2x2x3x2x3xf32>, %o3: tensor<1x3x4x4x3xf32>,
                %xp: tensor<1x7x7x3xf32>, %op: tensor<1x3x3x3xf32>,
                %a: tensor<2x3x4x5xf32>, %b: tensor<6x3x7x5xf32>, %c: tensor<2x6x4x7xf32>,
                %p: tensor<4x6xf32>, %q: tensor<5x6xf32>, %r: tensor<4x5xf32>)
    -> (tensor<2x7x4xf32>, tensor<1x3x4x4x3xf32>, tensor<1x3x3x3xf32>, tensor<2x6x4x7xf32>, tensor<4x5xf32>, tensor<4x6xf32>) {
  %conv1 = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
             ins(%x1, %w1 : tensor<2x9x3xf32>, tensor<3x3x4xf32>) outs(%o1 : tensor<2x7x4xf32>) -> tensor<2x7x4xf32>
  %conv3 = linalg.conv_3d_ndhwc_dhwcf {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
             ins(%x3, %w3 : tensor<1x4x5x6x2xf32>, tensor<2x2x3x2x3xf32>) outs(%o3 : tensor<1x3x4x4x3xf32>) -> tensor<1x3x4x4x3xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %pool = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
            ins(%xp, %window : tensor<1x7x7x3xf32>, tensor<3x3xf32>) outs(%op : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %tiles = linalg.mmt4d ins(%a, %b : tensor<2x3x4x5xf32>, tensor<6x3x7x5xf32>) outs(%c : tensor<2x6x4x7xf32>) -> tensor<2x6x4x7xf32>
  %contract = linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                               affine_map<(m, n, k) -> (m, n)>]
                ins(%p, %q : tensor<4x6xf32>, tensor<5x6xf32>) outs(%r : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %product = linalg.elementwise kind=#linalg.elementwise_kind<mul> ins(%p, %p : tensor<4x6xf32>, tensor<4x6xf32>)
               outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %conv1, %conv3, %pool, %tiles, %contract, %product
    : tensor<2x7x4xf32>, tensor<1x3x4x4x3xf32>, tensor<1x3x3x3xf32>, tensor<2x6x4x7xf32>, tensor<4x5xf32>, tensor<4x6xf32>
}
"""
_UNFOLD = """
func.func @main(%a: tensor<67xf32>) -> tensor<64x4xf32> {
  %e = tensor.empty() : tensor<64x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d1, d0)>],
                       iterator_types = ["parallel", "parallel"]} ins(%a : tensor<67xf32>) outs(%e : tensor<64x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<64x4xf32>
  return %r : tensor<64x4xf32>
}
"""


def _reduction(combiner: str, element: str, index: int) -> str:
    """Reduction number `index` of `_program`: rows of %a folded with `combiner` onto its own
    input %i<index>: the combiner's identity is never where a piece starts from by accident."""
    return f"""
  %r{index} = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}}
         ins(%a : tensor<6x11x{element}>) outs(%i{index} : tensor<6x{element}>) {{
  ^bb0(%x: {element}, %o: {element}):
    %c = {combiner} %o, %x : {element}
    linalg.yield %c : {element}
  }} -> tensor<6x{element}>"""


def _program(element: str, reductions: list[str]) -> str:
    """`@main` of %a (6 x 11) and one init per reduction, returning every reduction."""
    count = len(reductions)
    inits = "".join(f", %i{i}: tensor<6x{element}>" for i in range(count))
    types = ", ".join([f"tensor<6x{element}>"] * count)
    results = ", ".join(f"%r{i}" for i in range(count))
    return f"func.func @main(%a: tensor<6x11x{element}>{inits}) -> ({types}) {{{''.join(reductions)}\n  return {results} : {types}\n}}\n"
