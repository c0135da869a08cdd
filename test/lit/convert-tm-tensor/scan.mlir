// RUN: ipu-opt %s --allow-unregistered-dialect --split-input-file -p 'builtin.module(ipu-convert-tm-tensor)' | FileCheck %s

// torch.cumsum(x, dim=1) as torch-mlir exports it, in generic form: one reduction over an
// extra loop (d2, the summed position k) keeping x[i, k] for k <= j, from the combiner's identity.

// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @cumsum
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<3x8xf32>) outs(%[[INIT]] : tensor<3x8xf32>)
// CHECK: %[[K:.*]] = linalg.index 2 : index
// CHECK: %[[K64:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[J64:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK: %[[KEEP:.*]] = arith.cmpi sle, %[[K64]], %[[J64]] : i64
// CHECK: %[[V:.*]] = arith.select %[[KEEP]], %{{.*}}, %[[ZERO]] : f32
// CHECK: %[[S:.*]] = arith.addf %[[V]], %{{.*}} : f32
// CHECK: linalg.yield %[[S]] : f32
// CHECK-NOT: tm_tensor
func.func @cumsum(%arg0: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = "tensor.empty"() : () -> tensor<3x8xf32>
  %1 = "tensor.empty"() : () -> tensor<3xf32>
  %2:2 = "tm_tensor.scan"(%arg0, %0, %1) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%a: f32, %b: f32):
    %3 = "arith.addf"(%a, %b) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "tm_tensor.yield"(%3) : (f32) -> ()
  }) : (tensor<3x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> (tensor<3x8xf32>, tensor<3xf32>)
  return %2#0 : tensor<3x8xf32>
}

// -----

// An exclusive product scan along dim 0 that also returns its accumulator: the output starts
// from the accumulator's initial value broadcast along the dimension, keeps k < j, and the
// accumulator's final value is the last row.

// CHECK-LABEL: func.func @exclusive
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<3xi32>) outs(%{{.*}} : tensor<4x3xi32>)
// CHECK: %[[SCAN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<4x3xi32>) outs(%[[INIT]] : tensor<4x3xi32>)
// CHECK: arith.cmpi slt
// CHECK: arith.muli
// CHECK: %[[LAST:.*]] = tensor.extract_slice %[[SCAN]][3, 0] [1, 3] [1, 1] : tensor<4x3xi32> to tensor<3xi32>
// CHECK: return %[[SCAN]], %[[LAST]]
func.func @exclusive(%arg0: tensor<4x3xi32>, %arg1: tensor<3xi32>) -> (tensor<4x3xi32>, tensor<3xi32>) {
  %0 = "tensor.empty"() : () -> tensor<4x3xi32>
  %2:2 = "tm_tensor.scan"(%arg0, %0, %arg1) <{dimension = 0 : i64, inclusive = false, operandSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%a: i32, %b: i32):
    %3 = "arith.muli"(%a, %b) : (i32, i32) -> i32
    "tm_tensor.yield"(%3) : (i32) -> ()
  }) : (tensor<4x3xi32>, tensor<4x3xi32>, tensor<3xi32>) -> (tensor<4x3xi32>, tensor<3xi32>)
  return %2#0, %2#1 : tensor<4x3xi32>, tensor<3xi32>
}
