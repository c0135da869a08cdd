"""Named linalg contractions and 2-d convolutions to `ipu.matmul` and `ipu.conv`, for
`ipu-convert-to-ipu` (lowering/convert_to_ipu.py, step 3).

A contraction with one summed dimension, at most one m and one n and any batch dimensions
(matmul, batch_matmul, matvec, vecmat, dot, ...) becomes an `ipu.matmul` between
`linalg.generic` transposes and casts; a convolution in any of the layouts of `CONV_FORMS`
(NCHW, NHWC, depthwise, grouped) becomes an `ipu.conv` on NCHW and FCHW, its zero padding
folded in.

    rewrite_named_ops(function)    # every named op of a func.func it knows, in place
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import linalg

from ipu_mlir.dialects import ipu

from . import tensor_builders as tb


@dataclass(frozen=True)
class ConvForm:
    """Layouts of a named convolution, one letter per dimension: input over n, g(roup),
    c(hannel), h, w; filter over g, f, c, y (kh), x (kw); output over n, g, f, p (oh), q (ow).
    A letter that is absent has size 1; depthwise convolutions call the channel g."""

    input: str
    filter: str
    output: str


CONV_FORMS = {
    "linalg.conv_2d_nchw_fchw": ConvForm("nchw", "fcyx", "nfpq"),
    "linalg.conv_2d_nhwc_hwcf": ConvForm("nhwc", "yxcf", "npqf"),
    "linalg.conv_2d_nhwc_fhwc": ConvForm("nhwc", "fyxc", "npqf"),
    "linalg.depthwise_conv_2d_nchw_chw": ConvForm("nghw", "gyx", "ngpq"),
    "linalg.depthwise_conv_2d_nhwc_hwc": ConvForm("nhwg", "yxg", "npqg"),
    "linalg.depthwise_conv_2d_nhwc_hwcm": ConvForm("nhwg", "yxgf", "npqgf"),
    "linalg.conv_2d_ngchw_fgchw": ConvForm("ngchw", "fgcyx", "ngfpq"),
    "linalg.conv_2d_ngchw_gfchw": ConvForm("ngchw", "gfcyx", "ngfpq"),
}
CONTRACTIONS = frozenset({
    "linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.vecmat",
    "linalg.batch_matvec", "linalg.batch_vecmat", "linalg.dot",
})  # fmt: skip


def rewrite_named_ops(function: ir.OpView) -> None:
    for op in list(function.regions[0].blocks[0].operations):
        name = op.operation.name
        if name not in CONTRACTIONS and name not in CONV_FORMS:
            continue
        with ir.InsertionPoint(op), op.location:
            result = _contraction(op) if name in CONTRACTIONS else _convolution(op, CONV_FORMS[name])
        if result is not None:
            op.results[0].replace_all_uses_with(result)
            op.operation.erase()


def _contraction(op: ir.OpView) -> ir.Value | None:
    """`ipu.matmul` for a contraction with one k, at most one m and one n, any batch dims; None
    (left for generalization) otherwise. Operands are transposed / broadcast to
    (batch, m, k) x (batch, k, n) first; a missing m or n becomes a unit dim."""
    dims = linalg.infer_contraction_dimensions(op)
    maps = [_dims_of(ir.AffineMapAttr(m).value) for m in linalg.get_indexing_maps(op)]
    lhs, rhs, init = op.operands
    out_type = ir.RankedTensorType(op.results[0].type)
    if dims is None or None in maps or str(out_type.element_type) == "i1":  # i1 "adds" with ori
        return None
    batch, m, n, k = (list(dims.batch), list(dims.m), list(dims.n), list(dims.k))
    if len(k) != 1 or len(m) > 1 or len(n) > 1 or sorted(maps[2]) != sorted(batch + m + n):
        return None
    if not set(maps[0]) <= set(batch + m + k) or not set(maps[1]) <= set(batch + k + n):
        return None
    extents = {}
    for value, value_dims in zip(op.operands, maps):
        extents.update(zip(value_dims, ir.RankedTensorType(value.type).shape))
    unsigned = _is_unsigned(op)
    element_type = _input_type(lhs, rhs, out_type.element_type, unsigned)
    a = tb.relayout(lhs, maps[0], batch + m + k, element_type, unsigned, extents)
    b = tb.relayout(rhs, maps[1], batch + k + n, element_type, unsigned, extents)
    units = len(batch) + 1  # where the missing m (in a) or n (in b) goes
    a = a if m else tb.unsqueeze(a, {units - 1})
    b = b if n else tb.unsqueeze(b, {units})
    product = ipu.matmul(a, b, element_type=out_type.element_type).result
    product = tb.squeeze(product, ({units - 1} if not m else set()) | ({units} if not n else set()))
    return add_init(tb.relayout(product, batch + m + n, maps[2], out_type.element_type, unsigned), init)


def _convolution(op: ir.OpView, form: ConvForm) -> ir.Value | None:
    """`ipu.conv` (NCHW input, FCHW filter, groups) for a 2-d convolution; the layouts of
    `form` are transposed and reshaped to and from it."""
    input, filter, init = op.operands
    out_type = ir.RankedTensorType(op.results[0].type)
    if str(out_type.element_type) == "i1":
        return None
    sizes = {}
    for value, layout in ((filter, form.filter), (init, form.output), (input, form.input)):
        sizes.update(zip(layout, ir.RankedTensorType(value.type).shape))
    padding = [0, 0, 0, 0]
    folded = zero_pad_source(input, (form.input.index("h"), form.input.index("w")))
    if folded is not None:
        input, padding = folded
    unsigned = _is_unsigned(op)
    element_type = _input_type(input, filter, out_type.element_type, unsigned)
    # input: n (g c) h w
    order = [d for d in "ngchw" if d in form.input]
    x = tb.relayout(input, list(form.input), order, element_type, unsigned)
    if "g" in order and "c" in order:
        x = tb.collapse(x, [[0], [1, 2], [3], [4]])
    # filter: (g f) c kh kw
    order = [d for d in "gfcyx" if d in form.filter]
    w = tb.relayout(filter, list(form.filter), order, element_type, unsigned)
    if "g" in order and "f" in order:
        w = tb.collapse(w, [[0, 1]] + [[d] for d in range(2, len(order))])
    if "c" not in order:
        w = tb.unsqueeze(w, {1})
    conv = ipu.conv(
        x, w, strides=_pair(op, "strides"), dilations=_pair(op, "dilations"), padding=padding,
        groups=sizes["g"] if "g" in form.input else 1, element_type=out_type.element_type,
    )  # fmt: skip
    y = conv.result
    # A linalg convolution may leave the last rows of its input unread; ipu.conv reads them.
    shape = ir.RankedTensorType(y.type).shape
    if shape[2:] != [sizes["p"], sizes["q"]]:
        y = tb.leading_slice(y, [*shape[:2], sizes["p"], sizes["q"]])
    order = [d for d in "ngfpq" if d in form.output]
    if "g" in order and "f" in order:
        y = tb.expand(y, [[0], [1, 2], [3], [4]], [sizes[d] for d in order])
    return add_init(tb.relayout(y, order, list(form.output), out_type.element_type, unsigned), init)


def _dims_of(amap: ir.AffineMap) -> list[int] | None:
    """The loop of each result of a projected permutation, or None."""
    dims = [expr.position if isinstance(expr, ir.AffineDimExpr) else None for expr in amap.results]
    return dims if None not in dims and len(set(dims)) == len(dims) else None


def _is_unsigned(op: ir.OpView) -> bool:
    return "cast" in op.attributes and "unsigned" in str(op.attributes["cast"])


def _input_type(lhs: ir.Value, rhs: ir.Value, out: ir.Type, unsigned: bool) -> ir.Type:
    """The element type the ipu op reads: the operands' own when they agree and widen to `out`
    the way the ipu op does (signed, to a wider type of the same kind); else `out`, after a cast."""
    a, b = ir.RankedTensorType(lhs.type).element_type, ir.RankedTensorType(rhs.type).element_type
    if a != b:
        return out
    if a == out:
        return a
    floats = isinstance(a, ir.FloatType) and isinstance(out, ir.FloatType)
    ints = isinstance(a, ir.IntegerType) and isinstance(out, ir.IntegerType) and not unsigned
    return a if (floats or ints) and a.width < out.width else out


def _pair(op: ir.OpView, name: str) -> list[int]:
    if name not in op.attributes:
        return [1, 1]
    return [int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])]


def zero_pad_source(value: ir.Value, spatial: tuple[int, int]) -> tuple[ir.Value, list[int]] | None:
    """(source, [top, left, bottom, right]) when `value` is a static `tensor.pad` with zeros of
    the two `spatial` dims only."""
    pad = value.owner
    if isinstance(pad, ir.Block) or pad.name != "tensor.pad" or len(pad.operands) != 1:
        return None
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
    if any((low[d] or high[d]) for d in range(len(low)) if d not in spatial) or not _is_zero(pad_value(pad)):
        return None
    return pad.operands[0], [low[spatial[0]], low[spatial[1]], high[spatial[0]], high[spatial[1]]]


def pad_value(pad: ir.OpView) -> ir.Attribute | None:
    """The constant a `tensor.pad` pads with, or None."""
    yielded = list(pad.regions[0].blocks[0].operations)[-1].operands[0]
    owner = yielded.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return owner.attributes["value"]


def _is_zero(attr: ir.Attribute | None) -> bool:
    if isinstance(attr, ir.DenseElementsAttr):
        return attr.is_splat and _is_zero(attr.get_splat_value())
    if isinstance(attr, (ir.FloatAttr, ir.IntegerAttr)):
        return attr.value == 0
    return False


def _is_zero_tensor(value: ir.Value) -> bool:
    """True for a zero fill or splat; and for `tensor.empty`, whose contents are undefined."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False
    if owner.name == "tensor.empty":
        return True
    if owner.name == "linalg.fill":
        scalar = owner.operands[0].owner
        return not isinstance(scalar, ir.Block) and scalar.name == "arith.constant" and _is_zero(scalar.attributes["value"])
    return owner.name == "arith.constant" and _is_zero(owner.attributes["value"])


def add_init(value: ir.Value, init: ir.Value) -> ir.Value:
    """`value + init` element-wise, or `value` when `init` is zero."""
    return value if _is_zero_tensor(init) else tb.elementwise_add(value, init)
