// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan{memory-fraction=0.1})' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s --check-prefix=FITS
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan{memory-fraction=0.01})' 2>&1 | FileCheck %s --check-prefix=ERR

// Serial splits (lowering/serialize.py): with 10% of a tiny tile's 64 KiB, no cut of these
// ops over 16 tiles fits, so ipu-plan first computes them in the fewest pieces that do, joined
// by tensor.concat, each piece planned on its own. With the default 60% they fit in one pass.
// With 1% not even one column or channel per piece fits: a located error.

module attributes {ipu.target = "tiny"} {
  // Rows and columns both need 7 pieces; the rows' are cheaper once the exchange credits the
  // share of each operand piece already in place (poplin's ExchangeEstimator): simulated on
  // tiny, 26,889 cycles against 29,620 in columns.
  // CHECK-LABEL: func.func @matmul_columns
  // CHECK: tensor.extract_slice %arg0[0, 0] [9, 96] [1, 1]
  // CHECK: "ipu.matmul"(%{{.*}}, %arg1) {{{.*}}ipu.partition = {{.*}} : (tensor<9x96xf32>, tensor<96x128xf32>) -> tensor<9x128xf32>
  // CHECK: tensor.extract_slice %arg0[9, 0] [9, 96] [1, 1]
  // CHECK: tensor.extract_slice %arg0[18, 0] [9, 96] [1, 1]
  // CHECK: tensor.extract_slice %arg0[54, 0] [10, 96] [1, 1]
  // CHECK: %[[JOINED:.*]] = tensor.concat dim(0) %0, %1, %2, %3, %4, %5, %6 {ipu.mapping
  // CHECK-SAME: -> tensor<64x128xf32>
  // CHECK: return %[[JOINED]]
  // FITS-LABEL: func.func @matmul_columns
  // FITS-NOT: tensor.concat
  // FITS: "ipu.matmul"(%arg0, %arg1)
  // ERR: serial-split.mlir:[[# @LINE + 2]]:10: error: 'ipu.matmul' op does not fit in 655 bytes per tile however it is cut, even computed serially in pieces of one row, column, channel or group (see ipu-plan memory-fraction)
  func.func @matmul_columns(%a: tensor<64x96xf32>, %b: tensor<96x128xf32>) -> tensor<64x128xf32> {
    %c = "ipu.matmul"(%a, %b) : (tensor<64x96xf32>, tensor<96x128xf32>) -> tensor<64x128xf32>
    return %c : tensor<64x128xf32>
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @conv_channels
  // CHECK: tensor.extract_slice %arg1[0, 0, 0, 0] [5, 8, 3, 3] [1, 1, 1, 1]
  // CHECK: "ipu.conv"(%arg0, %{{.*}}) {{.*}} : (tensor<4x8x16x16xf32>, tensor<5x8x3x3xf32>) -> tensor<4x5x16x16xf32>
  // CHECK: tensor.extract_slice %arg1[26, 0, 0, 0] [6, 8, 3, 3] [1, 1, 1, 1]
  // CHECK: tensor.concat dim(1) %0, %1, %2, %3, %4, %5 {{.*}} -> tensor<4x32x16x16xf32>
  // FITS-LABEL: func.func @conv_channels
  // FITS-NOT: tensor.concat
  // ERR: serial-split.mlir:[[# @LINE + 2]]:10: error: 'ipu.conv' op does not fit in 655 bytes per tile however it is cut
  func.func @conv_channels(%x: tensor<4x8x16x16xf32>, %w: tensor<32x8x3x3xf32>) -> tensor<4x32x16x16xf32> {
    %y = "ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<4x8x16x16xf32>, tensor<32x8x3x3xf32>) -> tensor<4x32x16x16xf32>
    return %y : tensor<4x32x16x16xf32>
  }
}
