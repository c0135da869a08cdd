// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// CHECK lines match the opening quote of `ipu.matmul"` with {{.}}: test_differential.py runs the
// cases whose text has no quoted ipu op as L0 programs against the reference. The cases with
// resources are explicit modules, so that the resources stay outside the module.

// Dense and splat constants: a dense operand stays a tensor constant, a splat one becomes a
// scalar constant in the body.

// CHECK-LABEL: func.func @dense_and_splat
// CHECK-DAG: %[[D:.*]] = arith.constant dense<[1, -2, 3, -4]> : tensor<4xi32>
// CHECK-DAG: %[[S:.*]] = arith.constant 5 : i32
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %[[D]] : tensor<4xi32>, tensor<4xi32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[M:.*]] = arith.muli %[[X]], %[[Y]] : i32
// CHECK-NEXT: arith.addi %[[M]], %[[S]] : i32
func.func @dense_and_splat(%x: tensor<4xi32>) -> tensor<4xi32> {
  %d = arith.constant dense<[1, -2, 3, -4]> : tensor<4xi32>
  %s = arith.constant dense<5> : tensor<4xi32>
  %m = arith.muli %x, %d : tensor<4xi32>
  %a = arith.addi %m, %s : tensor<4xi32>
  return %a : tensor<4xi32>
}

// -----

module {
  // Weights as torch-mlir imports them: dense_resource blobs, kept as they are (the blobs
  // stay in the module's resources). The bias blob is added after the matmul.

  // CHECK-LABEL: func.func @resource_weights
  // CHECK-DAG: %[[W:.*]] = arith.constant dense_resource<weight_4x2> : tensor<4x2xf32>
  // CHECK-DAG: %[[B:.*]] = arith.constant dense_resource<bias_2> : tensor<2xf32>
  // CHECK: %[[P:.*]] = {{.}}ipu.matmul"(%arg0, %[[W]]) : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  // CHECK: linalg.generic
  // CHECK-SAME: ins(%[[P]], %[[B]] : tensor<3x2xf32>, tensor<2xf32>)
  // CHECK: dialect_resources
  // CHECK-NEXT: builtin
  // CHECK-DAG: weight_4x2: "0x040000000000803F0000004000004040000080400000A0400000C0400000E04000000041"
  // CHECK-DAG: bias_2: "0x040000000000003F000000BF"
  func.func @resource_weights(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
    %w = arith.constant dense_resource<weight_4x2> : tensor<4x2xf32>
    %bias = arith.constant dense_resource<bias_2> : tensor<2xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3x2xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
    %m = linalg.matmul ins(%x, %w : tensor<3x4xf32>, tensor<4x2xf32>) outs(%f : tensor<3x2xf32>) -> tensor<3x2xf32>
    %b = linalg.broadcast ins(%bias : tensor<2xf32>) outs(%e : tensor<3x2xf32>) dimensions = [0]
    %y = linalg.add ins(%m, %b : tensor<3x2xf32>, tensor<3x2xf32>) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
    return %y : tensor<3x2xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      weight_4x2: "0x040000000000803F0000004000004040000080400000A0400000C0400000E04000000041",
      bias_2: "0x040000000000003F000000BF"
    }
  }
#-}

// -----

module {
  // i8 blob weights of a convolution with i32 accumulation.

  // CHECK-LABEL: func.func @resource_conv_i8
  // CHECK: %[[W:.*]] = arith.constant dense_resource<filter_i8> : tensor<2x1x2x2xi8>
  // CHECK: {{.}}ipu.conv"(%arg0, %[[W]]) {{.*}} : (tensor<1x1x3x3xi8>, tensor<2x1x2x2xi8>) -> tensor<1x2x2x2xi32>
  func.func @resource_conv_i8(%x: tensor<1x1x3x3xi8>) -> tensor<1x2x2x2xi32> {
    %w = arith.constant dense_resource<filter_i8> : tensor<2x1x2x2xi8>
    %zero = arith.constant 0 : i32
    %e = tensor.empty() : tensor<1x2x2x2xi32>
    %f = linalg.fill ins(%zero : i32) outs(%e : tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xi32>
    %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xi8>, tensor<2x1x2x2xi8>) outs(%f : tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xi32>
    return %c : tensor<1x2x2x2xi32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      filter_i8: "0x0100000001FF02FE03FD04FC"
    }
  }
#-}

// -----

// A constant that is the whole result stays a constant.

// CHECK-LABEL: func.func @constant_result
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<{{\[}}true, false]> : tensor<2xi1>
// CHECK-NEXT: return %[[C]]
func.func @constant_result() -> tensor<2xi1> {
  %c = arith.constant dense<[true, false]> : tensor<2xi1>
  return %c : tensor<2xi1>
}
