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
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from mlir import ir

from . import Target
from .element_types import numpy_float

# --- Assumptions (not in any target file) ----------------------------------------------------

# Launching a vertex (supervisor start, worker dispatch and the final worker sync): poplibs'
# AMP 1x1 vertex estimate has a `supervisorNonloopOverhead` of 50
# (lib/poplin/PerformanceEstimation.hpp); assumption: every vertex pays the same.
VERTEX_OVERHEAD_CYCLES = 50

# Assumption: element-wise float arithmetic runs on 64-bit SIMD, so f16 is 4 lanes and f32 2
# lanes wide; f64 and integers run one lane (the IPU has no f64 unit and no integer SIMD).
SIMD_BYTES = 8


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
    narrow = numpy_float(text)  # f8E4M3FN, or numpy's bfloat16
    if narrow is not None:
        return _DType(text, narrow.itemsize, True)
    try:
        numpy_type = np.dtype(text)
    except TypeError:
        raise ValueError(f"unknown element type '{text}'") from None
    return _DType(text, numpy_type.itemsize, numpy_type.kind == "f")


def _has_amp(dtype: _DType) -> bool:
    """Whether the matrix unit (AMP) takes `dtype`: f32, f16 (bf16 assumed to run as f16) and
    FP8 (`amp_in_chans_per_group`); f64 and integers run on the vector path only."""
    return dtype.is_float and dtype.bytes in (1, 2, 4)


# --- poplibs' AMP 1x1 partials vertex --------------------------------------------------------
# poplin plans an M x K x N matmul as a 1x1 convolution (lib/poplin/MatMul.cpp getConvParams)
# whose M output positions run on the AMP "ConvPartial1x1Out" vertex. Its cycle estimator is
# lib/poplin/PerformanceEstimation.hpp (graphcore/poplibs at 7eac0f26), transcribed below for
# f32 and f16 activations; the numbers in `_amp_worker_cycles` and `amp_work` are that file's
# (each comment names the function). The vertex works on chunks of `in_chans_per_group`
# input channels by `amp_conv_units` output channels: it loads the chunk's weights into the
# conv units, then streams the tile's output positions, split among the workers, through them.

# poplibs' estimator: 8 cycles per output position for f32 activations, 4 for f16
# (getConvPartial1x1SupervisorInnerLoopCycleEstimateHalfFloat's coreCycles).
AMP_CORE_CYCLES = {4: 8, 2: 4}


def amp_in_chans_per_group(dtype: _DType, target: Target) -> int:
    """Input channels of one chunk: the weights one conv unit holds (8 f32, 16 f16). FP8 runs
    the f16 path (4 cycles per position) on fp8_fma_per_cycle / fp16_fma_per_cycle times f16's
    channels: 32 on the C600, whose FP8 peak is twice its FP16 one, and f16's 16 on chips that
    convert FP8 to half (assumption: the C600's AMP holds twice the FP8 weights in the same
    bytes; no FP8 estimator is among our sources)."""
    if dtype.bytes == 1:
        return target.amp_weight_bytes_per_conv_unit // 2 * target.fp8_fma_per_cycle // target.fp16_fma_per_cycle
    return target.amp_weight_bytes_per_conv_unit // dtype.bytes


def _amp_worker_cycles(elems: int, zeroing: bool, float_acts: bool, common_path: bool, zero_per_group: int) -> int:
    """One worker's cycles for `elems` output positions of one chunk, `zeroing` on the first
    input chunk: the switch of getConvPartial1x1SupervisorInnerLoopCycleEstimateHalfFloat."""
    if elems == 0:
        return 0  # an empty work list: the worker does not run
    zero = (2 + zero_per_group * elems) * zeroing
    if float_acts:
        return {1: 47, 2: 46}.get(elems, 46) + zero + max(0, elems - 3) * AMP_CORE_CYCLES[4]
    if common_path:
        return {1: 31, 2: 40}.get(elems, 37) + (2 - zeroing if elems < 3 else 1 - zeroing) + max(0, elems - 3) * AMP_CORE_CYCLES[2]
    return {1: 39, 2: 40}.get(elems, 41) + zero + max(0, elems - 3) * AMP_CORE_CYCLES[2]


@functools.cache
def _amp_inner_cycles(positions: int, zeroing: bool, dtype: _DType, target: Target, float_partials: bool) -> int:
    """The supervisor's cycles for one chunk: the slowest worker's cycles x the workers (they
    share the issue slots), and at least the fastest's plus 14
    (getConvPartial1x1SupervisorInnerLoopCycleEstimateHalfFloat). Positions are split evenly
    among the workers (poplin's partitionConvPartialByWorker)."""
    float_acts, units, workers = dtype.bytes == 4, conv_units(dtype, target, float_partials), target.worker_threads
    common_path = (not float_acts and units == 16) or float_partials
    zero_per_group = 8 if float_acts and units == 16 else 4 if float_partials else 2
    retention = 7 if not float_acts and (float_partials or units == 16) else 0  # conv1x1WorkerRetentionSavings
    share, extra = divmod(positions, workers)
    cycles = [_amp_worker_cycles(share + (w < extra), zeroing, float_acts, common_path, zero_per_group) for w in range(workers)]
    cycles = [c - retention if c else 0 for c in cycles]
    return max(workers * max(cycles), workers * min(cycles) + 14)


def partials_are_float(dtype: _DType, partials: str | None) -> bool:
    """Whether the AMP sums `dtype` operands into float partials: f32 ones always; f16 ones
    (bf16 priced as f16) unless `partials` (an op's `ipu.partials`, Poplar's partialsType) is
    "f16"; FP8 ones never. Float is Poplar's default: graphcore/poplibs' `MatMulOptions`
    (lib/poplin/MatMul.cpp) and `ConvOptions` (lib/poplin/ConvOptions.hpp) hold `partialsType =
    poplar::FLOAT`; graphcore/popart's MatMulOp keeps FLOAT unless the op or the session's
    `partialsTypeMatMuls` (unset by default) says otherwise (willow/src/op/matmul.cpp); and
    graphcore/poptorch's `Precision.setPartialsType` sets those two only when called
    (python/options.py). FP8 (QUARTER) operands sum into half partials whatever is asked:
    poplibs' validateLayerParams sets HALF, "the only valid option where the input is of type
    QUARTER" (lib/poplin/ConvValidation.cpp)."""
    return dtype.bytes == 4 or (dtype.bytes == 2 and partials != "f16")


def conv_units(dtype: _DType, target: Target, float_partials: bool) -> int:
    """poplibs' getNumConvUnits: half operands into float partials drive fewer conv units on Mk2."""
    return target.amp_conv_units_f32_partials if float_partials and dtype.bytes < 4 else target.amp_conv_units


def amp_work(
    groups: int, positions: int, in_channels: int, out_channels: int, dtype: _DType, target: Target, partials: str | None = None
) -> int:
    """poplibs' estimate of the AMP 1x1 vertex (getConvPartial1x1SupervisorOuterLoopCycleEstimateHalfFloat
    with one output pass per group: output channels grouped by `amp_conv_units`), less its
    `supervisorNonloopOverhead` of 50, which VERTEX_OVERHEAD_CYCLES charges once per vertex.
    Per conv group, each input chunk x output chunk costs the weight load
    (getConvPartialAmpSupervisorWeightLoadCycleEstimate: conv units x weight bytes per unit /
    load bytes per cycle) plus the inner loop, with zeroing on the first input chunk."""
    float_partials = partials_are_float(dtype, partials)
    float_acts, units, workers = dtype.bytes == 4, conv_units(dtype, target, float_partials), target.worker_threads
    common_path = (not float_acts and units == 16) or float_partials
    retention = (7, 3) if not float_acts and (float_partials or units == 16) else (0, 0)
    in_groups = -(-in_channels // amp_in_chans_per_group(dtype, target))
    out_groups = -(-out_channels // units)
    loads = units * target.amp_weight_bytes_per_conv_unit // target.amp_weight_load_bytes_per_cycle
    first = _amp_inner_cycles(positions, True, dtype, target, float_partials)
    later = _amp_inner_cycles(positions, False, dtype, target, float_partials)
    excess_in_chan = 1
    return workers * (retention[0] + retention[1] * (in_groups * groups - 1)) + groups * (
        12
        + common_path
        + (in_groups - 1) * (15 - common_path + excess_in_chan + out_groups * (19 + 6 + loads + later))
        + (10 + excess_in_chan + out_groups * (19 - common_path + 7 + loads + first))
    )


def worker_issue_interval(target: Target) -> int:
    """Cycles between two instructions of one worker. The `worker_threads` workers of a tile are
    barrel-scheduled, one instruction each per turn of `worker_threads` cycles (Jia et al. 2019,
    arXiv:1912.03413: round-robin issue over the 6 workers); a worker's next instruction uses
    what its last loaded, so it waits `memory_latency_cycles` if that is longer than a turn.
    On gc2 and gc200 both are 6: the barrel hides the latency and a tile issues one instruction
    per cycle (docs/fidelity.md, latency)."""
    return max(target.worker_threads, target.memory_latency_cycles)


def _lanes_per_cycle(dtype: _DType, target: Target) -> float:
    # FP8 has no vector arithmetic: converted to half, 4 lanes (assumption, docs/precision.md).
    lanes = SIMD_BYTES // max(dtype.bytes, 2) if dtype.is_float and dtype.bytes <= 4 else 1
    return lanes * target.worker_threads / worker_issue_interval(target)


def _memory_cycles(read_bytes: int, write_bytes: int, target: Target) -> int:
    return max(math.ceil(read_bytes / target.memory_read_bytes_per_cycle), math.ceil(write_bytes / target.memory_write_bytes_per_cycle))


def contraction_work(
    groups: int,
    positions: int,
    in_channels: int,
    out_channels: int,
    read_bytes: int,
    write_bytes: int,
    dtype,
    target: Target,
    partials: str | None = None,
) -> int:
    """`groups` independent sums of products, each `out_channels` outputs at `positions` output
    positions over `in_channels` inputs (a matmul is positions M, in K, out N): the cheaper of
    poplibs' AMP 1x1 vertex (`amp_work`) and the vector path (one SIMD multiply-add per lane,
    as element-wise code), or the memory traffic if that is slower. poplin plans every vertex
    kind it has and keeps the cheapest (`lib/poplin/ConvPlan.cpp`); these are two of them."""
    info = dtype_info(dtype)
    vector = math.ceil(groups * positions * in_channels * out_channels / _lanes_per_cycle(info, target))
    compute = min(vector, amp_work(groups, positions, in_channels, out_channels, info, target, partials)) if _has_amp(info) else vector
    return max(compute, _memory_cycles(read_bytes, write_bytes, target))


def matmul_work(batch: int, m: int, n: int, k: int, dtype, target: Target, partials: str | None = None) -> int:
    info = dtype_info(dtype)
    reads = batch * (m * k + k * n) * info.bytes
    return contraction_work(batch, m, k, n, reads, batch * m * n * info.bytes, dtype, target, partials)


def conv_work(
    n: int, f: int, oh: int, ow: int, c_per_group: int, kh: int, kw: int, dtype, target: Target, partials: str | None = None
) -> int:
    info = dtype_info(dtype)
    # Each output position reads its input window once (stride 1, no reuse counted) and the
    # filters are read once. Assumption: the kernel's taps count as input channels (the vertex
    # runs on im2col columns, as runtime/codelet's kernel builds them; poplin's expandDims
    # transform does the same for few channels), so one 1x1 vertex computes the convolution.
    # A grouped convolution is priced as a dense one with the same FMAs.
    reads = (n * c_per_group * oh * ow + f * c_per_group * kh * kw) * info.bytes
    return contraction_work(1, n * oh * ow, c_per_group * kh * kw, f, reads, n * f * oh * ow * info.bytes, dtype, target, partials)


def elementwise_work(
    num_elements: int, ops_per_element: int, dtype, target: Target, read_bytes: int | None = None, write_bytes: int | None = None
) -> int:
    """SIMD instructions over `num_elements` points, or the memory traffic if slower: the bytes
    the caller counts (a generic: each input's piece and the result's), else one element read
    and one written per point."""
    info = dtype_info(dtype)
    compute = math.ceil(num_elements * ops_per_element / _lanes_per_cycle(info, target))
    size = num_elements * info.bytes
    reads, writes = size if read_bytes is None else read_bytes, size if write_bytes is None else write_bytes
    return max(compute, _memory_cycles(reads, writes, target))


def copy_work(num_bytes: int, target: Target) -> int:
    return _memory_cycles(num_bytes, num_bytes, target)


# --- The contract (docs/contracts.md) ------------------------------------------------------


def matmul_cycles(batch: int, m: int, n: int, k: int, dtype, target: Target) -> int:
    """One vertex computing `batch` products of M x K by K x N (`contraction_work`)."""
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


# --- Exchange, as poplibs' ExchangeEstimator prices it ---------------------------------------
# graphcore/poplibs at 7eac0f26: lib/poplin/ExchangeEstimator.hpp (the convolution planner's)
# and lib/popops/ExchangeEstimator.cpp (the other planners'), with the bytes already in place
# from lib/poplin/ConvModel.cpp addExchangeCycleEstimates.

# Bytes and the rate are both scaled by 16 so that a fractional rate divides in integers
# (exchangeBytesScalingFactor, ExchangeEstimator.hpp:18-26, ExchangeEstimator.cpp:17-25).
EXCHANGE_SCALE = 16


def _scaled_exchange_rate(target: Target) -> int:
    """getScaledExchangeBytesPerCycle: round(rate x 16), at least 1 (ExchangeEstimator.cpp:27-42)."""
    return max(1, round(target.exchange_bytes_per_cycle * EXCHANGE_SCALE))


def exchange_cycles(num_bytes: int, target: Target, shared_bytes: int = 0) -> int:
    """A tile receiving `num_bytes` in an exchange phase, `shared_bytes` of them over its super
    tile's shared bus (data every tile of the super tile receives: `exchange_tiles_per_shared_bus`
    times the rate): ceil(16 x bytes / (round(16 x rate) x share)), poplibs' getCycles
    (ExchangeEstimator.cpp:68-109), with the two kinds of bytes in one division. The planner
    passes a tile's operand pieces (`exchanged_bytes`, `shares_exchange_bus`); the simulator each
    superstep's busiest tile (runtime/superstep.py: received, with the shared part, or sent,
    whichever is slower: a tile's port limits both directions; a tile sends at the base rate)."""
    share = target.exchange_tiles_per_shared_bus
    scaled = EXCHANGE_SCALE * (share * (num_bytes - shared_bytes) + shared_bytes)
    return -(-scaled // (share * _scaled_exchange_rate(target)))


def exchanged_bytes(num_bytes: int, holders: int) -> int:
    """The bytes of a piece that `holders` tiles all need which reach one of them through the
    exchange: the piece is spread evenly over those tiles, so 1/holders of it is already there
    (ConvModel.cpp:1049-1068, for weights and inputs alike; one holder: no exchange)."""
    return num_bytes - num_bytes // holders


def shares_exchange_bus(consecutive_receivers: int, total_receivers: int, target: Target) -> bool:
    """Whether a piece that `consecutive_receivers` consecutive tiles receive (of
    `total_receivers` receiving it) comes over the shared bus: when the consecutive receivers
    fill whole super tiles, or are all of them (ExchangeEstimator.cpp:79-103; poplin's
    convolution planner asks the first only, of its output-channel split: ExchangeEstimator.hpp
    :57-72). Poplibs' formula grants the second case to a single receiver too; no bus is shared
    with nobody, so one receiver is not. The tiles are assumed to start on a super tile, as poplin
    places them (Convolution.cpp:303 asserts it)."""
    share = target.exchange_tiles_per_shared_bus
    if share < 2 or consecutive_receivers < 2:
        return False
    return consecutive_receivers % share == 0 or consecutive_receivers == total_receivers


def sync_cycles(target: Target) -> int:
    """One BSP sync of all tiles (internal and external alike; host transfers are separate)."""
    return target.sync_cycles


def global_sync_cycles(target: Target) -> int:
    """A sync of every tile of every IPU (Poplar's global sync), as poplibs' IPU model prices it
    (lib/poplibs_test/Util.cpp setGlobalSyncLatency): one hop within a card plus one per pair of
    cards, hops = 1 + (N / 2) / 2, at `sync_seconds_per_hop` there and back. One chip: its own
    sync (the one-hop case)."""
    system = target.system
    if system is None:
        return target.sync_cycles
    hops = 1 + (system.num_ipus // 2) // 2
    return math.ceil(system.sync_seconds_per_hop * target.clock_hz * hops * 2)


def link_route(src_ipu: int, dst_ipu: int) -> list[tuple[int, str]]:
    """The IPU-Link groups a transfer from `src_ipu` to `dst_ipu` crosses on poplibs' ladder
    (Util.cpp addGlobalExchangeConstraints), each as (IPU it leaves, "card" | "rung" | "up" |
    "down"): straight over the card's links to its partner; else across the rung when the
    destination is on the other side, then up or down the rail two IPUs at a time. Its length
    is the number of hops."""
    if src_ipu == dst_ipu:
        return []
    if src_ipu // 2 == dst_ipu // 2:
        return [(src_ipu, "card")]
    route, at = [], src_ipu
    if at % 2 != dst_ipu % 2:
        route.append((at, "rung"))
        at = at + 1 if at % 2 == 0 else at - 1
    step, direction = (2, "up") if at < dst_ipu else (-2, "down")
    while at != dst_ipu:
        route.append((at, direction))
        at += step
    return route


def link_cycles(flows: dict[tuple[int, int], int], target: Target) -> int:
    """Cycles of one exchange phase moving `flows[(src_ipu, dst_ipu)]` bytes between IPUs:
    poplibs' IPU model's global exchange constraints, each group of links carrying the bytes of
    every flow routed over it at links x `link_bits_per_second` x `ipu_link_efficiency`; the
    slowest group sets the time (flows over different links overlap)."""
    system = target.system
    if not flows:
        return 0
    if system is None:
        raise ValueError(f"target '{target.name}' is one IPU: it has no IPU-Link flows")
    links = {"card": system.card_links, "rung": system.rung_links, "up": system.rail_links, "down": system.rail_links}
    loads: dict[tuple[int, str], int] = {}
    for (src, dst), num_bytes in flows.items():
        for group in link_route(src, dst):
            loads[group] = loads.get(group, 0) + num_bytes
    rate = system.link_bits_per_second * target.ipu_link_efficiency / 8  # bytes per second per link
    seconds = max(num_bytes / (links[kind] * rate) for (_, kind), num_bytes in loads.items())
    return math.ceil(seconds * target.clock_hz)


def ring_of(ipus: Sequence[int]) -> list[int]:
    """`ipus` (one a replica) in the order of the ring an all-reduce runs over on the ladder: up
    the even side, down the odd side, so that every hop of a ring of neighbours (IPUs
    0..R-1) is one IPU-Link group (a rail between IPUs i and i + 2, or the card's links at the
    two ends); a ring of the IPUs holding one pipeline stage (s, s + K, ...) runs up and back
    down its side, each hop routed over the ladder (`link_route`). Assumption: GCL's own ring
    order is not published; this is the ring of one-hop neighbours the ladder allows."""
    return sorted(i for i in ipus if i % 2 == 0) + sorted((i for i in ipus if i % 2), reverse=True)


def ring_step_flows(num_bytes: int, ipus: Sequence[int]) -> dict[tuple[int, int], int]:
    """One step of a ring all-reduce of `num_bytes` per replica over `ipus` (GCL's
    reduce-scatter then all-gather: 2 x (R - 1) such steps, each IPU sending 1 / R of the
    tensor to the next IPU of `ring_of`, so each link carries 2 (R - 1) / R x `num_bytes` in
    all)."""
    ring = ring_of(ipus)
    chunk = -(-num_bytes // len(ring))
    return {(ipu, ring[(k + 1) % len(ring)]): chunk for k, ipu in enumerate(ring)}


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
