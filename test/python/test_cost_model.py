"""Cost model figures against hand computation on the `tiny` target (gc200's per-tile figures:
16 f32 / 64 f16 FMA per cycle, 16 B/cycle read, 8 B/cycle write, 4 B/cycle exchange, sync 40),
with the model's assumptions: 50 cycles per vertex, matmul at 75% of peak, 64-bit SIMD."""

from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import make_context, ops
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target import cost_model, load_target

REPO = Path(__file__).resolve().parents[2]
TINY = load_target("tiny")


def test_matmul_at_the_matrix_units_rate_or_the_memorys():
    # 64^3 FMAs at 16 x 0.75 per cycle: ceil(262144 / 12) = 21846.
    assert cost_model.matmul_cycles(1, 64, 64, 64, "f32", TINY) == 50 + 21846
    # k = 1: 4096 FMAs (342 cycles) but 64 x 64 x 4 bytes written at 8 per cycle: 2048.
    assert cost_model.matmul_cycles(1, 64, 64, 1, "f32", TINY) == 50 + 2048
    # f16: 2 x 32^3 FMAs at 64 x 0.75 per cycle: ceil(65536 / 48) = 1366.
    assert cost_model.matmul_cycles(2, 32, 32, 32, "f16", TINY) == 50 + 1366


def test_conv_counts_its_fmas():
    # 8 filters x 16 x 16 outputs x 3 x 3 x 3 = 55296 FMAs at 12 per cycle = 4608.
    assert cost_model.conv_cycles(1, 8, 16, 16, 3, 3, 3, "f32", TINY) == 50 + 4608


def test_elementwise_lanes_and_memory():
    # f32 is 2 lanes: 3000 instructions / 2 = 1500, above 4000 bytes written / 8 = 500.
    assert cost_model.elementwise_cycles(1000, 3, "f32", TINY) == 50 + 1500
    # f16 is 4 lanes: 250 cycles, equal to 2000 bytes written / 8.
    assert cost_model.elementwise_cycles(1000, 1, "f16", TINY) == 50 + 250
    # Integers run one lane.
    assert cost_model.elementwise_cycles(100, 1, "i32", TINY) == 50 + 100


def test_copy_exchange_sync_and_host():
    assert cost_model.copy_cycles(1000, TINY) == 50 + 125  # written at 8 bytes per cycle
    assert [cost_model.exchange_cycles(n, TINY) for n in (0, 256, 257)] == [0, 64, 65]
    assert cost_model.sync_cycles(TINY) == 40
    assert cost_model.host_seconds(64_000, TINY) == pytest.approx(1e-6)


def test_element_types_in_every_spelling():
    with make_context():
        spellings = ["f32", "float32", np.dtype(np.float32), ir.F32Type.get()]
    assert len({cost_model.matmul_cycles(1, 8, 8, 8, s, TINY) for s in spellings}) == 1
    assert cost_model.dtype_info("i1").bytes == 1 and cost_model.dtype_info("bool").bytes == 1
    with pytest.raises(ValueError, match="unknown element type 'tensor'"):
        cost_model.dtype_info("tensor")


def test_codelet_cycles_walk_the_body():
    text = (
        """
    #id = affine_map<(d0, d1) -> (d0, d1)>
    module {
      func.func private @k(%a: tensor<8x16xf32>, %b: tensor<16xf32>, %c: tensor<4x8xf32>, %d: tensor<8x2xf32>) """
        """-> (tensor<8xf32>, tensor<4x2xf32>) attributes {ipu.codelet} {
        %e = tensor.empty() : tensor<8xf32>
        %r = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], """
        """iterator_types = ["parallel", "reduction"]} ins(%a, %b : tensor<8x16xf32>, tensor<16xf32>) outs(%e """
        """: tensor<8xf32>) {
        ^bb0(%x: f32, %y: f32, %o: f32):
          %m = arith.mulf %x, %y : f32
          %s = arith.addf %m, %o : f32
          linalg.yield %s : f32
        } -> tensor<8xf32>
        %x = math.exp %r : tensor<8xf32>
        %p = "ipu.matmul"(%c, %d) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
        %q = tensor.expand_shape %x [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
        return %x, %p : tensor<8xf32>, tensor<4x2xf32>
      }
    }"""
    )
    module = ir.Module.parse(text, make_context())
    codelet = module.body.operations[0]
    # Overhead 50; the generic: 8 x 16 iterations x 2 instructions / 2 lanes = 128; exp: 8 x 4
    # instructions / 2 lanes = 16; the matmul: 64 FMAs / 12 = 6, but (32 + 16) x 4 bytes read
    # at 16 per cycle = 12; the reshape is free.
    assert ops.codelet_cycles(codelet, TINY) == 50 + 128 + 16 + 12


def test_relu_example_profile_by_hand():
    """examples/relu.mlir: a host stream, a ReLU compute set, a gather onto tile 0, streams out.

    ReLU codelet on 64 floats: max(64 / 2 lanes, 256 B / 16 read, 256 B / 8 write) = 32 cycles,
    plus 50: 82. The gather: tile 0 receives 16 x 4 floats = 256 bytes: 64 cycles. Three syncs
    of 40. Memory: @x and @y on every tile (256 B each), @head on tile 0 too."""
    module = ir.Module.parseFile(str(REPO / "examples/relu.mlir"), make_context())
    profile = Simulator(module).profile
    assert [step.kind for step in profile.steps] == ["host", "compute", "exchange", "host"]
    assert [step.cycles for step in profile.steps] == [40, 82 + 40, 64 + 40, 0]
    assert (profile.cycles, profile.compute_cycles, profile.exchange_cycles, profile.sync_cycles) == (266, 82, 64, 120)
    assert profile.seconds == pytest.approx(266 / TINY.clock_hz)
    assert (profile.host_bytes, profile.exchange_bytes) == (2 * 4096 + 256, 256)
    assert profile.host_seconds == pytest.approx(8448 / 64e9)
    assert (profile.supersteps, profile.vertices, profile.edges) == (4, 16, 32)
    assert (profile.peak_memory_per_tile, profile.mean_memory_per_tile) == (768, (768 + 15 * 512) / 16)
    exchange = profile.steps[2]
    assert exchange.bytes_received_per_tile.tolist() == [256] + [0] * 15
    assert exchange.bytes_sent_per_tile.tolist() == [16] * 16
