// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan{memory-fraction=0.45})' | FileCheck %s
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan{memory-fraction=0.3})' 2>&1 | FileCheck %s --check-prefix=SMALL

// Every layout ipu-plan chooses keeps an op's pieces within memory-fraction of a tile (here
// 0.45 x 65536 = 29491 bytes on tiny).

// -----

// A transpose cut row-major puts one 4096-element row of the result and the column it reads on
// each of 12 tiles: 32 KB. Over the budget, it is cut by the cost model instead: 12 x 256
// blocks (12 KB read, 12 KB written) on the 16 tiles. Under 0.3 (19660 bytes) no cut fits, and
// the refusal says what the leanest cut puts on a tile.

#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @transpose
  // CHECK: linalg.generic
  // CHECK-SAME: ipu.mapping = {block = array<i64: 12, 256>, kind = "block", tiles = array<i64: 0, 1, 0, 16, 1>}
  // CHECK-SAME: ipu.partition = array<i64: 12, 256>
  // SMALL: budget.mlir:[[# @LINE + 3]]:10: error: 'linalg.generic' op does not fit in 19660 bytes per tile however it is cut: its leanest cut, into 16 parts, holds 24,576 bytes on a tile (12,288 of input 0 tensor<4096x12xf32>, 12,288 of the result tensor<12x4096xf32>) (see ipu-plan memory-fraction)
  func.func @transpose(%x: tensor<4096x12xf32>) -> tensor<12x4096xf32> {
    %e = tensor.empty() : tensor<12x4096xf32>
    %0 = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4096x12xf32>) outs(%e : tensor<12x4096xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    } -> tensor<12x4096xf32>
    return %0 : tensor<12x4096xf32>
  }
}
