"""`ipu-fold-batch-norm` (L0): fold the per-channel affine work after a convolution (an
inference BatchNorm) into the convolution's constant filter and bias.

torch-mlir exports an eval-mode `BatchNorm2d` after a convolution as element-wise generics on
the convolution's result, each with one per-channel constant: `x - mean`, `* 1/sqrt(var+eps)`
(a constant once `ipu-fold-constants` ran), `* gamma`, `+ beta`; ReLU / ReLU6 selects follow.
That is four passes over every activation on every run for what is `s[c] * x + t[c]`. Since a
convolution is linear in its filter, `s[f] * conv(x, W) + t[f] = conv(x, s[f] * W[f]) + t[f]`:
the scale goes into the constant filter at compile time, the shift into the convolution's
bias (its `outs`, which `ipu-convert-to-ipu` adds element-wise, fused with what follows).

The pass walks the single-use chain from a convolution's result through reshapes and
`linalg.generic`s, reading each body symbolically: the block argument of the chain's value is
`1 * x + 0`, and `addf`, `subf`, `mulf`, `divf`, `negf` with per-channel or scalar constants
(a generic's constant inputs indexed only by the channel's loops, scalar constants, constant
subexpressions evaluated as the program would) keep it affine. A generic whose one result is
that affine value, element for element, is absorbed whole and the chain goes on; the first
that also does something else (ReLU6's selects) keeps the rest of its body, which then reads
the block argument where it read the affine value. Scale and shift are composed in float64 and
rounded once to the filter's (and bias's) element type, so results change by rounding only.

Nothing changes unless every condition holds: a linalg 2-d convolution (`CONV_FORMS`) of
f32/f64 filter and result, its filter an `arith.constant` used only there, its `outs` a
per-channel constant (`linalg.fill` or `linalg.broadcast` of constants, or a constant, maybe
reshaped), its result used once, and finite folded values. f16 filters are left alone: rounding
the scaled filter to f16 lost more than the f16 BatchNorm chain does (docs/compiler.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ipu_mlir.dialects import ops_named
from ipu_mlir.dialects.ops.conv import CONV_FORMS
from ipu_mlir.dialects.ops.semantics import elementwise_kernel, numpy_dtype
from ipu_mlir.dialects.resources import dense_array, is_resource

from .pass_registry import ModulePass, register_pass

_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")
_AFFINE_OPS = ("arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.negf")
# f16 is left out on measurement (docs/compiler.md), bf16 and FP8 with it: rounding the scaled
# filter to them loses more still.
_FOLDED_TYPES = (np.dtype(np.float32), np.dtype(np.float64))
_CHANNEL_LETTERS = "gf"  # CONV_FORMS' output channel letters: group and filter


@register_pass
@dataclass
class FoldBatchNorm(ModulePass):
    """Fold per-channel scale and shift after a convolution (inference BatchNorm) into its constant filter and bias.

    For a linalg 2-d convolution whose filter is a constant used only there and whose result
    feeds, through single uses, generics computing `s[c] * x + t[c]` with per-channel constants
    (addf, subf, mulf, divf, negf; reshapes between them are followed): the filter becomes
    `W[f] * s[f]` and the `outs` bias `b[f] * s[f] + t[f]`, computed in float64 and rounded
    once. Generics that were only that affine map disappear; the first one doing more keeps the
    rest of its body. Anything else (a run-time filter, a second use of the result, a non-affine
    body, constants varying along other dimensions, f16 or integer types) is left unchanged.

    Before:

        %w = arith.constant dense<...> : tensor<4x3x3x3xf32>
        %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
        %y = linalg.conv_2d_nchw_fchw ins(%x, %w : ...) outs(%fill : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
        %bn = linalg.generic {indexing_maps = [#id, #chan, #chan, #chan, #chan, #id], ...}
            ins(%y, %mean, %inv_std, %gamma, %beta : tensor<1x4x8x8xf32>, tensor<4x1x1xf32>, ...) outs(%e : ...) {
        ^bb0(%in: f32, %m: f32, %is: f32, %g: f32, %b: f32, %out: f32):
          %0 = arith.subf %in, %m : f32
          %1 = arith.mulf %0, %is : f32
          %2 = arith.mulf %1, %g : f32
          %3 = arith.addf %2, %b : f32
          %4 = arith.maximumf %3, %zero : f32
          linalg.yield %4 : f32
        } -> tensor<1x4x8x8xf32>

    After (`s = inv_std * gamma`, `t = beta - mean * s`):

        %w2 = arith.constant dense<...> : tensor<4x3x3x3xf32>          // W[f] * s[f]
        %t = arith.constant dense<[...]> : tensor<4xf32>
        %bias = linalg.broadcast ins(%t : tensor<4xf32>) outs(%e2 : tensor<1x4x8x8xf32>) dimensions = [0, 2, 3]
        %y = linalg.conv_2d_nchw_fchw ins(%x, %w2 : ...) outs(%bias : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
        %bn = linalg.generic {...} ins(%y, %mean, %inv_std, %gamma, %beta : ...) outs(%e : ...) {
        ^bb0(%in: f32, %m: f32, %is: f32, %g: f32, %b: f32, %out: f32):
          %4 = arith.maximumf %in, %zero : f32
          linalg.yield %4 : f32
        } -> tensor<1x4x8x8xf32>
    """

    name = "ipu-fold-batch-norm"

    def run(self, module: ir.Operation) -> None:
        for conv in ops_named(module, CONV_FORMS):
            fold = _plan(conv)
            if fold is not None:
                fold.apply()


@dataclass
class _Affine:
    """`scale * x + shift`, both float64 arrays of a tensor's channel shape (its size on the
    convolution's channel dimensions, 1 elsewhere)."""

    scale: np.ndarray
    shift: np.ndarray


@dataclass
class _Body:
    """What a generic's body does with the chain's value: the affine value the rest of the
    body reads (`escape`), as `affine` of the block argument, and the ops computing it."""

    affine: _Affine
    escape: ir.Value
    ops: list[ir.Operation]
    whole: bool  # the generic computes nothing else: its result is the affine value


@dataclass
class _Fold:
    conv: ir.Operation
    filter: np.ndarray
    bias: np.ndarray | None  # the new `outs` (channel shape); None: the zero one stays
    absorbed: list[tuple[ir.Operation, int]]  # generics (and the chain's input) that become that input
    partial: tuple[ir.Operation, int, _Body] | None  # the last generic, keeping the rest of its body

    def apply(self) -> None:
        conv = self.conv
        filter_value, init = conv.operands[1], conv.operands[2]
        with conv.location, ir.InsertionPoint(conv):
            conv.operands[1] = _constant_like(filter_value, self.filter)
            if self.bias is not None:
                conv.operands[2] = _bias(init, self.bias, CONV_FORMS[conv.name].output)
        dead = [_owner(filter_value), _owner(init)]
        for generic, index in self.absorbed:
            dead.extend(_owner(v) for v in generic.operands)
            generic.results[0].replace_all_uses_with(generic.operands[index])
            generic.erase()
        if self.partial is not None:
            generic, index, body = self.partial
            body.escape.replace_all_uses_with(generic.regions[0].blocks[0].arguments[index])
            for op in reversed(body.ops):
                if not _used(op.results[0]):
                    op.erase()
        _erase_dead(dead)


def _plan(conv: ir.Operation) -> _Fold | None:
    """The fold of `conv` and the chain after it, or None when a condition fails. Reads and
    checks everything before `apply` changes anything."""
    form = CONV_FORMS[conv.name]
    filter_value, init = conv.operands[1], conv.operands[2]
    result = conv.results[0]
    dtype = _dtype(filter_value.type)
    if not (_folded_type(dtype) and _folded_type(_dtype(result.type))):
        return None
    if not _is_constant(filter_value) or _use_count(filter_value) != 1:
        return None
    if sorted(set(form.output) & set(_CHANNEL_LETTERS)) != sorted(set(form.filter) & set(_CHANNEL_LETTERS)):
        return None
    out_shape = _shape(result)
    channels = tuple(size if letter in _CHANNEL_LETTERS else 1 for letter, size in zip(form.output, out_shape))
    bias = _init_values(init, channels)
    if bias is None:
        return None
    chain = _follow(result, channels)
    if chain is None:
        return None
    total, absorbed, partial = chain
    scale = total.scale.reshape(channels)
    shift = total.shift.reshape(channels)
    filter_array = _read(filter_value)
    if filter_array is None:
        return None
    with np.errstate(all="ignore"):
        folded = filter_array.astype(np.float64) * _filter_scale(scale, form, _shape(filter_value))
        new_bias = bias * scale + shift
    if not (np.isfinite(folded).all() and np.isfinite(new_bias).all()):
        return None  # an overflow or a division by zero: not a rounding difference
    with np.errstate(over="ignore"):
        folded = folded.astype(dtype)
        new_bias = new_bias.astype(_dtype(init.type))
    if not (np.isfinite(folded).all() and np.isfinite(new_bias).all()):
        return None
    keep = not bias.any() and not new_bias.any()
    return _Fold(conv, folded, None if keep else new_bias, absorbed, partial)


def _follow(value: ir.Value, channels: tuple[int, ...]) -> tuple[_Affine, list, tuple | None] | None:
    """Walks the single uses after a convolution's result: reshapes, generics absorbed whole,
    maybe a last generic keeping part of its body. Returns the composed affine map (in the
    last tensor's channel shape), the absorbed generics and the partial one; None when
    nothing folds."""
    total = _Affine(np.ones(channels), np.zeros(channels))
    absorbed: list[tuple[ir.Operation, int]] = []
    partial = None
    while partial is None:
        uses = list(value.uses)
        if len(uses) != 1:
            break
        user, index = uses[0].owner.operation, uses[0].operand_number
        if user.name in _RESHAPES:
            reshaped = _reshape_channels(user, channels)
            if reshaped is None:
                break
            channels = reshaped
            total = _Affine(total.scale.reshape(channels), total.shift.reshape(channels))
            value = user.results[0]
            continue
        if user.name != "linalg.generic" or index >= _num_inputs(user):
            break
        body = _analyze(user, index, channels)
        if body is None:
            break
        with np.errstate(all="ignore"):  # non-finite values refuse the fold (_plan)
            total = _Affine(total.scale * body.affine.scale, total.shift * body.affine.scale + body.affine.shift)
        if body.whole:
            absorbed.append((user, index))
            value = user.results[0]
        else:
            partial = (user, index, body)
    if not absorbed and partial is None:
        return None
    return total, absorbed, partial


def _analyze(generic: ir.Operation, index: int, channels: tuple[int, ...]) -> _Body | None:
    """The affine part of `generic`'s body in its input `index` (the chain's value, of channel
    shape `channels`), or None when there is none that can be folded."""
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    x_map = maps[index]
    x_loops = [e.position if isinstance(e, ir.AffineDimExpr) else None for e in x_map.results]
    if None in x_loops or len(set(x_loops)) != len(x_loops):
        return None
    loop_channels = [1] * x_map.n_dims
    for loop, size in zip(x_loops, channels):
        loop_channels[loop] = size
    block = generic.regions[0].blocks[0]
    x = block.arguments[index]
    known: dict[ir.Value, _Affine | np.ndarray] = {x: _Affine(np.ones(loop_channels), np.zeros(loop_channels))}
    for i in range(_num_inputs(generic)):
        if i != index:
            array = _per_channel(generic.operands[i], maps[i], loop_channels)
            if array is not None:
                known[block.arguments[i]] = array
    ops: list[ir.Operation] = []
    for op in block.operations:
        if op.operation.name == "linalg.yield":
            break
        value = _evaluate(op, known)
        if value is not None:
            known[op.results[0]] = value
            if isinstance(value, _Affine):
                ops.append(op.operation)
    affine_results = {op.results[0] for op in ops} | {x}

    def inside(owner: ir.Operation) -> bool:
        return len(owner.results) == 1 and owner.results[0] in affine_results

    # The affine values something else reads (the yield included): exactly one, not x itself.
    escapes = [v for v in [x, *(op.results[0] for op in ops)] if any(not inside(u.owner.operation) for u in v.uses)]
    if len(escapes) != 1 or escapes[0] == x:
        return None
    escape = escapes[0]
    affine = known[escape]
    order = x_loops + [d for d in range(x_map.n_dims) if d not in x_loops]
    in_x = _Affine(*(np.broadcast_to(a, loop_channels).transpose(order).reshape(channels) for a in (affine.scale, affine.shift)))
    yield_op = block.operations[len(block.operations) - 1]
    whole = (
        len(generic.results) == 1
        and list(yield_op.operands) == [escape]
        and all(u.owner.operation.name == "linalg.yield" or inside(u.owner.operation) for u in escape.uses)
        and maps[-1] == x_map
        and all("parallel" in str(kind) for kind in ir.ArrayAttr(generic.attributes["iterator_types"]))
    )
    return _Body(in_x, escape, ops, whole)


def _evaluate(op: ir.OpView, known: dict) -> _Affine | np.ndarray | None:
    """One body op on what is known: an affine value of x, a constant array (over the
    generic's loops, 1 on the non-channel ones), or None for anything else."""
    name = op.operation.name
    if len(op.results) != 1:
        return None
    if name == "arith.constant":
        return _scalar(op.results[0])
    operands = []
    for value in op.operands:
        operand = known[value] if value in known else _scalar(value)
        if operand is None:
            return None
        operands.append(operand)
    if all(isinstance(o, np.ndarray) for o in operands):
        return _constant_op(op, operands)
    if name not in _AFFINE_OPS:
        return None
    if name == "arith.negf":
        (a,) = operands
        return _Affine(-a.scale, -a.shift)
    a, b = operands
    both = isinstance(a, _Affine) and isinstance(b, _Affine)
    if name in ("arith.addf", "arith.subf"):
        sign = 1.0 if name == "arith.addf" else -1.0
        if both:
            return _Affine(a.scale + sign * b.scale, a.shift + sign * b.shift)
        if isinstance(a, _Affine):
            return _Affine(a.scale, a.shift + sign * b.astype(np.float64))
        return _Affine(sign * b.scale, a.astype(np.float64) + sign * b.shift)
    if both:
        return None  # x * x, x / x: not affine
    if name == "arith.mulf":
        a, c = (a, b) if isinstance(a, _Affine) else (b, a)
        c = c.astype(np.float64)
        return _Affine(a.scale * c, a.shift * c)
    if isinstance(a, _Affine):  # divf by a constant; c / x is not affine
        with np.errstate(divide="ignore", invalid="ignore"):  # non-finite results refuse the fold
            return _Affine(a.scale / b.astype(np.float64), a.shift / b.astype(np.float64))
    return None


def _constant_op(op: ir.OpView, operands: list[np.ndarray]) -> np.ndarray | None:
    """An arith / math op on constants, computed in its own types as the program would."""
    name = op.operation.name
    if not name.startswith(("arith.", "math.")):
        return None
    result_dtype = _dtype(op.results[0].type)
    operand_dtypes = [_dtype(v.type) for v in op.operands]
    if result_dtype is None or any(d is None for d in operand_dtypes):
        return None
    predicate = ir.IntegerAttr(op.attributes["predicate"]).value if name in ("arith.cmpf", "arith.cmpi") else None
    kernel = elementwise_kernel(name, operand_dtypes, result_dtype, predicate)
    if kernel is None:
        return None
    with np.errstate(all="ignore"):
        return np.asarray(kernel(*operands)).astype(result_dtype, copy=False)


def _per_channel(value: ir.Value, amap: ir.AffineMap, loop_channels: list[int]) -> np.ndarray | None:
    """A constant input of a generic as an array over its loops (1 on the loops it does not
    read), if it varies only along the channel loops; None otherwise."""
    if not _is_constant(value):
        return None
    shape, compact, index, loops = _shape(value), [1] * amap.n_dims, [], []
    for expr, size in zip(amap.results, shape):
        if isinstance(expr, ir.AffineDimExpr) and expr.position not in loops:
            loops.append(expr.position)
            index.append(slice(None))
            compact[expr.position] = size
        elif isinstance(expr, ir.AffineConstantExpr) and expr.value == 0 and size == 1:
            index.append(0)
        else:
            return None
    if any(size != 1 and size != channel for size, channel in zip(compact, loop_channels)):
        return None  # varies along a loop that is not the channel's
    array = _read(value)
    if array is None:
        return None
    picked = array[tuple(index)].transpose(sorted(range(len(loops)), key=lambda i: loops[i]))
    return picked.reshape(compact)


def _init_values(init: ir.Value, channels: tuple[int, ...]) -> np.ndarray | None:
    """A convolution's `outs` as float64 of channel shape `channels`, when it is a per-channel
    constant; None otherwise (run-time values, `tensor.empty`'s undefined contents)."""
    owner = init.owner
    if isinstance(owner, ir.Block):
        return None
    name = owner.operation.name
    if name == "linalg.fill":
        scalar = _scalar(owner.operands[0])
        return None if scalar is None else np.full(channels, scalar, np.float64)
    if name == "linalg.broadcast":
        source = owner.operands[0]
        added = set(ir.DenseI64ArrayAttr(owner.attributes["dimensions"]))
        kept = [d for d in range(len(channels)) if d not in added]
        compact = [1] * len(channels)
        for d, size in zip(kept, _shape(source)):
            if size not in (1, channels[d]):
                return None
            compact[d] = size
        array = _read(source) if _is_constant(source) else None
        return None if array is None else np.broadcast_to(array.reshape(compact).astype(np.float64), channels)
    if name == "arith.constant":
        array = _read(init)
        if array is None:
            return None
        picked = array[tuple(slice(None) if c == s else slice(0, 1) for c, s in zip(channels, array.shape))]
        return picked.astype(np.float64) if np.array_equal(np.broadcast_to(picked, array.shape), array) else None
    if name in _RESHAPES:
        source_channels = _reshape_channels(owner, channels, forward=False)
        inner = None if source_channels is None else _init_values(owner.operands[0], source_channels)
        return None if inner is None else inner.reshape(channels)
    return None


def _reshape_channels(op: ir.OpView, channels: tuple[int, ...], forward: bool = True) -> tuple[int, ...] | None:
    """The channel shape on the other side of a reshape (its result's when `forward`, else its
    source's), None when the channels would mix with other dimensions. A per-channel array
    then reshapes as a plain numpy array: its row-major order is the channels'."""
    groups = [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(g)] for g in ir.ArrayAttr(op.attributes["reassociation"])]
    shapes = (_shape(op.operands[0]), _shape(op.results[0]))
    if (op.operation.name == "tensor.collapse_shape") == forward:  # from the side with more dimensions
        many, one = shapes if forward else shapes[::-1]
        out = []
        for g, dims in enumerate(groups):
            if all(channels[d] == 1 for d in dims):
                out.append(1)
            elif all(channels[d] == many[d] for d in dims):
                out.append(one[g])
            else:
                return None
        return tuple(out)
    one, many = shapes if forward else shapes[::-1]
    out = [1] * len(many)
    for g, dims in enumerate(groups):
        if channels[g] == one[g]:
            for d in dims:
                out[d] = many[d]
    return tuple(out)


def _filter_scale(scale: np.ndarray, form, filter_shape: Sequence[int]) -> np.ndarray:
    """The output channels' scale (over the convolution's output dimensions) laid out to
    multiply its filter."""
    out_letters = [letter for letter in form.output if letter in _CHANNEL_LETTERS]
    filter_letters = [letter for letter in form.filter if letter in _CHANNEL_LETTERS]
    compact = scale.reshape([scale.shape[i] for i, letter in enumerate(form.output) if letter in _CHANNEL_LETTERS])
    compact = compact.transpose([out_letters.index(letter) for letter in filter_letters])
    return compact.reshape([size if letter in _CHANNEL_LETTERS else 1 for letter, size in zip(form.filter, filter_shape)])


def _bias(init: ir.Value, bias: np.ndarray, output_letters: str) -> ir.Value:
    """A new `outs` holding `bias` (of the convolution's channel shape): a zero fill, or the
    per-channel constant broadcast along the other dimensions."""
    result_type = ir.RankedTensorType(init.type)
    empty = tensor.empty(result_type.shape, result_type.element_type)
    if not bias.any():
        zero = arith.constant(result_type.element_type, 0.0)
        return linalg.fill(zero, outs=[empty])
    channel_dims = [d for d, letter in enumerate(output_letters) if letter in _CHANNEL_LETTERS]
    compact = np.ascontiguousarray(bias.reshape([bias.shape[d] for d in channel_dims]))
    source = _new_constant(compact, ir.RankedTensorType.get(compact.shape, result_type.element_type), resource=compact.size > 16)
    others = [d for d in range(len(output_letters)) if d not in channel_dims]
    return linalg.broadcast(source, outs=[empty], dimensions=others).results[0]


def _constant_like(old: ir.Value, array: np.ndarray) -> ir.Value:
    """`array` as an `arith.constant` of `old`'s type, a blob if `old` was one."""
    return _new_constant(array, old.type, resource=is_resource(old.owner.attributes["value"]))


def _new_constant(array: np.ndarray, type_: ir.Type, resource: bool) -> ir.Value:
    array = np.ascontiguousarray(array)
    if resource:
        attr = ir.DenseResourceElementsAttr.get_from_buffer(array, "bn_folded", type_)
    else:
        attr = ir.DenseElementsAttr.get(array, type=type_)
    return ir.Operation.create("arith.constant", results=[type_], attributes={"value": attr}).results[0]


def _erase_dead(ops: list[ir.Operation | None]) -> None:
    """Erases those of `ops` (constants, empties, fills, broadcasts, reshapes) nothing reads any
    more, then what only they read. An erased op's Python object must not be touched again
    (not even hashed), so each is keyed while alive."""
    pending = [(hash(op), op) for op in ops if op is not None]
    erased: set[int] = set()
    while pending:
        key, op = pending.pop()
        if key in erased:
            continue
        if op.name not in ("arith.constant", "tensor.empty", "linalg.fill", "linalg.broadcast", *_RESHAPES):
            continue
        if any(_used(result) for result in op.results):
            continue
        pending.extend((hash(o), o) for o in map(_owner, op.operands) if o is not None)
        op.erase()
        erased.add(key)


def _owner(value: ir.Value) -> ir.Operation | None:
    return None if isinstance(value.owner, ir.Block) else value.owner.operation


def _scalar(value: ir.Value) -> np.ndarray | None:
    """A scalar `arith.constant`'s value, a 0-d array of its type."""
    if isinstance(value.type, ir.ShapedType) or not _is_constant(value):
        return None
    dtype = _dtype(value.type)
    attr = value.owner.attributes["value"]
    if dtype is None or not isinstance(attr, (ir.FloatAttr, ir.IntegerAttr, ir.BoolAttr)):
        return None
    return np.array(attr.value, dtype)


def _read(value: ir.Value) -> np.ndarray | None:
    """A constant tensor's elements in its shape."""
    dtype = _dtype(value.type)
    array = None if dtype is None else dense_array(value.owner.attributes["value"], dtype)
    shape = _shape(value)
    if array is None or array.size != math.prod(shape):
        return None
    return np.asarray(array, dtype).reshape(shape)


def _folded_type(dtype: np.dtype | None) -> bool:
    # `is not None` first: numpy takes None for float64, `None in (np.dtype("f8"),)` is True.
    return dtype is not None and dtype in _FOLDED_TYPES


def _dtype(type_: ir.Type) -> np.dtype | None:
    return numpy_dtype(ir.ShapedType(type_).element_type if isinstance(type_, ir.ShapedType) else type_)


def _shape(value: ir.Value) -> list[int]:
    return list(ir.RankedTensorType(value.type).shape)


def _is_constant(value: ir.Value) -> bool:
    return not isinstance(value.owner, ir.Block) and value.owner.operation.name == "arith.constant"


def _num_inputs(generic: ir.Operation) -> int:
    return len(generic.operands) - len(generic.results)


def _use_count(value: ir.Value) -> int:
    return sum(1 for _ in value.uses)


def _used(value: ir.Value) -> bool:
    return any(True for _ in value.uses)
