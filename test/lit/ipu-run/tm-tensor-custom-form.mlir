// torch-mlir's custom form of its TMTensor ops does not parse with the MLIR bindings (they do
// not know the dialect): the error names the op and the ATen op behind it, at its line, and
// says how to print it so that it does (generic form, as the torch front end does).
// RUN: not ipu-run %s --random-inputs 0 2>&1 | FileCheck %s
// RUN: not ipu-compile %s 2>&1 | FileCheck %s --check-prefix=COMPILE

// CHECK: tm-tensor-custom-form.mlir:[[@LINE+5]]:10: error: 'tm_tensor.scan' is written in the custom form of torch-mlir's TMTensor, emitted for aten.cumsum, which the MLIR bindings cannot parse: print the module in generic form
// COMPILE: tm-tensor-custom-form.mlir:[[@LINE+4]]:10: error: Dialect `tm_tensor' not found for custom op 'tm_tensor.scan'
func.func @main(%arg0: tensor<3x6xf32>) -> tensor<3x6xf32> {
  %e = tensor.empty() : tensor<3x6xf32>
  %a = tensor.empty() : tensor<3xf32>
  %4:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%arg0 : tensor<3x6xf32>) outs(%e, %a : tensor<3x6xf32>, tensor<3xf32>) {
  ^bb0(%x: f32, %y: f32):
    %5 = arith.addf %x, %y : f32
    tm_tensor.yield %5 : f32
  } -> tensor<3x6xf32>, tensor<3xf32>
  return %4#0 : tensor<3x6xf32>
}
