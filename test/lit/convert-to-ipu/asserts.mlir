// RUN: ipu-opt %s -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-convert-to-ipu{drop-asserts})' | FileCheck %s --check-prefix=DROP

// torch-mlir guards divisions with cf.assert (here BatchNorm's 1 / sqrt(var + eps)). On a
// value known only at run time it stays in the generic's body, a check the simulator makes on
// every element; drop-asserts erases it. (On constants, ipu-fold-constants decides it first.)

// CHECK-LABEL: func.func @reciprocal
// CHECK: linalg.generic
// CHECK: cf.assert %{{.*}}, "unimplemented: tensor with zero element"
// CHECK: arith.divf
// DROP-LABEL: func.func @reciprocal
// DROP-NOT: cf.assert
// DROP: arith.divf
func.func @reciprocal(%x: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nz = arith.cmpf one, %in, %zero : f32
    cf.assert %nz, "unimplemented: tensor with zero element"
    %q = arith.divf %one, %in : f32
    linalg.yield %q : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
