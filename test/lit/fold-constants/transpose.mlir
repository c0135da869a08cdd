// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fold-constants{max-elements=4})' | FileCheck %s

// torch-mlir's nn.Linear permutes its (out, in) weight with a named linalg.transpose before the
// matmul. A constant's transpose folds, past max-elements too when it is the constant's only use:
// the program then holds the weight once, not also its transposed copy (VGG-16's 25088x4096
// classifier weight twice did not fit gc200).

// CHECK-LABEL: func.func @linear_weight
// CHECK-NOT: linalg.transpose
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00
// CHECK: linalg.matmul ins(%arg0, %[[W]] :
func.func @linear_weight(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%w : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x2xf32>) -> tensor<1x2xf32>
  %y = linalg.matmul ins(%x, %t : tensor<1x3xf32>, tensor<3x2xf32>) outs(%f : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// A constant used elsewhere too keeps its transpose as work, however small: folding would hold
// its bytes twice (GPT-2's 154 MB token embedding is gathered and transposed for the logits).
// Transposes of arguments stay.

// CHECK-LABEL: func.func @shared_weight
// CHECK: linalg.transpose ins(%[[C:.*]] : tensor<2x3xf32>)
// CHECK: return %[[C]],
func.func @shared_weight() -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%w : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  return %w, %t : tensor<2x3xf32>, tensor<3x2xf32>
}

// CHECK-LABEL: func.func @small_shared
// CHECK: linalg.transpose ins(%[[C:.*]] : tensor<1x2xf32>)
// CHECK: return %[[C]],
func.func @small_shared() -> (tensor<1x2xf32>, tensor<2x1xf32>) {
  %w = arith.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %e = tensor.empty() : tensor<2x1xf32>
  %t = linalg.transpose ins(%w : tensor<1x2xf32>) outs(%e : tensor<2x1xf32>) permutation = [1, 0]
  return %w, %t : tensor<1x2xf32>, tensor<2x1xf32>
}

// CHECK-LABEL: func.func @argument
// CHECK: linalg.transpose ins(%arg0
func.func @argument(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  return %t : tensor<3x2xf32>
}
