// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-partials-type{type=f16})' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-partials-type)' | FileCheck %s --check-prefix=MODULE

// Every f16 matmul and convolution gets the partials type; products of other types do not
// (Poplar's partialsType is for half operands). Without the option, nothing is marked.

// CHECK-LABEL: func.func @products
// CHECK: "ipu.matmul"(%arg0, %arg1) {ipu.partials = f16}
// CHECK: "ipu.conv"(%arg2, %arg3) {{{.*}}ipu.partials = f16{{.*}}}
// CHECK: "ipu.matmul"(%arg4, %arg5) :
// MODULE-LABEL: func.func @products
// MODULE: "ipu.matmul"(%arg0, %arg1) : (
// MODULE: "ipu.conv"(%arg2, %arg3) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding
func.func @products(%a: tensor<4x32xf16>, %b: tensor<32x8xf16>, %x: tensor<1x4x6x6xf16>, %w: tensor<2x4x3x3xf16>,
                    %c: tensor<4x32xf32>, %d: tensor<32x8xf32>) -> (tensor<4x8xf32>, tensor<1x2x4x4xf16>, tensor<4x8xf32>) {
  %p = "ipu.matmul"(%a, %b) : (tensor<4x32xf16>, tensor<32x8xf16>) -> tensor<4x8xf32>
  %y = "ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf16>, tensor<2x4x3x3xf16>) -> tensor<1x2x4x4xf16>
  %q = "ipu.matmul"(%c, %d) : (tensor<4x32xf32>, tensor<32x8xf32>) -> tensor<4x8xf32>
  return %p, %y, %q : tensor<4x8xf32>, tensor<1x2x4x4xf16>, tensor<4x8xf32>
}

// -----

// A front end's choice, the module's `ipu.partials` (frontends/torch.py sets it from
// `Options.Precision.setPartialsType`), applies when the pass has no option.

// CHECK-LABEL: func.func @from_module
// CHECK: ipu.partials = f16
// MODULE-LABEL: func.func @from_module
// MODULE: "ipu.matmul"(%arg0, %arg1) {ipu.partials = f32}
module attributes {ipu.partials = f32} {
  func.func @from_module(%a: tensor<4x32xf16>, %b: tensor<32x8xf16>) -> tensor<4x8xf16> {
    %p = "ipu.matmul"(%a, %b) : (tensor<4x32xf16>, tensor<32x8xf16>) -> tensor<4x8xf16>
    return %p : tensor<4x8xf16>
  }
}
