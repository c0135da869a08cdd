// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fold-batch-norm)' | FileCheck %s

// BatchNorm as torch-mlir exports it in eval mode (after ipu-fold-constants): four generics on
// the convolution's result, each with one per-channel constant, then ReLU6's two selects.
// s = inv_std * gamma = [2, 0.5], t = beta - mean * s = [-1.5, -2]: the filter [3, -4] becomes
// [6, -2], the zero fill a broadcast of t, and the four generics go; ReLU6 reads the conv.

// CHECK-LABEL: func.func @nchw
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[\[\[\[}}6.000000e+00]]], {{\[\[\[}}-2.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[T:.*]] = arith.constant dense<[-1.500000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK: %[[B:.*]] = linalg.broadcast ins(%[[T]] : tensor<2xf32>) outs(%{{.*}} : tensor<1x2x3x3xf32>) dimensions = [0, 2, 3]
// CHECK: %[[Y:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %[[W]] : tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) outs(%[[B]] : tensor<1x2x3x3xf32>)
// CHECK-NOT: arith.subf
// CHECK-NOT: arith.mulf
// CHECK-NOT: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %{{.*}} : tensor<1x2x3x3xf32>, tensor<f32>)
// CHECK: arith.cmpf ogt
// CHECK: linalg.generic
// CHECK: arith.cmpf olt
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#sc = affine_map<(d0, d1, d2, d3) -> ()>
func.func @nchw(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[[[3.0]]], [[[-4.0]]]]> : tensor<2x1x1x1xf32>
  %mean = arith.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %inv = arith.constant dense<[[[0.5]], [[0.25]]]> : tensor<2x1x1xf32>
  %gamma = arith.constant dense<[[[4.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %beta = arith.constant dense<[[[0.5]], [[-1.0]]]> : tensor<2x1x1xf32>
  %lo = arith.constant dense<0.0> : tensor<f32>
  %hi = arith.constant dense<6.0> : tensor<f32>
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %mean : tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x3x3xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %r = arith.subf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x2x3x3xf32>
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %inv : tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x3x3xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %r = arith.mulf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x2x3x3xf32>
  %2 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %gamma : tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x3x3xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %r = arith.mulf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x2x3x3xf32>
  %3 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %beta : tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x3x3xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %r = arith.addf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x2x3x3xf32>
  %4 = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3, %lo : tensor<1x2x3x3xf32>, tensor<f32>) outs(%e : tensor<1x2x3x3xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %p = arith.cmpf ogt, %in, %c : f32
    %r = arith.select %p, %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x2x3x3xf32>
  %5 = linalg.generic {indexing_maps = [#sc, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi, %4 : tensor<f32>, tensor<1x2x3x3xf32>) outs(%e : tensor<1x2x3x3xf32>) {
  ^bb0(%c: f32, %in: f32, %out: f32):
    %p = arith.cmpf olt, %c, %in : f32
    %r = arith.select %p, %c, %in : f32
    linalg.yield %r : f32
  } -> tensor<1x2x3x3xf32>
  return %5 : tensor<1x2x3x3xf32>
}

// -----

// BatchNorm and ReLU6 in one generic (as linalg-fuse-elementwise-ops leaves them): the affine
// part goes, the selects stay and read the block argument; the depthwise convolution's bias
// [1, -1] (its outs, a broadcast) becomes b * s + t = [1 * 2 - 1.5, -1 * 0.5 - 2] = [0.5, -2.5].
// The filter of 2x2 kernels scales per channel: [[1, 2], [3, 4]] * 2, [[-2, 4], [6, 8]] * 0.5.

// CHECK-LABEL: func.func @depthwise_bias_relu6
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[\[\[}}2.000000e+00, 4.000000e+00], [6.000000e+00, 8.000000e+00]], {{\[\[}}-1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]]> : tensor<2x2x2xf32>
// CHECK-DAG: %[[T:.*]] = arith.constant dense<[5.000000e-01, -2.500000e+00]> : tensor<2xf32>
// CHECK: %[[B:.*]] = linalg.broadcast ins(%[[T]] : tensor<2xf32>)
// CHECK: %[[Y:.*]] = linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%arg0, %[[W]] : {{.*}}) outs(%[[B]] :
// CHECK: linalg.generic {{.*}} ins(%[[Y]],
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: f32,
// CHECK-NEXT: %[[P:.*]] = arith.cmpf ogt, %[[IN]], %{{.*}} : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[P]], %[[IN]], %{{.*}} : f32
// CHECK-NEXT: arith.cmpf olt
// CHECK-NEXT: arith.select
// CHECK-NEXT: linalg.yield
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @depthwise_bias_relu6(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %w = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[-2.0, 4.0], [6.0, 8.0]]]> : tensor<2x2x2xf32>
  %bias = arith.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %mean = arith.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %inv = arith.constant dense<[[[0.5]], [[0.25]]]> : tensor<2x1x1xf32>
  %gamma = arith.constant dense<[[[4.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %beta = arith.constant dense<[[[0.5]], [[-1.0]]]> : tensor<2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %b = linalg.broadcast ins(%bias : tensor<2xf32>) outs(%e : tensor<1x2x2x2xf32>) dimensions = [0, 2, 3]
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x3x3xf32>, tensor<2x2x2xf32>) outs(%b : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #ch, #ch, #ch, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %mean, %inv, %gamma, %beta : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %m: f32, %is: f32, %g: f32, %be: f32, %out: f32):
    %0 = arith.subf %in, %m : f32
    %1 = arith.mulf %0, %is : f32
    %2 = arith.mulf %1, %g : f32
    %3 = arith.addf %2, %be : f32
    %4 = arith.cmpf ogt, %3, %zero : f32
    %5 = arith.select %4, %3, %zero : f32
    %6 = arith.cmpf olt, %six, %5 : f32
    %7 = arith.select %6, %six, %5 : f32
    linalg.yield %7 : f32
  } -> tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}

// -----

// A grouped convolution as torch-mlir writes it (groups = 2, 1 input and 2 output channels per
// group): channels expanded into (g, c) and (g, f), the result collapsed back; the BatchNorm's
// channel c = 2 g + f. Its scale [1, 2, 3, 4] and shift (scalar constants: x * s - 1 and
// 0.5 - y, a subtraction from a constant, the divisor 2 a scalar too) compose through the reshape:
// ((x * s - 1) / 2 with 0.5 - that) = -s/2 x + 1, so the filter [[1], [1]], [[1], [1]] becomes
// -0.5, -1, -1.5, -2, the bias 1 everywhere, a splat broadcast from a (g, f) = 2x2 constant.

// CHECK-LABEL: func.func @grouped
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[\[\[\[\[}}-5.000000e-01]]], {{\[\[\[}}-1.000000e+00]]]], {{\[\[\[\[}}-1.500000e+00]]], {{\[\[\[}}-2.000000e+00]]]]]> : tensor<2x2x1x1x1xf32>
// CHECK-DAG: %[[T:.*]] = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
// CHECK: %[[B:.*]] = linalg.broadcast ins(%[[T]] : tensor<2x2xf32>) outs(%{{.*}} : tensor<1x2x2x2x2xf32>) dimensions = [0, 3, 4]
// CHECK: %[[Y:.*]] = linalg.conv_2d_ngchw_gfchw {{.*}} ins(%{{.*}}, %[[W]] : {{.*}}) outs(%[[B]] :
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[Y]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[C]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @grouped(%x: tensor<1x2x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %half = arith.constant 0.5 : f32
  %w = arith.constant dense<1.0> : tensor<2x2x1x1x1xf32>
  %s = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %xg = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 2, 2] : tensor<1x2x2x2xf32> into tensor<1x2x1x2x2xf32>
  %e = tensor.empty() : tensor<1x2x2x2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2x2xf32>) -> tensor<1x2x2x2x2xf32>
  %y = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%xg, %w : tensor<1x2x1x2x2xf32>, tensor<2x2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2x2xf32>) -> tensor<1x2x2x2x2xf32>
  %c = tensor.collapse_shape %y [[0], [1, 2], [3], [4]] : tensor<1x2x2x2x2xf32> into tensor<1x4x2x2xf32>
  %e4 = tensor.empty() : tensor<1x4x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s : tensor<1x4x2x2xf32>, tensor<4xf32>) outs(%e4 : tensor<1x4x2x2xf32>) {
  ^bb0(%in: f32, %sc: f32, %out: f32):
    %a = arith.mulf %in, %sc : f32
    %b = arith.subf %a, %one : f32
    %d = arith.divf %b, %two : f32
    %r = arith.subf %half, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// -----

// Channels last (conv_2d_nhwc_hwcf: the filter's last dimension is f), the BatchNorm generic
// iterating the loops in another order than the tensor (its maps permute them): the shift
// needs no bias op of its own beyond the broadcast; negf and a constant computed in the body
// (2 * 2, as the program would) fold too: -(x * 4) + 1.

// CHECK-LABEL: func.func @nhwc
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[\[\[\[}}-4.000000e+00, -8.000000e+00]]]]> : tensor<1x1x1x2xf32>
// CHECK-DAG: %[[T:.*]] = arith.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK: linalg.broadcast ins(%[[T]] : tensor<2xf32>) outs(%{{.*}} : tensor<1x3x3x2xf32>) dimensions = [0, 1, 2]
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%arg0, %[[W]]
// CHECK-NOT: linalg.generic
#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @nhwc(%x: tensor<1x3x3x1xf32>) -> tensor<1x3x3x2xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant dense<1.0> : tensor<2xf32>
  %two = arith.constant 2.0 : f32
  %w = arith.constant dense<[[[[1.0, 2.0]]]]> : tensor<1x1x1x2xf32>
  %e = tensor.empty() : tensor<1x3x3x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x3x1xf32>, tensor<1x1x1x2xf32>) outs(%fill : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  %0 = linalg.generic {indexing_maps = [#perm, #ch, #perm], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %one : tensor<1x3x3x2xf32>, tensor<2xf32>) outs(%e : tensor<1x3x3x2xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %four = arith.mulf %two, %two : f32
    %a = arith.mulf %four, %in : f32
    %n = arith.negf %a : f32
    %r = arith.addf %n, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x3x3x2xf32>
  return %0 : tensor<1x3x3x2xf32>
}

// -----

// Filter and output list group and filter in different orders (fgchw against ngfpq): the
// scale s[2 g + f] = [1, 2, 3, 4] of the collapsed channels is transposed onto the filter:
// W[f, g] = [[1, 2], [11, 12]] becomes [[1 * 1, 2 * 3], [11 * 2, 12 * 4]].

// CHECK-LABEL: func.func @grouped_fg
// CHECK: arith.constant dense<{{\[\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}6.000000e+00]]]], {{\[\[\[\[}}2.200000e+01]]], {{\[\[\[}}4.800000e+01]]]]]> : tensor<2x2x1x1x1xf32>
// CHECK: linalg.conv_2d_ngchw_fgchw
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @grouped_fg(%x: tensor<1x2x1x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[[[[1.0]]], [[[2.0]]]], [[[[11.0]]], [[[12.0]]]]]> : tensor<2x2x1x1x1xf32>
  %s = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<1x2x2x2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2x2xf32>) -> tensor<1x2x2x2x2xf32>
  %y = linalg.conv_2d_ngchw_fgchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x1x2x2xf32>, tensor<2x2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2x2xf32>) -> tensor<1x2x2x2x2xf32>
  %c = tensor.collapse_shape %y [[0], [1, 2], [3], [4]] : tensor<1x2x2x2x2xf32> into tensor<1x4x2x2xf32>
  %e4 = tensor.empty() : tensor<1x4x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s : tensor<1x4x2x2xf32>, tensor<4xf32>) outs(%e4 : tensor<1x4x2x2xf32>) {
  ^bb0(%in: f32, %sc: f32, %out: f32):
    %a = arith.mulf %in, %sc : f32
    linalg.yield %a : f32
  } -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// -----

// A depthwise convolution with a channel multiplier, channels last (hwcm: output n, h, w, g, f),
// collapsed to n, h, w, (g f): the scale [1, 2, 3, 4] of channel 2 g + f multiplies the
// filter's (g, f) = [[1, 1], [1, 1]] in that order.

// CHECK-LABEL: func.func @depthwise_multiplier
// CHECK: arith.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK: linalg.depthwise_conv_2d_nhwc_hwcm
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#last = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @depthwise_multiplier(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<1.0> : tensor<1x1x2x2xf32>
  %s = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<1x2x2x2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2x2xf32>) -> tensor<1x2x2x2x2xf32>
  %y = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x2x2xf32>, tensor<1x1x2x2xf32>) outs(%fill : tensor<1x2x2x2x2xf32>) -> tensor<1x2x2x2x2xf32>
  %c = tensor.collapse_shape %y [[0], [1], [2], [3, 4]] : tensor<1x2x2x2x2xf32> into tensor<1x2x2x4xf32>
  %e4 = tensor.empty() : tensor<1x2x2x4xf32>
  %0 = linalg.generic {indexing_maps = [#id, #last, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s : tensor<1x2x2x4xf32>, tensor<4xf32>) outs(%e4 : tensor<1x2x2x4xf32>) {
  ^bb0(%in: f32, %sc: f32, %out: f32):
    %a = arith.mulf %in, %sc : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}
