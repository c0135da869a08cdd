"""A zoo model's forward pass written plainly in numpy: the baseline bench/run.py's runtime
section times the simulator against on the zoo models, as bench/simulator_vs_numpy.py's
numpy_mlp / numpy_cnn are for the MLP / CNN programs.

torch.export's graph of the module, decomposed to core ATen, is walked node by node; each ATen
op these models use maps to a numpy function (convolution as im2col of a strided windows view
times the filter matrix, linear layers as BLAS matmuls, normalisations and softmax as the
formulas). The weights are the module's own, converted once when the model is built, so a run
times only the forward pass. An op with no numpy function here is refused by name, with the
model source line that made it.

    model = NumpyModel(module, example_inputs)
    outputs = model(*arrays)  # a list of numpy arrays, the module's outputs in order
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from numpy.lib.stride_tricks import sliding_window_view

aten = torch.ops.aten


class UnsupportedOp(NotImplementedError):
    """A refusal naming an op this baseline has no numpy function for (raised when the model is
    built) or a form of one it does not take (raised when it runs: a transposed convolution)."""


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to float32 precision (numpy has none): the rational approximation on [-4, 4] of
    Eigen's and XLA's f32 erf (beyond 4, erf is 1 in f32), evaluated in f64."""
    x = np.clip(x.astype(np.float64), -4.0, 4.0)
    x2 = x * x
    p = np.float64(-2.72614225801306e-10)
    for c in (
        2.77068142495902e-08,
        -2.10102402082508e-06,
        -5.69250639462346e-05,
        -7.34990630326855e-04,
        -2.95459980854025e-03,
        -1.60960333262415e-02,
    ):
        p = p * x2 + c
    q = np.float64(-1.45660718464996e-05)
    for c in (-2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03, -1.42647390514189e-02):
        q = q * x2 + c
    return x * p / q


def gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        return (0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))).astype(x.dtype)
    return (0.5 * x * (1 + _erf(x / math.sqrt(2)))).astype(x.dtype)


def convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups) -> np.ndarray:
    """im2col, per group: the padded input's windows (a strided view) copied channel-major,
    times the group's filter matrix, all groups in one batched matmul (depthwise included)."""
    if transposed or any(d != 1 for d in dilation):
        raise UnsupportedOp(f"convolution: transposed={transposed} dilation={list(dilation)} (only plain convolutions)")
    n, c, _, _ = x.shape
    out_channels, group_channels, kh, kw = weight.shape
    padded = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])))
    windows = sliding_window_view(padded, (kh, kw), axis=(2, 3))[:, :, :: stride[0], :: stride[1]]
    oh, ow = windows.shape[2:4]
    columns = windows.reshape(n, groups, group_channels, oh, ow, kh, kw).transpose(1, 2, 5, 6, 0, 3, 4)
    columns = columns.reshape(groups, group_channels * kh * kw, n * oh * ow)
    y = weight.reshape(groups, out_channels // groups, -1) @ columns
    y = y.reshape(out_channels, n, oh, ow).transpose(1, 0, 2, 3)
    return y if bias is None else y + bias[:, None, None]


def max_pool2d(x, kernel, stride=(), padding=(0, 0), dilation=(1, 1), ceil_mode=False) -> tuple[np.ndarray, None]:
    """The values of max_pool2d_with_indices; the indices (unused in inference) are not made."""
    if ceil_mode or any(d != 1 for d in dilation):
        raise UnsupportedOp(f"max_pool2d: ceil_mode={ceil_mode} dilation={list(dilation)}")
    stride = stride or kernel
    padded = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])), constant_values=-np.inf)
    windows = sliding_window_view(padded, tuple(kernel), axis=(2, 3))[:, :, :: stride[0], :: stride[1]]
    return windows.max(axis=(4, 5)), None


def adaptive_avg_pool2d(x, output_size) -> np.ndarray:
    """PyTorch's bins: output i averages rows floor(i H / out) .. ceil((i + 1) H / out)."""
    (h, w), (oh, ow) = x.shape[2:], output_size
    if (h, w) == (oh, ow):
        return x
    rows = [(i * h // oh, -(-(i + 1) * h // oh)) for i in range(oh)]
    cols = [(j * w // ow, -(-(j + 1) * w // ow)) for j in range(ow)]
    return np.stack([np.stack([x[:, :, r0:r1, c0:c1].mean(axis=(2, 3)) for c0, c1 in cols], -1) for r0, r1 in rows], -2)


def batch_norm(x, weight, bias, mean, var, momentum, eps) -> tuple[np.ndarray, None, None]:
    shape = (1, -1) + (1,) * (x.ndim - 2)
    scale = (weight / np.sqrt(var + eps)).reshape(shape)
    return (x - mean.reshape(shape)) * scale + bias.reshape(shape), None, None


def layer_norm(x, normalized_shape, weight, bias, eps) -> tuple[np.ndarray, None, None]:
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    return y * weight + bias, None, None


def softmax(x, dim, half_to_float=False) -> np.ndarray:
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def expand(x, sizes) -> np.ndarray:
    lead = len(sizes) - x.ndim
    return np.broadcast_to(x, tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes)))


def slice_(x, dim=0, start=None, end=None, step=1) -> np.ndarray:
    index = [slice(None)] * x.ndim
    index[dim] = slice(start, end, step)
    return x[tuple(index)]


def split_with_sizes(x, sizes, dim=0) -> list[np.ndarray]:
    return np.split(x, np.cumsum(sizes)[:-1], axis=dim)


def arange(start, end, step=1, dtype=None, **_placement) -> np.ndarray:
    return np.arange(start, end, step, dtype=NUMPY_DTYPES[dtype] if dtype is not None else None)


NUMPY_DTYPES = {torch.float32: np.float32, torch.int64: np.int64, torch.int32: np.int32, torch.bool: np.bool_}

OPS: dict[Any, Callable[..., Any]] = {
    aten.convolution.default: convolution,
    aten._native_batch_norm_legit_no_training.default: batch_norm,
    aten.native_layer_norm.default: layer_norm,
    aten.max_pool2d_with_indices.default: max_pool2d,
    aten._adaptive_avg_pool2d.default: adaptive_avg_pool2d,
    aten.mean.dim: lambda x, dims, keepdim=False, dtype=None: x.mean(axis=tuple(dims), keepdims=keepdim),
    aten.relu.default: lambda x: np.maximum(x, x.dtype.type(0)),
    aten.hardtanh.default: lambda x, low=-1.0, high=1.0: np.clip(x, x.dtype.type(low), x.dtype.type(high)),
    aten.gelu.default: gelu,
    aten._softmax.default: softmax,
    aten.add.Tensor: lambda a, b, alpha=1: a + b if alpha == 1 else a + alpha * b,
    aten.div.Tensor: operator.truediv,
    aten.where.self: np.where,
    aten.addmm.default: lambda bias, a, b, beta=1, alpha=1: beta * bias + alpha * (a @ b) if (beta, alpha) != (1, 1) else a @ b + bias,
    aten.mm.default: operator.matmul,
    aten.bmm.default: operator.matmul,
    aten.embedding.default: lambda weight, indices, *_: weight[indices],
    aten.view.default: lambda x, shape: x.reshape(shape),
    aten.permute.default: np.transpose,
    aten.expand.default: expand,
    aten.clone.default: lambda x, memory_format=None: x,  # values, not layouts: nothing to copy
    aten.unsqueeze.default: np.expand_dims,
    aten.slice.Tensor: slice_,
    aten.split_with_sizes.default: split_with_sizes,
    aten.arange.start_step: arange,
    operator.getitem: operator.getitem,
}


def _source(node: torch.fx.Node) -> str:
    """The model source line that made `node`: the last frame of its stack trace."""
    lines = [line.strip() for line in (node.meta.get("stack_trace") or "").strip().splitlines()]
    return f" ({lines[-2]}: {lines[-1]})" if len(lines) >= 2 else ""


class NumpyModel:
    """`module`'s forward pass in numpy (the module docstring); refuses at construction any
    op it has no numpy function for."""

    def __init__(self, module: torch.nn.Module, example_inputs: tuple) -> None:
        with warnings.catch_warnings():  # torch.export's deprecation notices about its own internals
            warnings.simplefilter("ignore", FutureWarning)
            program = torch.export.export(module.eval(), tuple(example_inputs)).run_decompositions()
        self.graph = program.graph
        tensors = {**program.state_dict, **program.constants}
        self.constants: dict[str, np.ndarray] = {}
        self.inputs: list[str] = []
        for spec, node in zip(program.graph_signature.input_specs, (n for n in self.graph.nodes if n.op == "placeholder")):
            if spec.kind.name == "USER_INPUT":
                self.inputs.append(node.name)
            else:
                self.constants[node.name] = tensors[spec.target].detach().numpy()
        for node in self.graph.nodes:
            if node.op == "call_function" and node.target not in OPS:
                raise UnsupportedOp(f"no numpy function for {node.target} (node {node.name}){_source(node)}")

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        if len(arrays) != len(self.inputs):
            raise ValueError(f"the model takes {len(self.inputs)} inputs, given {len(arrays)}")
        values: dict[str, Any] = {**self.constants, **dict(zip(self.inputs, arrays))}

        def value(argument: Any) -> Any:
            return torch.fx.node.map_arg(argument, lambda node: values[node.name])

        for node in self.graph.nodes:
            if node.op == "call_function":
                values[node.name] = OPS[node.target](*value(node.args), **value(node.kwargs))
            elif node.op == "output":
                return [np.asarray(result) for result in value(node.args[0])]
        raise AssertionError("the exported graph has no output node")
