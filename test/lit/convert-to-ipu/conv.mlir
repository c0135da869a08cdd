// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | %mlir-opt-ipu --split-input-file > /dev/null

// CHECK lines match the opening quote of `ipu.conv"` with {{.}}: test_differential.py runs the
// cases whose text has no quoted ipu op as L0 programs against the reference.

// torch-mlir's Conv2d(3, 4, 3, stride=2, padding=1): a zero tensor.pad, and the bias
// broadcast as `outs`. The pad becomes the conv's padding; the bias is added after it.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CHANNEL:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @torch_conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[BIAS:.*]]: tensor<4xf32>)
// CHECK-NOT: tensor.pad
// CHECK: %[[C:.*]] = {{.}}ipu.conv"(%[[X]], %[[W]]) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[CHANNEL]], #[[ID]]]
// CHECK-SAME: ins(%[[C]], %[[BIAS]] : tensor<1x4x4x4xf32>, tensor<4xf32>)
// CHECK: arith.addf
func.func @torch_conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %bias: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %empty = tensor.empty() : tensor<1x4x4x4xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bias : tensor<4xf32>) outs(%empty : tensor<1x4x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}

// -----

// A pad with another value, or of the channels, stays a tensor.pad.

// CHECK-LABEL: func.func @pad_not_folded
// CHECK-DAG: %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK-DAG: %[[Q:.*]] = tensor.pad %arg0 low[0, 1, 0, 0] high[0, 1, 0, 0]
// CHECK: {{.}}ipu.conv"(%[[P]], %arg1) {{.*}}padding = array<i64: 0, 0, 0, 0>
// CHECK: {{.}}ipu.conv"(%[[Q]], %arg2) {{.*}}padding = array<i64: 0, 0, 0, 0>
func.func @pad_not_folded(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %w5: tensor<4x5x3x3xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x6x6xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %ones = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %channels = tensor.pad %x low[0, 1, 0, 0] high[0, 1, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x5x8x8xf32>
  %empty = tensor.empty() : tensor<1x4x8x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a = linalg.conv_2d_nchw_fchw ins(%ones, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%fill : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %empty6 = tensor.empty() : tensor<1x4x6x6xf32>
  %fill6 = linalg.fill ins(%zero : f32) outs(%empty6 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %b = linalg.conv_2d_nchw_fchw ins(%channels, %w5 : tensor<1x5x8x8xf32>, tensor<4x5x3x3xf32>) outs(%fill6 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %a, %b : tensor<1x4x8x8xf32>, tensor<1x4x6x6xf32>
}

// -----

// NHWC / HWCF with strides and dilations: input and filter are transposed to NCHW / FCHW,
// the result back to NHWC.

// CHECK-DAG: #[[TO_NCHW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[TO_FCHW:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3, d1, d0)>
// CHECK-DAG: #[[TO_NHWC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-LABEL: func.func @nhwc_hwcf
// CHECK: %[[X:.*]] = linalg.generic {indexing_maps = [#[[TO_NCHW]], #[[ID]]]
// CHECK-SAME: outs(%{{.*}} : tensor<2x3x11x9xf32>)
// CHECK: %[[W:.*]] = linalg.generic {indexing_maps = [#[[TO_FCHW]], #[[ID]]]
// CHECK-SAME: outs(%{{.*}} : tensor<8x3x3x3xf32>)
// CHECK: %[[C:.*]] = {{.}}ipu.conv"(%[[X]], %[[W]]) {dilations = array<i64: 2, 2>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 3, 2>} : (tensor<2x3x11x9xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x3x3xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[TO_NHWC]], #[[ID]]]
// CHECK-SAME: ins(%[[C]] : tensor<2x8x3x3xf32>) outs(%{{.*}} : tensor<2x3x3x8xf32>)
// CHECK: return %[[Y]]
func.func @nhwc_hwcf(%x: tensor<2x11x9x3xf32>, %w: tensor<3x3x3x8xf32>) -> tensor<2x3x3x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x3x3x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x3x3x8xf32>) -> tensor<2x3x3x8xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<[3, 2]> : tensor<2xi64>} ins(%x, %w : tensor<2x11x9x3xf32>, tensor<3x3x3x8xf32>) outs(%fill : tensor<2x3x3x8xf32>) -> tensor<2x3x3x8xf32>
  return %c : tensor<2x3x3x8xf32>
}

// -----

// TOSA's layout, NHWC / FHWC, with a zero pad of H and W folded.

// CHECK-LABEL: func.func @nhwc_fhwc
// CHECK-NOT: tensor.pad
// CHECK: {{.}}ipu.conv"({{.*}}) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 2, 1, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x6x6xf32>
func.func @nhwc_fhwc(%x: tensor<1x6x6x3xf32>, %w: tensor<5x3x3x3xf32>) -> tensor<1x6x6x5xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 1, 2, 0] high[0, 1, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x3xf32> to tensor<1x8x8x3xf32>
  %empty = tensor.empty() : tensor<1x6x6x5xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32>
  %c = linalg.conv_2d_nhwc_fhwc ins(%padded, %w : tensor<1x8x8x3xf32>, tensor<5x3x3x3xf32>) outs(%fill : tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32>
  return %c : tensor<1x6x6x5xf32>
}

// -----

// Depthwise NCHW: groups = C, the C x KH x KW filter reshaped to C x 1 x KH x KW.

// CHECK-LABEL: func.func @depthwise_nchw
// CHECK-NEXT: %[[W:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2], [3]] output_shape [4, 1, 3, 3] : tensor<4x3x3xf32> into tensor<4x1x3x3xf32>
// CHECK-NEXT: %[[C:.*]] = {{.}}ipu.conv"(%arg0, %[[W]]) {dilations = array<i64: 1, 1>, groups = 4 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT: return %[[C]]
func.func @depthwise_nchw(%x: tensor<1x4x6x6xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x4x4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x6x6xf32>, tensor<4x3x3xf32>) outs(%fill : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}

// -----

// (linalg-fuse-elementwise-ops moves the unit dim of the filter before its transpose.)

// CHECK-LABEL: func.func @depthwise_nhwc
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x7x7x4xf32>) outs(%{{.*}} : tensor<1x4x7x7xf32>)
// CHECK: %[[W:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x1x3x3xf32>)
// CHECK: {{.}}ipu.conv"(%[[X]], %[[W]]) {dilations = array<i64: 1, 1>, groups = 4 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x7x7xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
func.func @depthwise_nhwc(%x: tensor<1x7x7x4xf32>, %w: tensor<3x3x4xf32>) -> tensor<1x3x3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x3x3x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x7x7x4xf32>, tensor<3x3x4xf32>) outs(%fill : tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  return %c : tensor<1x3x3x4xf32>
}

// -----

// Depthwise with a channel multiplier M (TOSA's depthwise_conv2d): C * M filters of one
// channel each, filter f = c * M + m; the result's channels split back into C x M.

// CHECK-LABEL: func.func @depthwise_multiplier
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<3x3x4x2xf32>) outs(%{{.*}} : tensor<4x2x3x3xf32>)
// CHECK: %[[W1:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1], [2], [3]] : tensor<4x2x3x3xf32> into tensor<8x3x3xf32>
// CHECK: %[[W2:.*]] = tensor.expand_shape %[[W1]] {{\[\[}}0, 1], [2], [3]] output_shape [8, 1, 3, 3]
// CHECK: %[[C:.*]] = {{.}}ipu.conv"(%{{.*}}, %[[W2]]) {{.*}}groups = 4 : i64{{.*}} : (tensor<1x4x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
// CHECK: %[[Y:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 4, 2, 4, 4]
// CHECK: linalg.generic {{.*}} ins(%[[Y]] : tensor<1x4x2x4x4xf32>) outs(%{{.*}} : tensor<1x4x4x4x2xf32>)
func.func @depthwise_multiplier(%x: tensor<1x6x6x4xf32>, %w: tensor<3x3x4x2xf32>) -> tensor<1x4x4x4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x4x4x4x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x4x4x2xf32>) -> tensor<1x4x4x4x2xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x6x4xf32>, tensor<3x3x4x2xf32>) outs(%fill : tensor<1x4x4x4x2xf32>) -> tensor<1x4x4x4x2xf32>
  return %c : tensor<1x4x4x4x2xf32>
}

// -----

// Grouped: N x G x C x H x W is N x (G * C) x H x W; the G x F filters, F x G x C x KH x KW,
// become (G * F) x C x KH x KW.

// CHECK-LABEL: func.func @grouped
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x2x3x6x6xf32> into tensor<1x6x6x6xf32>
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<5x2x3x3x3xf32>) outs(%{{.*}} : tensor<2x5x3x3x3xf32>)
// CHECK: %[[W1:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1], [2], [3], [4]] : tensor<2x5x3x3x3xf32> into tensor<10x3x3x3xf32>
// CHECK: %[[C:.*]] = {{.}}ipu.conv"(%[[X]], %[[W1]]) {{.*}}groups = 2 : i64{{.*}} -> tensor<1x10x4x4xf32>
// CHECK: %[[Y:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 5, 4, 4]
// CHECK: return %[[Y]]
func.func @grouped(%x: tensor<1x2x3x6x6xf32>, %w: tensor<5x2x3x3x3xf32>) -> tensor<1x2x5x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x2x5x4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x2x5x4x4xf32>) -> tensor<1x2x5x4x4xf32>
  %c = linalg.conv_2d_ngchw_fgchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x3x6x6xf32>, tensor<5x2x3x3x3xf32>) outs(%fill : tensor<1x2x5x4x4xf32>) -> tensor<1x2x5x4x4xf32>
  return %c : tensor<1x2x5x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @grouped_gf
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0
// CHECK: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2], [3], [4]] : tensor<2x5x3x3x3xf32> into tensor<10x3x3x3xf32>
// CHECK: {{.}}ipu.conv"(%[[X]], %[[W]]) {{.*}}groups = 2 : i64
func.func @grouped_gf(%x: tensor<1x2x3x6x6xf32>, %w: tensor<2x5x3x3x3xf32>) -> tensor<1x2x5x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x2x5x4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x2x5x4x4xf32>) -> tensor<1x2x5x4x4xf32>
  %c = linalg.conv_2d_ngchw_gfchw ins(%x, %w : tensor<1x2x3x6x6xf32>, tensor<2x5x3x3x3xf32>) outs(%fill : tensor<1x2x5x4x4xf32>) -> tensor<1x2x5x4x4xf32>
  return %c : tensor<1x2x5x4x4xf32>
}

// -----

// linalg lets a convolution leave the last rows and columns of its input unread; ipu.conv
// reads them, so its result is cut to the expected size.

// CHECK-LABEL: func.func @unread_rows
// CHECK: %[[C:.*]] = {{.}}ipu.conv"(%arg0, %arg1) {{.*}} -> tensor<1x1x3x3xf32>
// CHECK: tensor.extract_slice %[[C]][0, 0, 0, 0] [1, 1, 2, 2] [1, 1, 1, 1] : tensor<1x1x3x3xf32> to tensor<1x1x2x2xf32>
func.func @unread_rows(%x: tensor<1x1x8x8xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x1x2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) outs(%fill : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %c : tensor<1x1x2x2xf32>
}

// -----

// i8 input and filter, i32 result: read as i8 by the ipu.conv.

// CHECK-LABEL: func.func @conv_i8
// CHECK-NEXT: %[[C:.*]] = {{.}}ipu.conv"(%arg0, %arg1) {{.*}} : (tensor<1x2x5x5xi8>, tensor<3x2x3x3xi8>) -> tensor<1x3x3x3xi32>
// CHECK-NEXT: return %[[C]]
func.func @conv_i8(%x: tensor<1x2x5x5xi8>, %w: tensor<3x2x3x3xi8>) -> tensor<1x3x3x3xi32> {
  %zero = arith.constant 0 : i32
  %empty = tensor.empty() : tensor<1x3x3x3xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%empty : tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xi32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x2x5x5xi8>, tensor<3x2x3x3xi8>) outs(%fill : tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xi32>
  return %c : tensor<1x3x3x3xi32>
}

// -----

// Other convolutions (1-d, 3-d, quantized, ...) are generalized: window indexing maps.

// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d3, d4)>
// CHECK-LABEL: func.func @conv_1d
// CHECK-NOT: ipu.conv
// CHECK: linalg.generic {indexing_maps = [#[[WINDOW]],
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
func.func @conv_1d(%x: tensor<1x8x3xf32>, %w: tensor<3x3x4xf32>) -> tensor<1x6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x6x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x6x4xf32>) -> tensor<1x6x4xf32>
  %c = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>} ins(%x, %w : tensor<1x8x3xf32>, tensor<3x3x4xf32>) outs(%fill : tensor<1x6x4xf32>) -> tensor<1x6x4xf32>
  return %c : tensor<1x6x4xf32>
}

// -----

// torch-mlir's grouped Conv2d(4, 8, 3, padding=1, groups=4): a zero pad, then the channels
// split into groups by expand_shape, then conv_2d_ngchw_gfchw. The pad reaches the ipu.conv
// once the reshapes cancel, and joins its padding there.

// CHECK-LABEL: func.func @torch_grouped
// CHECK-NOT: tensor.pad
// CHECK: {{.}}ipu.conv"(%arg0, %{{.*}}) {dilations = array<i64: 1, 1>, groups = 4 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
func.func @torch_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %empty = tensor.empty() : tensor<1x8x8x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %xg = tensor.expand_shape %padded [[0], [1, 2], [3], [4]] output_shape [1, 4, 1, 10, 10] : tensor<1x4x10x10xf32> into tensor<1x4x1x10x10xf32>
  %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [4, 2, 1, 3, 3] : tensor<8x1x3x3xf32> into tensor<4x2x1x3x3xf32>
  %og = tensor.expand_shape %fill [[0], [1, 2], [3], [4]] output_shape [1, 4, 2, 8, 8] : tensor<1x8x8x8xf32> into tensor<1x4x2x8x8xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%xg, %wg : tensor<1x4x1x10x10xf32>, tensor<4x2x1x3x3xf32>) outs(%og : tensor<1x4x2x8x8xf32>) -> tensor<1x4x2x8x8xf32>
  %y = tensor.collapse_shape %c [[0], [1, 2], [3], [4]] : tensor<1x4x2x8x8xf32> into tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}
