"""Cycle estimates shared by the planner (choosing tile partitions) and the simulator (profiles).

Every function is pure and cheap: it reads figures of a `Target` (each cited in its target file)
and the assumptions below, which are this model's own choices, each labelled as such. The
op-level functions (`matmul_cycles`, `conv_cycles`, `elementwise_cycles`, `copy_cycles`) are
the cost of one vertex doing just that op on one tile, vertex overhead included; the `*_work`
functions the same without the overhead. This is the bottom layer: it knows no op names but
those of data movement and element-wise instructions (`op_work`). Each compute op's record
(`ipu_mlir.dialects.ops`) prices the op from these formulas, and `ops.codelet_cycles` walks a
codelet body charging the overhead once. docs/ipu-run.md has the
table of figures and their sources.

    matmul_cycles(1, 64, 64, 64, "f32", load_target("gc200"))   # -> cycles on one tile
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import numpy as np
from mlir import ir

from . import Target

# --- Assumptions (not in any target file) ----------------------------------------------------

# Assumption: launching a vertex (supervisor start, worker dispatch and the final worker sync)
# costs a fixed few tens of cycles; the order of magnitude of the fixed terms in poplibs'
# codelet cycle estimators, not a measured figure.
VERTEX_OVERHEAD_CYCLES = 50

# Assumption: the matrix unit (AMP) sustains 75% of its peak `fma_per_cycle` on one vertex's
# matmul or convolution (loading weights and partial sums interrupts the stream of FMAs).
MATMUL_EFFICIENCY = 0.75

# Assumption: element-wise float arithmetic runs on 64-bit SIMD, so f16 is 4 lanes and f32 2
# lanes wide; f64 and integers run one lane (the IPU has no f64 unit and no integer SIMD).
SIMD_BYTES = 8

# Assumption: the `worker_threads` workers of a tile are barrel-scheduled, each issuing one
# instruction every WORKER_ISSUE_INTERVAL cycles (Jia et al. 2019, arXiv:1912.03413, describe
# round-robin issue over the 6 workers), so a tile issues one vector instruction per cycle.
WORKER_ISSUE_INTERVAL = 6

# Assumption: instructions per element of scalar ops, by op name; anything not listed is one
# instruction. Transcendentals expand into short polynomial sequences.
OP_INSTRUCTIONS = {
    "arith.divf": 4,
    "arith.remf": 8,
    "arith.divsi": 8,
    "arith.divui": 8,
    "arith.remsi": 8,
    "arith.remui": 8,
    "math.exp": 4,
    "math.exp2": 4,
    "math.log": 4,
    "math.log2": 4,
    "math.log1p": 4,
    "math.tanh": 6,
    "math.erf": 6,
    "math.sqrt": 4,
    "math.rsqrt": 4,
    "math.sin": 6,
    "math.cos": 6,
    "math.powf": 10,
    "math.atan": 6,
    "math.atan2": 8,
}

# Data movement with no cost (a new view of the same bytes) and ops with no run-time work.
_FREE_OPS = frozenset(
    {"tensor.empty", "tensor.expand_shape", "tensor.collapse_shape", "tensor.cast", "tensor.bitcast", "arith.constant", "func.return"}
)
_COPY_OPS = frozenset(
    {"tensor.extract_slice", "tensor.insert_slice", "tensor.pad", "tensor.concat", "linalg.transpose", "linalg.broadcast", "linalg.copy"}
)


@dataclass(frozen=True)
class _DType:
    name: str
    bytes: int
    is_float: bool


def dtype_info(dtype: str | ir.Type | np.dtype) -> _DType:
    """An element type named the MLIR way (`f32`, `i8`), numpy's (`float32`), or as an MLIR or
    numpy type. i1 counts one byte, as in tile memory."""
    return _dtype_info(str(dtype))


@functools.cache
def _dtype_info(text: str) -> _DType:  # the planner asks thousands of times per op
    match = re.fullmatch(r"(bf|f|i|si|ui)(\d+)", text)
    if match:
        bits = int(match.group(2))
        return _DType(text, max(1, (bits + 7) // 8), match.group(1) in ("f", "bf"))
    if text == "index":
        return _DType(text, 8, False)
    try:
        numpy_type = np.dtype(text)
    except TypeError:
        raise ValueError(f"unknown element type '{text}'") from None
    return _DType(text, numpy_type.itemsize, numpy_type.kind == "f")


def _fma_per_cycle(dtype: _DType, target: Target) -> float:
    """FMAs per cycle of one tile for a matmul or convolution in `dtype`."""
    if dtype.is_float and dtype.bytes == 4:
        return target.fp32_fma_per_cycle
    if dtype.is_float and dtype.bytes == 2:  # f16, and bf16 assumed to run like f16
        return target.fp16_fma_per_cycle
    return _lanes_per_cycle(dtype, target)  # no matrix unit for f64 and integers


def _lanes_per_cycle(dtype: _DType, target: Target) -> float:
    lanes = SIMD_BYTES // dtype.bytes if dtype.is_float and dtype.bytes <= 4 else 1
    return lanes * target.worker_threads / WORKER_ISSUE_INTERVAL


def _memory_cycles(read_bytes: int, write_bytes: int, target: Target) -> int:
    return max(math.ceil(read_bytes / target.memory_read_bytes_per_cycle), math.ceil(write_bytes / target.memory_write_bytes_per_cycle))


def contraction_work(fmas: int, read_bytes: int, write_bytes: int, dtype, target: Target) -> int:
    """`fmas` multiply-adds on the matrix unit at `fma_per_cycle(dtype)` x MATMUL_EFFICIENCY,
    or the memory traffic if that is slower: any sum of products (matmuls, convolutions)."""
    compute = math.ceil(fmas / (_fma_per_cycle(dtype_info(dtype), target) * MATMUL_EFFICIENCY))
    return max(compute, _memory_cycles(read_bytes, write_bytes, target))


def matmul_work(batch: int, m: int, n: int, k: int, dtype, target: Target) -> int:
    info = dtype_info(dtype)
    reads = batch * (m * k + k * n) * info.bytes
    return contraction_work(batch * m * n * k, reads, batch * m * n * info.bytes, dtype, target)


def conv_work(n: int, f: int, oh: int, ow: int, c_per_group: int, kh: int, kw: int, dtype, target: Target) -> int:
    info = dtype_info(dtype)
    # Each output position reads its input window once (stride 1, no reuse counted) and the
    # filters are read once.
    reads = (n * c_per_group * oh * ow + f * c_per_group * kh * kw) * info.bytes
    return contraction_work(n * f * oh * ow * c_per_group * kh * kw, reads, n * f * oh * ow * info.bytes, dtype, target)


def elementwise_work(num_elements: int, ops_per_element: int, dtype, target: Target) -> int:
    info = dtype_info(dtype)
    compute = math.ceil(num_elements * ops_per_element / _lanes_per_cycle(info, target))
    size = num_elements * info.bytes
    return max(compute, _memory_cycles(size, size, target))


def copy_work(num_bytes: int, target: Target) -> int:
    return _memory_cycles(num_bytes, num_bytes, target)


# --- The contract (docs/contracts.md) ------------------------------------------------------


def matmul_cycles(batch: int, m: int, n: int, k: int, dtype, target: Target) -> int:
    """One vertex computing `batch` products of M x K by K x N: the matrix unit at
    `fma_per_cycle(dtype)` x MATMUL_EFFICIENCY, or the memory traffic if that is slower."""
    return VERTEX_OVERHEAD_CYCLES + matmul_work(batch, m, n, k, dtype, target)


def conv_cycles(n: int, f: int, oh: int, ow: int, c_per_group: int, kh: int, kw: int, dtype, target: Target) -> int:
    """One vertex computing an N x F x OH x OW output over C/groups x KH x KW windows."""
    return VERTEX_OVERHEAD_CYCLES + conv_work(n, f, oh, ow, c_per_group, kh, kw, dtype, target)


def elementwise_cycles(num_elements: int, ops_per_element: int, dtype, target: Target) -> int:
    """One vertex applying `ops_per_element` instructions to each element: SIMD lanes per
    cycle, or reading and writing each element once if that is slower."""
    return VERTEX_OVERHEAD_CYCLES + elementwise_work(num_elements, ops_per_element, dtype, target)


def copy_cycles(num_bytes: int, target: Target) -> int:
    """One vertex moving `num_bytes` within its tile (slices, padding, concatenation)."""
    return VERTEX_OVERHEAD_CYCLES + copy_work(num_bytes, target)


def exchange_cycles(max_bytes_received_by_a_tile: int, target: Target) -> int:
    """An exchange phase whose busiest tile moves `max_bytes_received_by_a_tile` bytes at the
    target's exchange rate. The simulator passes max over tiles of max(bytes received, bytes
    sent): a tile's exchange port limits both directions."""
    return math.ceil(max_bytes_received_by_a_tile / target.exchange_bytes_per_cycle)


def sync_cycles(target: Target) -> int:
    """One BSP sync of all tiles (internal and external alike; host transfers are separate)."""
    return target.sync_cycles


def host_seconds(num_bytes: int, target: Target) -> float:
    """Streaming `num_bytes` between host and device over the host link. A run's host time
    counts its streams of inputs and outputs (and of weights whose bytes the memory plan
    reuses); resident weights are priced once, at load (runtime/profile.py's `load_seconds`)."""
    return num_bytes / target.host_link_bytes_per_second


def _shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.ShapedType(value.type).shape)


def _numel(value: ir.Value) -> int:
    return math.prod(_shape(value))


def _element_type(value: ir.Value) -> ir.Type:
    return ir.ShapedType(value.type).element_type


def op_work(op: ir.OpView, target: Target) -> int:
    """Cycles of one tile running `op`, a codelet op that is not a compute op (those cost what
    their record in `ipu_mlir.dialects.ops` says): data movement, element-wise arith and math
    on tensors, scalar instructions. Vertex overhead excluded."""
    name = op.operation.name
    if name in _FREE_OPS:
        return 0
    tensors = [r for r in op.results if isinstance(r.type, ir.RankedTensorType)]
    if name in _COPY_OPS:
        moved = op.operands[0] if name == "tensor.insert_slice" else op.results[0]
        return copy_work(_numel(moved) * dtype_info(_element_type(moved)).bytes, target)
    if tensors:  # linalg.fill, arith and math on tensors, anything else element-wise
        return elementwise_work(_numel(tensors[0]), OP_INSTRUCTIONS.get(name, 1), _element_type(tensors[0]), target)
    return OP_INSTRUCTIONS.get(name, 1)  # a scalar instruction
