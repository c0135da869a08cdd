// linalg.pack and linalg.unpack, lowered by upstream's transform.structured.lower_pack /
// lower_unpack (dialects/packing.py) in ipu-convert-to-ipu and in the ExecutionEngine
// reference alike: tiles that do not divide the dims (padded with the padding value), an
// outer_dims_perm, and the round trip.
// RUN: ipu-run %s --entry pack --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --entry unpack --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --entry round_trip --random-inputs 0 --check --target gc2 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s --check-prefix=L1

// CHECK: check output 0: max abs error 0, max rel error 0 (rtol 0.0001): ok
// L1-NOT: linalg.pack
// L1-NOT: linalg.unpack
func.func @pack(%x: tensor<10x13xf32>) -> tensor<4x5x4x2xf32> {
  %pad = arith.constant 7.0 : f32
  %e = tensor.empty() : tensor<4x5x4x2xf32>
  %p = linalg.pack %x padding_value(%pad : f32) outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [4, 2] into %e
      : tensor<10x13xf32> -> tensor<4x5x4x2xf32>
  return %p : tensor<4x5x4x2xf32>
}

func.func @unpack(%p: tensor<3x4x4x4xf32>) -> tensor<10x15xf32> {
  %e = tensor.empty() : tensor<10x15xf32>
  %u = linalg.unpack %p inner_dims_pos = [0, 1] inner_tiles = [4, 4] into %e : tensor<3x4x4x4xf32> -> tensor<10x15xf32>
  return %u : tensor<10x15xf32>
}

func.func @round_trip(%x: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %e = tensor.empty() : tensor<4x6x16x16xf32>
  %p = linalg.pack %x inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %e : tensor<64x96xf32> -> tensor<4x6x16x16xf32>
  %two = arith.constant 2.0 : f32
  %scaled = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                            iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p : tensor<4x6x16x16xf32>) outs(%e : tensor<4x6x16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %two : f32
    linalg.yield %m : f32
  } -> tensor<4x6x16x16xf32>
  %e2 = tensor.empty() : tensor<64x96xf32>
  %u = linalg.unpack %scaled inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %e2 : tensor<4x6x16x16xf32> -> tensor<64x96xf32>
  return %u : tensor<64x96xf32>
}
