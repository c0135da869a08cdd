// A custom-form TMTensor file that torch-mlir's parser refuses too: its error, at the line and
// column of this file, from every tool.
// RUN: not ipu-run %s --random-inputs 0 2>&1 | FileCheck %s
// RUN: not ipu-opt %s 2>&1 | FileCheck %s

// CHECK: tm-tensor-custom-form-invalid.mlir:[[@LINE+4]]:58: error: use of value '%arg0' expects different type than prior uses: 'tensor<3x7xf32>' vs 'tensor<3x6xf32>' (torch-mlir's parser, reading its TMTensor ops)
func.func @main(%arg0: tensor<3x6xf32>) -> tensor<3x6xf32> {
  %e = tensor.empty() : tensor<3x6xf32>
  %a = tensor.empty() : tensor<3xf32>
  %4:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%arg0 : tensor<3x7xf32>) outs(%e, %a : tensor<3x6xf32>, tensor<3xf32>) {
  ^bb0(%x: f32, %y: f32):
    %5 = arith.addf %x, %y : f32
    tm_tensor.yield %5 : f32
  } -> tensor<3x6xf32>, tensor<3xf32>
  return %4#0 : tensor<3x6xf32>
}
