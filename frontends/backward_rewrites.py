"""Backward ops of the joint training step (frontends/joint.py) rewritten as tensor math before
torch-mlir's import, and `constant_pad_nd` without negative widths, for both traces of the step
and for the inference export (frontends/torch.py):

- adaptive average pooling's backward (no torch-mlir lowering): spread over equal windows, or
  products with the windows' averaging matrices when the output does not divide the input;
- a grouped, one-dimensional or transposed convolution's backward (torch-mlir's lowering of
  `convolution_backward` is invalid for them) as ordinary convolutions;
- max-pool's backward as reads of each window's arg-max (a scatter is too large for a tile at
  full size);
- a negative pad width (a crop) as a slice, since torch-mlir folds a shape-keeping pad away.
"""

from __future__ import annotations

from typing import Any


def pad_without_negative_widths(source: Any, pad: Any, value: float = 0.0) -> Any:
    """`constant_pad_nd` with a negative width (a crop) as a slice and a pad of the rest:
    torch-mlir folds a `constant_pad_nd` whose result has its operand's shape to the operand,
    so `[-1, 1]` (a shift by one, the grouped convolution's input gradient below) came back
    unchanged (fuzz seed 413). NotImplemented (ATen's op) when no width is negative."""
    import torch

    if all(width >= 0 for width in pad):
        return NotImplemented
    shape, kept = list(source.shape), []
    for index in range(len(pad) // 2):
        axis, low, high = source.dim() - 1 - index, pad[2 * index], pad[2 * index + 1]
        kept.append((axis, max(-low, 0), shape[axis] - max(-low, 0) - max(-high, 0)))
        shape[axis] += low + high
    if any(length <= 0 for _, _, length in kept):  # all of an axis cropped: padding only
        return torch.full(shape, value, dtype=source.dtype, device=source.device)
    for axis, start, length in kept:
        source = source.narrow(axis, start, length)
    return torch.ops.aten.constant_pad_nd.default(source, [max(width, 0) for width in pad], value)


def rewrite_adaptive_pool_backward(node: Any) -> None:
    """`_adaptive_avg_pool2d_backward` (torch-mlir has no lowering for it) as tensor math: when
    the output divides the input (AlexNet's and ResNet's pools) each output's gradient spread
    evenly over its window; otherwise (VGG's 7x7 pool of a smaller map: windows of unequal
    sizes, overlapping) two products with the windows' averaging matrices."""
    grad, source = (argument.meta["val"] for argument in node.args)
    (in_h, in_w), (out_h, out_w) = source.shape[-2:], grad.shape[-2:]
    node.target = _spread_over_windows if in_h % out_h == 0 and in_w % out_w == 0 else _spread_by_averaging_matrices


def _spread_over_windows(grad: Any, source: Any) -> Any:
    *outer, out_h, out_w = grad.shape
    kernel_h, kernel_w = source.shape[-2] // out_h, source.shape[-1] // out_w
    spread = (grad / (kernel_h * kernel_w))[..., :, None, :, None].expand(*outer, out_h, kernel_h, out_w, kernel_w)
    return spread.reshape(source.shape)


def _averaging_matrix(outputs: int, inputs: int, like: Any) -> Any:
    """`A` with the adaptive average pool of a row `x` = `A x`: row `i` is 1 / its window's length
    over inputs [floor(i H / OH), ceil((i + 1) H / OH)), ATen's windows
    (aten/src/ATen/native/AdaptiveAveragePooling.cpp, start_index / end_index)."""
    import torch

    i = torch.arange(outputs, device=like.device)[:, None]
    h = torch.arange(inputs, device=like.device)[None, :]
    start, end = (i * inputs) // outputs, ((i + 1) * inputs + outputs - 1) // outputs
    return torch.where((h >= start) & (h < end), 1.0 / (end - start).to(like.dtype), torch.zeros((), dtype=like.dtype))


def adaptive_pool_by_window_means(source: Any, output_size: Any) -> Any:
    """`_adaptive_avg_pool2d` as the mean of each window (ATen's windows, `_averaging_matrix`),
    rows then columns, where the output does not divide the input: torch-mlir's lowering of
    those sizes in the joint step fails ("unexpected loop dimension for convolution op" for
    VGG's 7x7 pool of a 2x2 map, an invalid `tensor.cast` for 5x5 to 3x3). Not as products with
    averaging matrices: an infinite input times their zeros made every window of its row NaN
    (fuzz_pytorch seed 3153), where ATen's is infinite in the windows that hold it alone.
    out_h + out_w slices. Dividing sizes are left as they are (NotImplemented: make_fx keeps the op)."""
    (in_h, in_w), (out_h, out_w) = source.shape[-2:], output_size
    if in_h % out_h == 0 and in_w % out_w == 0:
        return NotImplemented
    return _window_means(_window_means(source, out_h, -2), out_w, -1)


def _window_means(x: Any, outputs: int, dim: int) -> Any:
    import torch

    inputs = x.shape[dim]
    if inputs == outputs:
        return x
    bounds = [((i * inputs) // outputs, ((i + 1) * inputs + outputs - 1) // outputs) for i in range(outputs)]
    return torch.cat([x.narrow(dim, start, end - start).mean(dim, keepdim=True) for start, end in bounds], dim)


def _spread_by_averaging_matrices(grad: Any, source: Any) -> Any:
    """The input's gradient `A_h^T grad A_w` of the pool `A_h x A_w^T` (_averaging_matrix)."""
    import torch

    rows = _averaging_matrix(grad.shape[-2], source.shape[-2], grad)
    columns = _averaging_matrix(grad.shape[-1], source.shape[-1], grad)
    return torch.matmul(torch.matmul(rows.transpose(0, 1), grad), columns)


def max_pool_backward_by_windows(
    grad: Any, source: Any, kernel: Any, stride: Any, padding: Any, dilation: Any, _ceil_mode: bool, indices: Any
) -> Any:
    """`max_pool2d_with_indices_backward` as reads, not a scatter: torch-mlir's scatter of each
    window's gradient to its arg-max holds the whole input gradient on one tile (410,152 bytes
    at full-size ResNet-50, micro-batch 2). Input row `h = stride * i + r` (phase `r`) lies in
    window `i + (r + padding - dilation * tap) / stride` of each tap where that divides, so each
    phase's gradient is a sum, over those taps, of the output gradient shifted by a constant
    where the window's arg-max is that position; the phases then interleave."""
    import torch
    import torch.nn.functional as F  # noqa: N812 (torch's name)

    def pair(values: Any) -> list[int]:  # ATen takes one value for both axes too
        return [int(value) for value in values] * (2 if len(values) == 1 else 1)

    kernel, stride, padding, dilation = pair(kernel), pair(stride or kernel), pair(padding), pair(dilation)
    height, width = source.shape[-2:]
    out_h, out_w = grad.shape[-2:]
    rows, columns = -(-height // stride[0]), -(-width // stride[1])  # each phase's length, the last ones cropped

    def shifts(phase: int, axis: int) -> list[int]:
        """The window offsets `o` with input `stride * i + phase` in window `i + o`."""
        starts = [phase + padding[axis] - dilation[axis] * tap for tap in range(kernel[axis])]
        return [start // stride[axis] for start in starts if start % stride[axis] == 0]

    def shifted(value: Any, offset_h: int, offset_w: int, fill: float) -> Any:
        """value[..., i + offset_h, j + offset_w] for i < rows, j < columns; `fill` outside."""
        low_h, low_w = max(0, -offset_h), max(0, -offset_w)
        high_h, high_w = max(0, rows + offset_h - out_h), max(0, columns + offset_w - out_w)
        padded = F.pad(value, [low_w, high_w, low_h, high_h], value=fill)
        return padded[..., offset_h + low_h : offset_h + low_h + rows, offset_w + low_w : offset_w + low_w + columns]

    phases = []
    for phase_h in range(stride[0]):
        row_phases = []
        for phase_w in range(stride[1]):
            i = torch.arange(rows, device=grad.device)[:, None]
            j = torch.arange(columns, device=grad.device)[None, :]
            position = (stride[0] * i + phase_h) * width + stride[1] * j + phase_w  # the flat index max-pool records
            total = torch.zeros((*grad.shape[:-2], rows, columns), dtype=grad.dtype, device=grad.device)
            for offset_h in shifts(phase_h, 0):
                for offset_w in shifts(phase_w, 1):
                    argmax = shifted(indices, offset_h, offset_w, -1)
                    total = total + torch.where(argmax == position, shifted(grad, offset_h, offset_w, 0.0), 0.0)
            row_phases.append(total)
        phases.append(torch.stack(row_phases, dim=-1).flatten(-2))  # (..., rows, columns * stride_w)
    spread = torch.stack(phases, dim=-2).flatten(-3, -2)  # (..., rows * stride_h, columns * stride_w)
    # contiguous: a Linear's backward after it views the gradient (5 of 6 rows: fuzz_pytorch seed 2301's shape)
    return spread[..., :height, :width].contiguous()


def rewrite_grouped_convolution_backward(node: Any) -> None:
    """`convolution_backward` of a grouped 2-d convolution (MobileNetV2's depthwise ones) or a
    transposed one as forward convolutions: torch-mlir's own lowering of the first builds an
    invalid `tensor.collapse_shape` / `expand_shape`, and it has none of the second. A grouped
    1-d one (which it refuses too) as the 2-d one of height 1. Others are left to torch-mlir."""
    *_, stride, _padding, _dilation, transposed, _output_padding, groups, _mask = node.args
    if len(stride) == 1 and groups > 1:
        node.target = _one_dimensional_convolution_backward
    elif len(stride) == 2 and transposed:
        node.target = _transposed_convolution_backward
    elif len(stride) == 2 and groups > 1:
        node.target = _grouped_convolution_backward


def _one_dimensional_convolution_backward(
    grad: Any,
    source: Any,
    weight: Any,
    bias_sizes: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: bool,
    output_padding: Any,
    groups: int,
    mask: Any,
) -> tuple:
    """(input, weight, bias) gradients of a grouped 1-d convolution, from the 2-d one of height 1."""
    import torch

    args = (grad.unsqueeze(2), source.unsqueeze(2), weight.unsqueeze(2), bias_sizes, [1, *stride], [0, *padding], [1, *dilation])
    args += (transposed, [0, *output_padding], groups, mask)
    if transposed:
        grad_input, grad_weight, grad_bias = _transposed_convolution_backward(*args)
    elif groups > 1:
        grad_input, grad_weight, grad_bias = _grouped_convolution_backward(*args)
    else:
        grad_input, grad_weight, grad_bias = torch.ops.aten.convolution_backward.default(*args)
    return (
        grad_input.squeeze(2) if mask[0] else None,
        grad_weight.squeeze(2) if mask[1] else None,
        grad_bias if mask[2] and bias_sizes else None,
    )


def _transposed_convolution_backward(
    grad: Any, source: Any, weight: Any, bias_sizes: Any, stride: Any, padding: Any, dilation: Any, _t: Any, _o: Any, groups: int, mask: Any
) -> tuple:
    """(input, weight, bias) gradients of `conv_transpose2d(source, weight, stride, padding,
    output_padding, groups, dilation)`, each None unless `mask` asks for it. The transposed
    convolution is the input gradient of the forward one with the same weight: its input
    gradient is that forward convolution of `grad` (output_padding only adds rows the forward
    one's floor drops), its weight gradient the forward one's with `grad` as the input and
    `source` as the output gradient (the weight layouts agree: in x out/groups x kernel)."""
    import torch.nn.functional as F  # noqa: N812 (torch's name)

    grad_input = F.conv2d(grad, weight, None, tuple(stride), tuple(padding), tuple(dilation), groups) if mask[0] else None
    grad_weight = None
    if mask[1]:
        grad_weight = _grouped_convolution_backward(
            source, grad, weight, None, stride, padding, dilation, False, None, groups, [False, True, False]
        )[1]
    grad_bias = grad.sum((0, 2, 3)) if mask[2] and bias_sizes else None
    return grad_input, grad_weight, grad_bias


def _grouped_convolution_backward(
    grad: Any, source: Any, weight: Any, bias_sizes: Any, stride: Any, padding: Any, dilation: Any, _t: Any, _o: Any, groups: int, mask: Any
) -> tuple:
    """(input, weight, bias) gradients of `conv2d(source, weight, stride, padding, dilation,
    groups)` for output gradient `grad`, each None unless `mask` asks for it."""
    import torch.nn.functional as F  # noqa: N812 (torch's name)

    batch, outputs = grad.shape[:2]
    inputs_per_group, kernel = weight.shape[1], weight.shape[2:]
    grad_input = grad_weight = grad_bias = None
    if mask[0]:
        # the output gradient, zeros between its elements (stride), padded so that a stride-1
        # convolution with the kernel flipped and each group's in/out channels swapped gives
        # the input's size
        spread = grad
        for axis, (s, p, d, k, size) in enumerate(zip(stride, padding, dilation, kernel, source.shape[2:])):
            axis += 2
            length = spread.shape[axis]
            if s > 1:
                spread = F.pad(spread.unsqueeze(axis + 1), [0, 0] * (spread.dim() - axis - 1) + [0, s - 1])
                spread = spread.flatten(axis, axis + 1).narrow(axis, 0, (length - 1) * s + 1)
            low = d * (k - 1) - p
            high = size + d * (k - 1) - spread.shape[axis] - low
            spread = F.pad(spread, [0, 0] * (spread.dim() - axis - 1) + [low, high])
        flipped = weight.reshape(groups, outputs // groups, inputs_per_group, *kernel).transpose(1, 2)
        flipped = flipped.reshape(groups * inputs_per_group, outputs // groups, *kernel).flip(2, 3)
        grad_input = F.conv2d(spread, flipped, dilation=tuple(dilation), groups=groups)
    if mask[1]:
        # each kernel tap's sum over the batch and the output positions: a convolution of the
        # input (batch as channels, per group) with the output gradient as the kernel
        rows = source.reshape(batch, groups, inputs_per_group, *source.shape[2:]).permute(2, 1, 0, 3, 4)
        taps = grad.reshape(batch, groups, outputs // groups, *grad.shape[2:]).permute(1, 2, 0, 3, 4)
        grad_weight = F.conv2d(
            rows.reshape(inputs_per_group, groups * batch, *source.shape[2:]),
            taps.reshape(outputs, batch, *grad.shape[2:]),
            stride=tuple(dilation),
            padding=tuple(padding),
            dilation=tuple(stride),
            groups=groups,
        )
        # contiguous as ATen's result: the traced step's later ops (the replicas' flattening
        # view) were recorded on a contiguous gradient
        grad_weight = grad_weight[:, :, : kernel[0], : kernel[1]].transpose(0, 1).contiguous()
    if mask[2] and bias_sizes:
        grad_bias = grad.sum((0, 2, 3))
    return grad_input, grad_weight, grad_bias
