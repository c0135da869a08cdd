"""`ipu.conv`: two-dimensional convolution, NCHW input, FCHW filter, with strides, dilations,
zero padding and groups.

Loops (n, f, oh, ow, c, kh, kw), c (within a group), kh and kw summed; the input's H and W are
windows over (oh, kh) and (ow, kw). Converted from linalg's 2-d convolutions in any of the
layouts of `CONV_FORMS`, transposed and reshaped to and from NCHW / FCHW, a zero `tensor.pad`
of the input folded into the padding.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import func

from ipu_mlir.target import Target, cost_model
from ipu_mlir.target.diagnostics import op_error
from ipu_mlir.target.element_types import as_strided

from .. import ipu
from ..attrs import QUARTER_ATTR
from . import tensor_builders as tb
from .arrays import assign
from .columns import Chunks
from .convert import add_init, input_type, is_unsigned, pair, zero_pad_source
from .depthwise import Planes
from .matmul import partials_of, quarter_of, sum_in_half_partials, verify_metadata, with_metadata
from .registry import ComputeOp, Example, Kernel, Piece, SerialCut, dtype_of, register_op, shape_text, static_tensor
from .semantics import accumulation
from .space import SUM, Access, Space, shape

FAST_ITEMS = (1, 2, 4, 8, 16)  # bytes: the item sizes numpy copies without a memmove per item
TAPS_ADDED_POSITIONS = 24  # outputs a tile and channel: at most this many, a depthwise convolution adds its taps


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


@register_op
class Conv(ComputeOp):
    name = "ipu.conv"
    converts = frozenset(CONV_FORMS)
    takes_partials_type = True

    def convert(self, op: ir.OpView) -> ir.Value | None:
        """`ipu.conv` (NCHW input, FCHW filter, groups) for a 2-d convolution; the layouts of
        its form are transposed and reshaped to and from it."""
        input, filter, init = op.operands
        out_type = ir.RankedTensorType(op.results[0].type)
        if str(out_type.element_type) == "i1":
            return None
        return self.build(op.operation.name, input, filter, init, pair(op, "strides"), pair(op, "dilations"), is_unsigned(op))

    def build(self, form_name: str, input: ir.Value, filter: ir.Value, init: ir.Value, strides, dilations, unsigned: bool = False,
              quarter: ir.Attribute | None = None) -> ir.Value:  # fmt: skip
        """The `ipu.conv` computing the named convolution `form_name` of `input` and `filter`
        onto `init`, carrying the QUARTER metadata `quarter` if given (lowering/fp8_conv.py)."""
        form = CONV_FORMS[form_name]
        out_type = ir.RankedTensorType(init.type)
        sizes = {}
        for value, layout in ((filter, form.filter), (init, form.output), (input, form.input)):
            sizes.update(zip(layout, ir.RankedTensorType(value.type).shape))
        padding = [0, 0, 0, 0]
        folded = zero_pad_source(input, (form.input.index("h"), form.input.index("w")))
        if folded is not None:
            input, padding = folded
        element_type = input_type(input, filter, out_type.element_type, unsigned)
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
            x, w, strides=strides, dilations=dilations, padding=padding,
            groups=sizes["g"] if "g" in form.input else 1, element_type=out_type.element_type,
        )  # fmt: skip
        if quarter is not None:
            conv.attributes[QUARTER_ATTR] = quarter
        y = conv.result
        # A linalg convolution may leave the last rows of its input unread; ipu.conv reads them.
        result_shape = ir.RankedTensorType(y.type).shape
        if result_shape[2:] != [sizes["p"], sizes["q"]]:
            y = tb.leading_slice(y, [*result_shape[:2], sizes["p"], sizes["q"]])
        order = [d for d in "ngfpq" if d in form.output]
        if "g" in order and "f" in order:
            y = tb.expand(y, [[0], [1, 2], [3], [4]], [sizes[d] for d in order])
        return add_init(tb.relayout(y, order, list(form.output), out_type.element_type, unsigned), init)

    def normalize(self, op: ipu.ConvOp) -> None:
        """A zero pad that reaches an ipu.conv only after canonicalization (torch-mlir pads,
        then splits the channels into groups) becomes part of its padding too."""
        folded = zero_pad_source(op.input, (2, 3))
        if folded is None:
            return
        source, padding = folded
        pad = op.input.owner
        total = [a + b for a, b in zip(op.padding, padding)]
        new = ipu.conv(source, op.filter, strides=op.strides, dilations=op.dilations, padding=total, groups=op.groups,
                       element_type=ir.RankedTensorType(op.result.type).element_type)  # fmt: skip
        with_metadata(new, op)
        op.result.replace_all_uses_with(new.result)
        op.operation.erase()
        if not list(pad.results[0].uses):
            pad.erase()

    def verify(self, op: ipu.ConvOp) -> None:
        input = static_tensor(op, op.input.type, "input")
        filter = static_tensor(op, op.filter.type, "filter")
        result = static_tensor(op, op.result.type, "result")
        if (input.rank, filter.rank, result.rank) != (4, 4, 4):
            raise op_error(op, f"expects input, filter and result of rank 4, got ranks {input.rank}, {filter.rank}, {result.rank}")
        for name in ("strides", "dilations"):
            values = getattr(op, name)
            if len(values) != 2 or min(values) <= 0:
                raise op_error(op, f"expects '{name}' to have two positive entries, got {list(values)}")
        if len(op.padding) != 4 or min(op.padding) < 0:
            raise op_error(op, f"expects 'padding' to have four non-negative entries (top, left, bottom, right), got {list(op.padding)}")
        groups, channels, filters = op.groups, input.shape[1], filter.shape[0]
        if groups <= 0 or channels % groups or filters % groups:
            raise op_error(
                op,
                f"expects 'groups' ({groups}) to be positive and divide the input channels ({channels}) and the filter count ({filters})",
            )
        if filter.shape[1] * groups != channels:
            raise op_error(
                op, f"expects {channels // groups} channels per filter (input channels {channels} / groups {groups}), got {filter.shape[1]}"
            )
        expected = ipu.conv_output_shape(input.shape, filter.shape, op.strides, op.dilations, op.padding)
        if min(expected[2:]) <= 0:
            raise op_error(op, f"expects the dilated filter to fit in the padded input, got an output of {shape_text(expected[2:])}")
        if list(result.shape) != expected:
            raise op_error(op, f"expects result shape {shape_text(expected)}, got {shape_text(result.shape)}")
        if input.element_type != filter.element_type:
            raise op_error(op, f"expects input and filter of the same element type, got {input.element_type} and {filter.element_type}")
        verify_metadata(op, input.element_type, result.element_type)

    def extents(self, op: ipu.ConvOp) -> tuple[int, ...]:
        (n, f, oh, ow), (_, cg, kh, kw) = shape(op.results[0]), shape(op.operands[1])
        return (n, f, oh, ow, cg, kh, kw)

    def space(self, op: ipu.ConvOp) -> Space:
        (n, c, h, w), (f, cg, kh, kw) = shape(op.input), shape(op.filter)
        (sh, sw), (dh, dw), (pt, pl, _, _), groups = op.strides, op.dilations, op.padding, op.groups
        # Loops: 0 n, 1 f, 2 oh, 3 ow, 4 c (within a group), 5 kh, 6 kw.
        if groups == 1:
            channel = Access("dim", c, 4)
        else:
            channel = Access("groups", c, 1, per_group=(f // groups, cg))
        return Space(
            op,
            self.extents(op),
            reductions=(4, 5, 6),
            splittable=(True, True, True, True, groups == 1, False, False),
            operands=(
                (Access("dim", n, 0), channel, Access("window", h, 2, sh, dh, kh, pt), Access("window", w, 3, sw, dw, kw, pl)),
                (Access("dim", f, 1), Access("dim", cg, 4), Access("dim", kh, 5), Access("dim", kw, 6)),
            ),
            result=(0, 1, 2, 3),
            element_type=ir.RankedTensorType(op.result.type).element_type,
            combiner=SUM,
            # A tile's output channels of a grouped convolution are whole groups, so it reads
            # whole groups of input channels; without groups any block of filters will do.
            multiples=(1, f // groups if groups > 1 else 1, 1, 1, 1, 1, 1),
        )

    def examples(self) -> list[Example]:
        return [Example(name, text) for name, text in _EXAMPLES.items()]

    def serial_cuts(self, op: ipu.ConvOp) -> list[SerialCut]:
        """Output channels (in whole groups, with their input channels, for a grouped one), then images."""
        (n, c, *_), (f, *_) = shape(op.input), shape(op.filter)
        groups = op.groups
        if groups == 1:
            channels = SerialCut(((1, 0, 1),), 1, f)
        else:
            channels = SerialCut(((0, 1, c // groups), (1, 0, f // groups)), 1, groups, grouped=True)
        return [channels, SerialCut(((0, 0, 1),), 0, n)]

    def rebuild(self, op: ipu.ConvOp, operands: list[ir.Value], cut: SerialCut, units: int) -> ir.OpView:
        groups = units if cut.grouped else op.groups
        element_type = ir.RankedTensorType(op.result.type).element_type
        conv = ipu.conv(*operands, strides=op.strides, dilations=op.dilations, padding=op.padding, groups=groups, element_type=element_type)
        return with_metadata(conv, op)

    def codelet(self, op: ipu.ConvOp, name: str, piece: Piece, ip: ir.InsertionPoint, loc: ir.Location) -> None:
        """The convolution on a tile's halo'd piece of the input, with the padding that tile
        needs, over the whole groups its output channels belong to."""
        (in_shape, low, high), (filter_shape, _, _) = piece.inputs
        out_channels, groups = ir.RankedTensorType(op.filter.type).shape[0], op.groups
        tile_groups = piece.box[1] // (out_channels // groups) if groups > 1 else 1
        element_type = ir.RankedTensorType(op.result.type).element_type
        in_type = ir.RankedTensorType(op.input.type).element_type
        inputs = [ir.RankedTensorType.get(list(in_shape), in_type), ir.RankedTensorType.get(list(filter_shape), in_type)]
        function = ipu.codelet_function(name, inputs, [ir.RankedTensorType.get(list(piece.box), element_type)], loc=loc, ip=ip)
        block = function.regions[0].blocks[0]
        with ir.InsertionPoint(block), loc:
            result = ipu.conv(
                block.arguments[0], block.arguments[1], strides=op.strides, dilations=op.dilations,
                padding=(low[2], low[3], high[2], high[3]), groups=tile_groups, element_type=element_type,
            )  # fmt: skip
            with_metadata(result, op)
            if tuple(ir.RankedTensorType(result.result.type).shape) != tuple(piece.box):
                raise op_error(op, f"tile piece gives {result.result.type}, expected {piece.box}: planner bug")
            func.ReturnOp([result.result])

    def kernel(self, op: ipu.ConvOp, batch: int) -> Kernel:
        """im2col: the input's windows, one strided view, copied into (*batch, n, groups,
        c/groups * kh * kw, oh * ow) columns that each group's filter matrix multiplies. This
        layout copies rows of `ow` elements (each row one item: `arrays.assign`) and needs no
        transpose after the product: twice as fast as (oh * ow, taps) columns on 1,472 tiles.
        The columns keep the input's own batch shape and the product broadcasts it against the
        filter's, so neither operand is copied per tile of the other. A 1 x 1 convolution with
        stride 1 and no padding multiplies the input itself (a view): its columns are its rows.
        One input channel with more taps than outputs (a weight gradient) lays its columns out
        the other way round, (oh * ow, taps), rows of kw, and multiplies them transposed.

        numpy copies items of 1, 2, 4, 8 or 16 bytes fast, others one `memmove` each (rows of
        5 f32 take 4x as long as rows of 4). A depthwise convolution with stride 1 whose output
        rows are another size (MobileNetV2's pieces are 3 to 17 wide) copies instead one run
        per tap, from its first window element to its last, whole padded rows between, and
        drops the products of the columns between rows: its product is cheap beside the copy
        (9 taps), unlike a convolution over many channels, whose product would grow as much.

        A depthwise convolution that is strided or has at most `TAPS_ADDED_POSITIONS` outputs
        a tile and channel adds its taps one by one instead (`Im2col._add_taps`): np.matmul
        pays about 0.1 us for each of its (1 x taps) @ (taps x oh * ow) products (MobileNetV2
        has pieces of 19,584 tiles times channels with 6 x 3 outputs), and strided windows
        copy element by element. Measured on MobileNetV2's kernels, the taps cost about 7 ns
        an output where the runs cost 0.1 us a product plus 2.3 ns a run element: stride 1
        with more outputs keeps the runs (or rows of fast items).

        f32 and f64 depthwise convolutions take none of these three paths but compiled code,
        the taps' sums in one loop (dialects/ops/depthwise.py, 2.3x faster on MobileNetV2):
        f16 (summed in f32) and integers keep them."""
        (sh, sw), (dh, dw), (top, left, bottom, right), groups = op.strides, op.dilations, op.padding, op.groups
        (n, c, h, w), (f, cg, kh, kw), result_shape = shape(op.input), shape(op.filter), shape(op.result)
        oh, ow = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1, (w + left + right - dw * (kw - 1) - 1) // sw + 1
        if c != cg * groups or f % groups or result_shape != (n, f, oh, ow):
            raise op_error(op, f"has inconsistent shapes {shape(op.input)} * {(f, cg, kh, kw)} -> {result_shape} (groups {groups})")
        return Im2col(op, batch)

    def work(self, op: ipu.ConvOp, extents: tuple[int, ...], target: Target) -> int:
        return cost_model.conv_work(*extents, ir.ShapedType(op.operands[0].type).element_type, target, partials_of(op))


# The conformance examples (test/python/test_conformance.py): each layout family, strides,
# dilations, a zero pad folded into the padding, groups (whole groups per tile: `multiples`),
# integers, an accumulating `outs`.
_EXAMPLES = {
    "nchw-strided": """
func.func @main(%x: tensor<2x3x9x7xf32>, %w: tensor<4x3x3x3xf32>, %o: tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%x, %w : tensor<2x3x9x7xf32>, tensor<4x3x3x3xf32>) outs(%o : tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  return %r : tensor<2x4x4x3xf32>
}
""",
    "nhwc-padded-i32": """
func.func @main(%x: tensor<1x5x5x3xi32>, %w: tensor<3x3x3x5xi32>) -> tensor<1x5x5x5xi32> {
  %zero = arith.constant 0 : i32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : i32
  } : tensor<1x5x5x3xi32> to tensor<1x7x7x3xi32>
  %e = tensor.empty() : tensor<1x5x5x5xi32>
  %o = linalg.fill ins(%zero : i32) outs(%e : tensor<1x5x5x5xi32>) -> tensor<1x5x5x5xi32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %w : tensor<1x7x7x3xi32>, tensor<3x3x3x5xi32>) outs(%o : tensor<1x5x5x5xi32>) -> tensor<1x5x5x5xi32>
  return %r : tensor<1x5x5x5xi32>
}
""",
    "asymmetric-pad-strided-dilated": """
func.func @main(%x: tensor<1x2x8x9xf32>, %w: tensor<3x2x2x3xf32>) -> tensor<1x3x4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 0, 1] high[0, 0, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x2x8x9xf32> to tensor<1x2x9x10xf32>
  %e = tensor.empty() : tensor<1x3x4x3xf32>
  %o = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x4x3xf32>) -> tensor<1x3x4x3xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%p, %w : tensor<1x2x9x10xf32>, tensor<3x2x2x3xf32>) outs(%o : tensor<1x3x4x3xf32>) -> tensor<1x3x4x3xf32>
  return %r : tensor<1x3x4x3xf32>
}
""",
    "depthwise-dilated": """
func.func @main(%x: tensor<1x8x7x6xf32>, %w: tensor<3x3x6xf32>) -> tensor<1x4x3x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x3x6xf32>
  %o = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x3x6xf32>) -> tensor<1x4x3x6xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x8x7x6xf32>, tensor<3x3x6xf32>) outs(%o : tensor<1x4x3x6xf32>) -> tensor<1x4x3x6xf32>
  return %r : tensor<1x4x3x6xf32>
}
""",
    "grouped-f16": """
func.func @main(%x: tensor<1x2x3x6x6xf16>, %w: tensor<2x3x3x2x2xf16>) -> tensor<1x2x3x5x5xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x2x3x5x5xf16>
  %o = linalg.fill ins(%zero : f16) outs(%e : tensor<1x2x3x5x5xf16>) -> tensor<1x2x3x5x5xf16>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x2x3x6x6xf16>, tensor<2x3x3x2x2xf16>) outs(%o : tensor<1x2x3x5x5xf16>) -> tensor<1x2x3x5x5xf16>
  return %r : tensor<1x2x3x5x5xf16>
}
""",
    "other-forms": """
func.func @main(%x: tensor<1x6x5x4xf32>, %w: tensor<2x3x3x4xf32>, %y: tensor<1x4x6x5xf32>, %d: tensor<4x3x3xf32>,
                %m: tensor<3x3x4x2xf32>, %g: tensor<1x2x2x5x5xf32>, %h: tensor<3x2x2x2x2xf32>)
    -> (tensor<1x4x3x2xf32>, tensor<1x4x4x3xf32>, tensor<1x4x3x4x2xf32>, tensor<1x2x3x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x4x3x2xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x3x2xf32>) -> tensor<1x4x3x2xf32>
  %r0 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%x, %w : tensor<1x6x5x4xf32>, tensor<2x3x3x4xf32>) outs(%o0 : tensor<1x4x3x2xf32>) -> tensor<1x4x3x2xf32>
  %e1 = tensor.empty() : tensor<1x4x4x3xf32>
  %o1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %r1 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%y, %d : tensor<1x4x6x5xf32>, tensor<4x3x3xf32>) outs(%o1 : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %e2 = tensor.empty() : tensor<1x4x3x4x2xf32>
  %o2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x3x4x2xf32>) -> tensor<1x4x3x4x2xf32>
  %r2 = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%x, %m : tensor<1x6x5x4xf32>, tensor<3x3x4x2xf32>) outs(%o2 : tensor<1x4x3x4x2xf32>) -> tensor<1x4x3x4x2xf32>
  %e3 = tensor.empty() : tensor<1x2x3x4x4xf32>
  %o3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x2x3x4x4xf32>) -> tensor<1x2x3x4x4xf32>
  %r3 = linalg.conv_2d_ngchw_fgchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%g, %h : tensor<1x2x2x5x5xf32>, tensor<3x2x2x2x2xf32>) outs(%o3 : tensor<1x2x3x4x4xf32>) -> tensor<1x2x3x4x4xf32>
  return %r0, %r1, %r2, %r3 : tensor<1x4x3x2xf32>, tensor<1x4x4x3xf32>, tensor<1x4x3x4x2xf32>, tensor<1x2x3x4x4xf32>
}
""",
}


def _scaled_leave(leave: Kernel, scale: np.float32, sums: np.ndarray) -> np.ndarray:
    return leave(sums * scale)


class Im2col:
    """The kernel of an `ipu.conv` whose shapes `Conv.kernel` checked (its docstring says why
    this layout). `into` writes the product straight into an output array, a vertex group's
    view of its buffer: copying each new result into it was most of the ~39 ms a ResNet-50
    steady run spent copying vertex groups' results."""

    def __init__(self, op: ipu.ConvOp, batch: int):
        (self.sh, self.sw), (self.dh, self.dw), self.pad, self.groups = op.strides, op.dilations, tuple(op.padding), op.groups
        (self.n, c, self.h, self.w), (f, self.cg, self.kh, self.kw) = shape(op.input), shape(op.filter)
        _, _, self.oh, self.ow = shape(op.result)
        operand, self.result = dtype_of(op, op.input), dtype_of(op, op.result)
        self.enter, self.leave = accumulation(operand, self.result)
        quarter = quarter_of(op)
        if quarter is not None and quarter.log2_scale:  # the f32 sum scaled before it leaves, as `Product` does
            self.leave = functools.partial(_scaled_leave, self.leave, np.float32(2.0**quarter.log2_scale))
        self.exact = operand == self.result and self.enter(np.zeros(0, operand)).dtype == self.result  # no cast on either side
        # f16 partials: the im2col product's taps summed in chunks into f16 (matmul.py's
        # `sum_in_half_partials`; assumption: the taps in (c, kh, kw) order, one chunk after another)
        self.half_partials = partials_of(op) == "f16"
        if self.half_partials:
            self.leave = functools.partial(np.asarray, dtype=self.result)
        self.batch, self.f, self.fg, self.taps = batch, f, f // self.groups, self.cg * self.kh * self.kw
        top, left, bottom, right = self.pad
        self.padded = (self.n, c, self.h + top + bottom, self.w + left + right)
        self.pointwise = self.kh == self.kw == 1 and (self.sh, self.sw) == (1, 1) and not any(self.pad)
        self.wp = self.w + left + right
        self.run = (self.oh - 1) * self.wp + self.ow  # a tap's window as one run over whole padded rows
        strided = (self.sh, self.sw) != (1, 1)
        # decided by the op alone, so that every run of it takes the same path
        # One group a tile (an ordinary convolution whose input channels are cut to one a
        # tile, as AlexNet's 11 x 11 stem: 16 filters) is one BLAS product, which kh * kw * f
        # passes lose to by 2.3x; the taps pay for groups' many small products.
        # One input channel, one group and more taps than outputs (a weight gradient on a
        # tile: the output gradient as the filter, 56 x 56 taps for 3 x 3 outputs): im2col, its
        # columns as (oh * ow, taps), rows of kw, multiplied transposed. BLAS packs those 2x
        # faster than (taps, oh * ow) rows of ow (33 against 78 ms, ResNet-18's 56 x 56 taps
        # with 3 filters a tile); with one filter a tile, 9x faster than the compiled depthwise
        # kernel's taps one by one (6.3 against 55.7 ms on a 64 x 21 grid). The runs path would
        # multiply (oh - 1) * wp + ow columns a filter where im2col has oh * ow.
        self.transposed = self.cg == 1 and self.groups == 1 and self.taps > self.oh * self.ow
        depthwise = (self.groups > 1 or self.fg == 1) and not self.transposed
        self.taps_added = self.cg == 1 and depthwise and (strided or self.oh * self.ow <= TAPS_ADDED_POSITIONS) and not self.half_partials
        # and rows of a slow item size: decided per dtype
        self.runs = depthwise and self.cg == 1 and not strided and not self.taps_added and not self.half_partials
        self.columns = (self.n, self.groups, *((self.oh * self.ow, self.taps) if self.transposed else (self.taps, self.oh * self.ow)))
        # f32 and f64 depthwise: compiled (dialects/ops/depthwise.py), the taps' bytes 2.3x faster
        compiled = self.cg == 1 and depthwise and self.exact and self.result in (np.float32, np.float64)
        self.planes = Planes(self, self.result) if compiled else None
        self._last = (None,) * 4  # the last product's operands `into` took and its product of them

    def __call__(self, x: np.ndarray, k: np.ndarray) -> np.ndarray:
        if self.planes is not None:
            tiles = np.broadcast_shapes(x.shape[: self.batch], k.shape[: self.batch])
            out = np.empty((*tiles, self.n, self.f, self.oh, self.ow), self.result)
            if self.planes(x, k, out):
                return out
        x, k = self.enter(x), self.enter(k)
        if self.taps_added:
            tiles = np.broadcast_shapes(x.shape[: self.batch], k.shape[: self.batch])
            return self._add_taps(x, k, np.empty((*tiles, self.n, self.f, self.oh, self.ow), self.result))
        if self._by_runs(x):
            return self.leave(self._runs(x, k))
        product = (sum_in_half_partials if self.half_partials else np.matmul)(
            self._filters(k), self._columns(x)
        )  # (*batch, n, groups, fg, oh * ow)
        return self.leave(product.reshape(*product.shape[: self.batch], self.n, self.f, self.oh, self.ow))

    def into(self, x: np.ndarray, k: np.ndarray, out: np.ndarray) -> bool:
        """Writes into `out`'s (*batch, n, f, oh, ow) the bytes `self(x, k)` would give: the
        taps added one by one in any layout (their sums do not depend on one); else
        np.matmul(..., out=) (an im2col's chunk by chunk of tiles, dialects/ops/columns.py:
        the same per-tile products) when no cast is between, not the runs path (its product has
        columns it drops), and each (fg, oh * ow) matrix of `out` laid out as a new product's
        (numpy picks BLAS or its own loop by each matrix's strides). False, having written
        nothing, otherwise."""
        if out.dtype != self.result:
            return False
        last = self._last
        if last[0] is x and last[1] is k and last[2] is out:
            # a vertex group's own views of tile memory, the same arrays every later run: the
            # product's operand views made once (10 us a call: 0.8 ms of MobileNetV2's 80
            # pointwise vertex groups a run), an im2col's by chunks (dialects/ops/columns.py)
            last[3]()
            return True
        if self.planes is not None and self.planes(x, k, out):
            return True
        if self.taps_added:
            self._add_taps(self.enter(x), self.enter(k), out)
            return True
        if not self.exact or self._by_runs(x):
            return False
        size = out.itemsize
        dense = (self.oh * self.ow * size, self.ow * size, size)  # f, oh, ow in a new product
        if any(extent > 1 and stride != want for extent, stride, want in zip(out.shape[-3:], out.strides[-3:], dense)):
            return False
        matrices = as_strided(
            out, (*out.shape[:-3], self.groups, self.fg, self.oh * self.ow), (*out.strides[:-3], self.fg * dense[0], dense[0], size)
        )
        filters = self._filters(k)
        columns = self._columns(x) if self.pointwise else None
        # kept for the next call on the same arrays only while they are views of them (a
        # reshape copies an operand laid out otherwise)
        kept = np.may_share_memory(filters, k) and (columns is None or np.may_share_memory(columns, x))
        if self.pointwise:
            product = functools.partial(np.matmul, filters, columns, out=matrices)
        elif kept and not np.may_share_memory(out, x) and not np.may_share_memory(out, k):
            product = Chunks(self, x, filters, matrices)  # a chunk's product must not change what the next reads
        else:
            product, kept = functools.partial(np.matmul, filters, self._columns(x), out=matrices), False
        product()
        if kept:
            self._last = (x, k, out, product)
        return True

    def _by_runs(self, x: np.ndarray) -> bool:
        return self.runs and self.ow * x.itemsize not in FAST_ITEMS

    def _filters(self, k: np.ndarray) -> np.ndarray:
        return k.reshape(*k.shape[: self.batch], 1, self.groups, self.fg, self.taps)

    def _padded(self, x: np.ndarray) -> np.ndarray:
        if not any(self.pad):
            return x
        top, left = self.pad[:2]
        xp = np.zeros((*x.shape[: self.batch], *self.padded), x.dtype)
        xp[..., top : top + self.h, left : left + self.w] = x
        return xp

    def _columns(self, x: np.ndarray) -> np.ndarray:
        """(*batch, n, groups, taps, oh * ow): the input itself for a pointwise convolution."""
        xp, tiles = self._padded(x), x.shape[: self.batch]
        if self.pointwise:  # the input is its own columns: no copy
            return xp.reshape(*tiles, self.n, self.groups, self.taps, self.oh * self.ow)
        windows = self.windows(xp)
        columns = np.empty((*tiles, *self.columns), x.dtype)
        assign(columns.reshape(windows.shape), windows)
        return self.operand(columns)

    def operand(self, columns: np.ndarray) -> np.ndarray:
        """Columns laid out as `self.columns` as the product's (taps, oh * ow) operand."""
        return columns.swapaxes(-1, -2) if self.transposed else columns

    def windows(self, xp: np.ndarray) -> np.ndarray:
        """The padded input's windows, a read-only view in the columns' order: (*batch, n,
        groups, c, kh, kw, oh, ow), or (*batch, n, groups, oh, ow, c, kh, kw) transposed."""
        s = xp.strides[self.batch :]
        taps = ((self.cg, self.kh, self.kw), (s[1], self.dh * s[2], self.dw * s[3]))
        positions = ((self.oh, self.ow), (self.sh * s[2], self.sw * s[3]))
        (first, first_strides), (last, last_strides) = (positions, taps) if self.transposed else (taps, positions)
        return as_strided(
            xp,
            (*xp.shape[: self.batch], self.n, self.groups, *first, *last),
            (*xp.strides[: self.batch], s[0], self.cg * s[1], *first_strides, *last_strides),
            writeable=False,
        )

    def _runs(self, x: np.ndarray, k: np.ndarray) -> np.ndarray:
        """A depthwise convolution copying one run per tap (Conv.kernel says why), the
        products of the columns between rows dropped."""
        xp, tiles = self._padded(x), x.shape[: self.batch]
        xp = xp if xp.strides[-2] == self.wp * xp.strides[-1] else np.ascontiguousarray(xp)
        s = xp.strides[self.batch :]
        windows = as_strided(
            xp,
            (*tiles, self.n, self.groups, self.kh, self.kw, self.run),
            (*xp.strides[: self.batch], s[0], s[1], self.dh * s[2], self.dw * s[3], s[3]),
            writeable=False,
        )
        columns = np.empty((*tiles, self.n, self.groups, self.taps, self.run), x.dtype)
        assign(columns.reshape(windows.shape), windows)
        product = np.matmul(self._filters(k), columns)  # (*batch, n, groups, fg, run)
        p = product.strides
        rows = as_strided(product, (*product.shape[:-1], self.oh, self.ow), (*p[:-1], self.wp * p[-1], p[-1]), writeable=False)
        return rows.reshape(*product.shape[: self.batch], self.n, self.f, self.oh, self.ow)

    def _add_taps(self, x: np.ndarray, k: np.ndarray, out: np.ndarray) -> np.ndarray:
        """A convolution of one input channel a group (depthwise) as kh * kw multiply-adds,
        written into `out` (Conv.kernel says when). The padded input is first laid out as
        (padded h, padded w, *others), the grid's tiles and channels last: each tap is then
        a window of whole (oh, ow) positions, and each multiply-add one numpy pass over all
        tiles' and channels' values with inner loops as long as they are many. The axes the
        input is shared along (the filter's own tile axes, a group's filters) go first, so
        the input is broadcast along them, not copied. Every element's products and sums are
        rounded one by one in tap order whatever the layout: a run's bytes do not depend on
        which axes the operands share, which differs between the checked and later runs."""
        b, (top, left), (hp, wp) = self.batch, self.pad[:2], self.padded[2:]
        space = (*out.shape[:b], self.n, self.groups, self.fg)  # the output's axes but oh, ow
        xs = x.reshape(*x.shape[:b], self.n, self.groups, 1, self.h, self.w)
        ks = k.reshape(*k.shape[:b], 1, self.groups, self.fg, self.kh, self.kw)
        shared = [a for a, n in enumerate(space) if xs.shape[a] == 1 < n]
        own = [a for a in range(len(space)) if a not in shared]
        xp = np.empty((hp, wp, *(space[a] for a in own)), x.dtype)
        xp[:top], xp[top + self.h :], xp[:, :left], xp[:, left + self.w :] = 0, 0, 0, 0
        xs = xs.transpose(len(space), len(space) + 1, *own, *shared)  # the shared axes, size 1, last
        xp[top : top + self.h, left : left + self.w] = xs.reshape(xs.shape[: 2 + len(own)])
        order = [*shared, *own]
        kp = np.empty((self.kh, self.kw, *(space[a] for a in order)), k.dtype)
        kp[...] = ks.transpose(len(space), len(space) + 1, *order)
        acc = np.empty((self.oh, self.ow, *kp.shape[2:]), kp.dtype)
        term = np.empty_like(acc)
        lifted = (slice(None), slice(None), *(None for _ in shared))  # the shared axes, size 1
        for i in range(self.kh):
            rows = slice(i * self.dh, i * self.dh + (self.oh - 1) * self.sh + 1, self.sh)
            for j in range(self.kw):
                window = xp[rows, j * self.dw : j * self.dw + (self.ow - 1) * self.sw + 1 : self.sw][lifted]
                np.multiply(window, kp[i, j], out=term if i or j else acc)
                if i or j:
                    np.add(acc, term, out=acc)
        o = out.strides  # out's f axis as (groups, fg): a view, written through
        into = as_strided(out, (*space, self.oh, self.ow), (*o[: b + 1], self.fg * o[b + 1], *o[b + 1 :]))
        into[...] = self.leave(acc).transpose(*(2 + order.index(a) for a in range(len(space))), 0, 1)
        return out
