// RUN: ipu-opt %s -p 'builtin.module(ipu-convert-to-ipu,canonicalize,cse,ipu-plan)' | FileCheck %s

// A device variable is resident for the whole program, as a constant weight is: when its first
// user's layout would pile it onto few tiles (ResNet's stem filter: 3 filters of 3x7x7 on each
// of 22 tiles, 441 floats a tile), ipu-plan cuts it afresh (98 floats on each of 128 tiles),
// and each run exchanges it to the convolution. Without this, ResNet-50's parameters as
// variables peaked at 242,592 bytes a tile on gc200 (124,564 as constants), 125,972 with it.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<64x3x7x7xf32> {ipu.mapping = {block = array<i64: 1, 2, 7, 7>, kind = "block", tiles = array<i64: 0, 64, 2, 2, 1, 1, 1, 1, 1>}, ipu.resident = "param:conv1.weight"}

module attributes {ipu.target = "gc200"} {
  func.func @main(%w: tensor<64x3x7x7xf32> {ipu.resident = "param:conv1.weight"}, %x: tensor<1x3x32x32xf32>) -> tensor<1x64x16x16xf32> {
    %zero = arith.constant 0.0 : f32
    %p = tensor.pad %x low[0, 0, 3, 3] high[0, 0, 3, 3] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<1x3x32x32xf32> to tensor<1x3x38x38xf32>
    %e = tensor.empty() : tensor<1x64x16x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32>
    %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
        ins(%p, %w : tensor<1x3x38x38xf32>, tensor<64x3x7x7xf32>) outs(%z : tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32>
    return %y : tensor<1x64x16x16xf32>
  }
}
