// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan{memory-fraction=0.1})' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s --check-prefix=FITS
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan{memory-fraction=0.01})' 2>&1 | FileCheck %s --check-prefix=ERR

// Serial splits of grouped convolutions (lowering/serialize.py): with one image there is no
// batch to cut, so the pieces are whole groups: each slices its groups' input channels and
// filters and is a convolution of fewer groups (of one group: an ordinary convolution).
// With 1% of a tiny tile not even one group per piece fits: a located error.

module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @depthwise
  // CHECK: %[[X0:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 8, 32, 32] [1, 1, 1, 1]
  // CHECK: %[[W0:.*]] = tensor.extract_slice %arg1[0, 0, 0, 0] [8, 1, 3, 3] [1, 1, 1, 1]
  // CHECK: "ipu.conv"(%[[X0]], %[[W0]]) {dilations = array<i64: 1, 1>, groups = 8 : i64, {{.*}} : (tensor<1x8x32x32xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x32x32xf32>
  // CHECK: tensor.extract_slice %arg0[0, 24, 0, 0] [1, 8, 32, 32] [1, 1, 1, 1]
  // CHECK: tensor.extract_slice %arg1[24, 0, 0, 0] [8, 1, 3, 3] [1, 1, 1, 1]
  // CHECK: %[[JOINED:.*]] = tensor.concat dim(1) %0, %1, %2, %3 {ipu.mapping
  // CHECK-SAME: -> tensor<1x32x32x32xf32>
  // CHECK: return %[[JOINED]]
  // FITS-LABEL: func.func @depthwise
  // FITS-NOT: tensor.concat
  // FITS: "ipu.conv"(%arg0, %arg1) {{.*}}groups = 32 : i64
  // ERR: serial-split-groups.mlir:[[# @LINE + 2]]:10: error: 'ipu.conv' op does not fit in 655 bytes per tile however it is cut, even computed serially
  func.func @depthwise(%x: tensor<1x32x32x32xf32>, %w: tensor<32x1x3x3xf32>) -> tensor<1x32x32x32xf32> {
    %y = "ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 32 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x32x32x32xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x32x32xf32>
    return %y : tensor<1x32x32x32xf32>
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @grouped
  // CHECK: %[[X0:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 4, 32, 32] [1, 1, 1, 1]
  // CHECK: %[[W0:.*]] = tensor.extract_slice %arg1[0, 0, 0, 0] [8, 4, 3, 3] [1, 1, 1, 1]
  // CHECK: "ipu.conv"(%[[X0]], %[[W0]]) {dilations = array<i64: 1, 1>, groups = 1 : i64, {{.*}} : (tensor<1x4x32x32xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x32x32xf32>
  // CHECK: tensor.extract_slice %arg0[0, 12, 0, 0] [1, 4, 32, 32] [1, 1, 1, 1]
  // CHECK: tensor.extract_slice %arg1[24, 0, 0, 0] [8, 4, 3, 3] [1, 1, 1, 1]
  // CHECK: tensor.concat dim(1) %0, %1, %2, %3 {{.*}} -> tensor<1x32x32x32xf32>
  // FITS-LABEL: func.func @grouped
  // FITS-NOT: tensor.concat
  // FITS: "ipu.conv"(%arg0, %arg1) {{.*}}groups = 4 : i64
  // ERR: serial-split-groups.mlir:[[# @LINE + 2]]:10: error: 'ipu.conv' op does not fit in 655 bytes per tile however it is cut, even computed serially
  func.func @grouped(%x: tensor<1x16x32x32xf32>, %w: tensor<32x4x3x3xf32>) -> tensor<1x32x32x32xf32> {
    %y = "ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 4 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>, tensor<32x4x3x3xf32>) -> tensor<1x32x32x32xf32>
    return %y : tensor<1x32x32x32xf32>
  }
}
