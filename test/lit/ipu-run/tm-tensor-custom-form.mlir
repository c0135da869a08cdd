// torch-mlir's custom form of its TMTensor ops (what `str()` of torch-mlir's output writes) does
// not parse with the MLIR bindings, which do not know the dialect: torch-mlir's own parser
// (`torch-mlir-opt`, in its wheel) prints the file in generic form, locations kept, and the
// tools read that (dialects/tm_tensor.py). Run, compiled and checked like the generic form.
// RUN: ipu-run %s --random-inputs 0 --check | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-convert-tm-tensor)' | FileCheck %s --check-prefix=OPT
// RUN: ipu-compile %s -o %t.mlir && FileCheck %s --check-prefix=COMPILE < %t.mlir

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK: check output 1: max abs error {{.*}}: ok
// OPT-LABEL: func.func @main
// OPT-NOT: tm_tensor
// OPT: linalg.generic
// COMPILE: ipu.program
func.func @main(%arg0: tensor<3x6xf32>) -> (tensor<3x6xf32>, tensor<3x6xf32>) {
  %e = tensor.empty() : tensor<3x6xf32>
  %a = tensor.empty() : tensor<3xf32>
  %4:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%arg0 : tensor<3x6xf32>) outs(%e, %a : tensor<3x6xf32>, tensor<3xf32>) {
  ^bb0(%x: f32, %y: f32):
    %5 = arith.addf %x, %y : f32
    tm_tensor.yield %5 : f32
  } -> tensor<3x6xf32>, tensor<3xf32>
  %i = tensor.empty() : tensor<3x6xi64>
  %s:2 = tm_tensor.sort dimension(1) outs(%arg0, %i : tensor<3x6xf32>, tensor<3x6xi64>) {
  ^bb0(%l: f32, %r: f32, %li: i64, %ri: i64):
    %c = arith.cmpf olt, %l, %r : f32
    tm_tensor.yield %c : i1
  } -> tensor<3x6xf32>, tensor<3x6xi64>
  return %4#0, %s#0 : tensor<3x6xf32>, tensor<3x6xf32>
}
