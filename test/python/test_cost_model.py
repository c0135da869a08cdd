"""Cost model figures against hand computation on the `tiny` target (gc200's per-tile figures:
16 f32 / 64 f16 FMA per cycle, 16 B/cycle read, 8 B/cycle write, 4 B/cycle exchange, sync 40;
16 AMP conv units holding 32 B of weights each, loaded at 8 B/cycle), with the model's
assumptions: 50 cycles per vertex, 64-bit SIMD, and poplibs' AMP 1x1 vertex estimator."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import make_context, ops
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.runtime.superstep import Superstep
from ipu_mlir.target import cost_model, load_target

REPO = Path(__file__).resolve().parents[2]
TINY = load_target("tiny")


def test_matmul_on_poplibs_amp_vertex():
    # 64^3 f32: 8 input chunks of 8 channels x 4 output chunks of 16; 64 rows over 6 workers
    # (11, 11, 11, 11, 10, 10); weight load 16 units x 32 B / 8 B per cycle = 64.
    # Worker with zeroing (first chunk): 46 + (2 + 8 x 11) + 8 x (11 - 3) = 200, x 6 = 1200;
    # without: 46 + 8 x 8 = 110, x 6 = 660 (the fastest's 102 x 6 + 14 is less).
    # Outer loop: 12 + 1 + 7 x (15 + 4 x (19 + 6 + 64 + 660)) + (11 + 4 x (18 + 7 + 64 + 1200))
    # = 26257, plus the vertex's 50.
    assert cost_model.matmul_cycles(1, 64, 64, 64, "f32", TINY) == 50 + 26257
    # f16 into f16 partials: 16 channels per chunk, retention savings (7, 3); 2 x 32^3: rows
    # (6, 6, 5, 5, 5, 5), 2 x 2 chunks. Zeroing worker 37 + 4 x 3 - 7 = 42 -> 252; later
    # 38 + 12 - 7 = 43 -> 258.
    # 6 x (7 + 3 x 3) + 2 x (13 + (15 + 2 x (19 + 6 + 64 + 258)) + (11 + 2 x (18 + 7 + 64 + 252))).
    assert cost_model.matmul_work(2, 32, 32, 32, "f16", TINY, "f16") == 2926
    # Unmarked f16 sums into f32 partials (Poplar's default): 8 conv units, so 4 output chunks
    # and a weight load of 8 x 32 B / 8 B per cycle = 32; the same workers.
    # 6 x (7 + 3 x 3) + 2 x (13 + (15 + 4 x (19 + 6 + 32 + 258)) + (11 + 4 x (18 + 7 + 32 + 252))).
    assert cost_model.matmul_cycles(2, 32, 32, 32, "f16", TINY) == 50 + 5166
    # Sustained share of the 16 FMA/cycle peak grows with the block (docs/ipu-run.md).
    share = [s**3 / 16 / cost_model.matmul_cycles(1, s, s, s, "f32", TINY) for s in (32, 64, 128, 256)]
    assert [round(x, 2) for x in share] == [0.43, 0.62, 0.76, 0.87]


def test_matmul_takes_the_vector_path_or_the_memorys_when_cheaper():
    # k = 1: the AMP would run a chunk of 8 channels for 1 (5180 cycles); the vector path does
    # 4096 FMAs at 2 f32 lanes per cycle (2048), and 64 x 64 x 4 bytes written at 8 per cycle
    # are as slow: 2048.
    assert cost_model.matmul_cycles(1, 64, 64, 1, "f32", TINY) == 50 + 2048
    # f64 and integers have no matrix unit: one lane.
    assert cost_model.matmul_cycles(1, 8, 8, 8, "i32", TINY) == 50 + 512


def test_conv_is_one_1x1_vertex_over_im2col_columns():
    # 8 filters x 16 x 16 outputs over 3 x 3 x 3 taps: 256 positions (43 x 4, 42 x 2), 27 input
    # channels = 4 chunks, 1 output chunk. Zeroing worker 46 + 2 + 8 x 43 + 8 x 40 = 712 -> 4272;
    # later 46 + 320 = 366 -> 2196. 13 + 3 x (15 + 19 + 6 + 64 + 2196) + (11 + 18 + 7 + 64 + 4272).
    assert cost_model.conv_cycles(1, 8, 16, 16, 3, 3, 3, "f32", TINY) == 50 + 11285


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


def test_exchange_as_poplibs_prices_it():
    """poplibs' ExchangeEstimator: ceil(16 bytes / round(16 rate)), data over a super tile's shared
    bus (gc200, tiny: 2 tiles) at twice the rate; 1/holders of a spread piece already in place."""
    gc2 = load_target("gc2")  # no bus sharing assumed on Mk1
    assert cost_model.exchange_cycles(256, TINY, shared_bytes=256) == 32
    assert cost_model.exchange_cycles(256, TINY, shared_bytes=128) == 48  # 128 / 4 + 128 / 8
    assert cost_model.exchange_cycles(257, TINY, shared_bytes=1) == 65  # ceil(16 x 513 / 128)
    assert cost_model.exchange_cycles(256, gc2, shared_bytes=256) == 64
    assert [cost_model.exchanged_bytes(1000, n) for n in (1, 3, 16)] == [0, 667, 938]
    # Whole super tiles of consecutive receivers, or all the receivers; never one alone.
    shares = [cost_model.shares_exchange_bus(c, n, TINY) for c, n in ((2, 2), (4, 8), (3, 3), (3, 6), (1, 1))]
    assert shares == [True, True, True, False, False]
    assert not cost_model.shares_exchange_bus(2, 2, gc2)


def test_memory_latency_beyond_a_barrel_turn_slows_each_worker():
    """A worker issues once per turn of the 6-thread barrel; its next instruction uses what it
    loaded, so a latency above 6 cycles stretches the turn (on gc2 and gc200 it is 6: hidden)."""
    assert cost_model.worker_issue_interval(TINY) == 6
    slow = dataclasses.replace(TINY, memory_latency_cycles=12)
    assert cost_model.worker_issue_interval(slow) == 12
    assert cost_model.elementwise_cycles(1000, 3, "f32", slow) == 50 + 3000  # 1500 at 6 cycles
    assert cost_model.elementwise_cycles(1000, 3, "f32", dataclasses.replace(TINY, memory_latency_cycles=3)) == 50 + 1500


def test_all_gather_receives_over_the_shared_bus():
    """Tiles 0-3 each multicast a 64-byte piece to the others. Tile 0 gets tile 1's piece alone
    in its super tile (0, 1), and tiles 2's and 3's together with tile 1: 64 + 128 / 2 bytes'
    worth, 32 cycles (48 without the bus); each sends 64 (16 cycles); its own piece is local."""
    step = Superstep()
    for source in range(4):
        tiles = np.arange(4)
        step.add_exchange(np.array([source]), tiles, 64, 16, {"op": "ipu.copy"}, np.full(4, source), np.zeros(4, int), 2)
    step.finish(TINY)
    assert step.bytes_received_per_tile[:4].tolist() == [192] * 4
    assert step.shared_bytes_per_tile[:4].tolist() == [128] * 4
    assert step.exchange_cycles == 32
    assert step.local_bytes_per_tile[:4].tolist() == [64] * 4


def test_only_the_same_message_shares_the_bus():
    """Tile 0 sends rows from 0 to tiles 2 and 3 (one message, shared) and rows from 16 to tile
    2 only: the second is not shared, though its source tile is the same."""
    step = Superstep()
    step.add_exchange(np.array([0, 0]), np.array([2, 3, 2]), 64, 16, {"op": "ipu.copy"}, np.zeros(3, int), np.array([0, 0, 16]), 2)
    assert step.shared_bytes_per_tile[2:4].tolist() == [64, 64]
    step.finish(TINY)
    assert step.exchange_cycles == 32  # tile 2: 64 / 4 + 64 / 8 = 24; tile 0 sends 128: 32


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
    # instructions / 2 lanes = 16; the matmul: 64 FMAs on the vector path at 2 lanes = 32 (the
    # AMP vertex would take 455 for its 4 rows), above (32 + 16) x 4 bytes read at 16 per
    # cycle = 12; the reshape is free.
    assert ops.codelet_cycles(codelet, TINY) == 50 + 128 + 16 + 32


def test_relu_example_profile_by_hand():
    """examples/relu.mlir: a host stream, a ReLU compute set, a gather onto tile 0, streams out.

    ReLU codelet on 64 floats: max(64 / 2 lanes, 256 B / 16 read, 256 B / 8 write) = 32 cycles,
    plus 50: 82. The gather: tile 0 receives 15 x 4 floats = 240 bytes: 60 cycles, and copies
    its own 16 bytes on the tile (not exchange): 2 cycles of compute. Three syncs of 40.
    Memory: @x and @y on every tile (256 B each), @head on tile 0 too."""
    module = ir.Module.parseFile(str(REPO / "examples/relu.mlir"), make_context())
    profile = Simulator(module).profile
    assert [step.kind for step in profile.steps] == ["host", "compute", "exchange+compute", "host"]
    assert [step.cycles for step in profile.steps] == [40, 82 + 40, 2 + 60 + 40, 0]
    assert (profile.cycles, profile.compute_cycles, profile.exchange_cycles, profile.sync_cycles) == (264, 84, 60, 120)
    assert profile.seconds == pytest.approx(264 / TINY.clock_hz)
    assert (profile.host_bytes, profile.exchange_bytes) == (2 * 4096 + 256, 240)
    assert profile.host_seconds == pytest.approx(8448 / 64e9)
    assert (profile.supersteps, profile.vertices, profile.edges) == (4, 16, 32)
    assert (profile.peak_memory_per_tile, profile.mean_memory_per_tile) == (768, (768 + 15 * 512) / 16)
    exchange = profile.steps[2]
    assert exchange.bytes_received_per_tile.tolist() == [240] + [0] * 15
    assert exchange.bytes_sent_per_tile.tolist() == [0] + [16] * 15
    assert exchange.compute_cycles_per_tile.tolist() == [2] + [0] * 15
