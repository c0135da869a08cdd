// RUN: ipu-opt %s -p 'builtin.module(ipu-plan,ipu-schedule,ipu-fuse-compute-sets,ipu-verify)' | FileCheck %s

// A matmul whose k the plan cuts across tiny's tiles, then a bias add: the combine of the
// partial sums and the add fuse into one codelet, still marked `ipu.combine` (its first
// argument the partials, read by the sum alone), now with `epilogue = true`; the simulator
// sums the partials where the products left them on that mark
// (runtime/partials_in_place.py).
module attributes {ipu.target = "tiny"} {
  func.func @matmul_bias(%a: tensor<8x1024xf32>, %b: tensor<1024x8xf32>, %bias: tensor<8xf32>) -> tensor<8x8xf32> {
    %r = "ipu.matmul"(%a, %b) : (tensor<8x1024xf32>, tensor<1024x8xf32>) -> tensor<8x8xf32>
    %e = tensor.empty() : tensor<8x8xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
        iterator_types = ["parallel", "parallel"]} ins(%r, %bias : tensor<8x8xf32>, tensor<8xf32>) outs(%e : tensor<8x8xf32>) {
    ^bb0(%x: f32, %c: f32, %o: f32):
      %s = arith.addf %x, %c : f32
      linalg.yield %s : f32
    } -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}

// CHECK-LABEL: func.func @matmul_bias(
// CHECK: "ipu.execute"() {compute_set = @matmul_cs0}
// CHECK: "ipu.copy"() {dest = @matmul_partials0
// CHECK: "ipu.execute"() {compute_set = @matmul_combine_cs0_generic_cs0}
// CHECK-LABEL: func.func private @matmul_combine0_generic_v0(%arg0: tensor<16x1x8xf32>, %arg1: tensor<8xf32>) -> tensor<1x8xf32> attributes {ipu.codelet, ipu.combine = {combiner = "arith.addf", epilogue = true, init = false}}
// CHECK-NEXT: arith.constant 0.000000e+00 : f32
// CHECK-NEXT: tensor.empty() : tensor<1x8xf32>
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%arg0 : tensor<16x1x8xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK-NOT: %arg0
// CHECK: return
