// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// Pads by amounts that are SSA constants (upstream's tosa-to-linalg writes tosa.pad so, and
// Linalg/CPU/test-padtensor.mlir too; canonicalize leaves them) become static pads.

// CHECK-LABEL: func @pad_by_constants
// CHECK: tensor.pad %{{.*}} low[0, 2, 0] high[0, 0, 2]
// CHECK: } : tensor<1x2x3xf32> to tensor<1x4x5xf32>
func.func @pad_by_constants(%x: tensor<1x2x3xf32>) -> tensor<1x4x5xf32> {
  %offset = arith.constant 2 : index
  %cst = arith.constant 2.3 : f32
  %c0 = arith.constant 0 : index
  %out = tensor.pad %x low[%c0, %offset, %c0] high[%c0, %c0, %offset] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %cst : f32
  } : tensor<1x2x3xf32> to tensor<1x4x5xf32>
  return %out : tensor<1x4x5xf32>
}

// -----

// The result type made static too, and cast back to the dynamic one its users read.

// CHECK-LABEL: func @dynamic_result
// CHECK: tensor.pad %{{.*}} low[1, 0] high[2, 1]
// CHECK: } : tensor<3x4xf32> to tensor<6x5xf32>
func.func @dynamic_result(%x: tensor<3x4xf32>) -> tensor<6x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %v = arith.constant 3.5 : f32
  %p = tensor.pad %x low[%c1, %c0] high[%c2, %c1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<3x4xf32> to tensor<?x5xf32>
  %r = tensor.cast %p : tensor<?x5xf32> to tensor<6x5xf32>
  return %r : tensor<6x5xf32>
}
