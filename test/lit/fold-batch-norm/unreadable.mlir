// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fold-batch-norm)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file > %t.plain
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fold-batch-norm)' > %t.folded
// RUN: diff %t.plain %t.folded

// Filters whose values cannot be read stay as they are. (The simulator cannot run these
// either: test_differential.py lists them as rejected.)

// A filter blob that is missing (no `dialect_resources` entry).

// CHECK-LABEL: func.func @missing_blob
// CHECK: arith.constant dense_resource<missing> : tensor<2x1x1x1xf32>
// CHECK: arith.mulf
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @missing_blob(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %three = arith.constant 3.0 : f32
  %w = arith.constant dense_resource<missing> : tensor<2x1x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %three : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// bf16, which numpy cannot hold (and numpy reads None as float64: a trap the pass avoids).

// CHECK-LABEL: func.func @bf16
// CHECK: arith.constant dense<[{{\[\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]]]]> : tensor<2x1x1x1xbf16>
// CHECK: arith.mulf
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @bf16(%x: tensor<1x1x2x2xbf16>) -> tensor<1x2x2x2xbf16> {
  %zero = arith.constant 0.0 : bf16
  %three = arith.constant 3.0 : bf16
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xbf16>
  %e = tensor.empty() : tensor<1x2x2x2xbf16>
  %fill = linalg.fill ins(%zero : bf16) outs(%e : tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xbf16>, tensor<2x1x1x1xbf16>) outs(%fill : tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : tensor<1x2x2x2xbf16>) outs(%e : tensor<1x2x2x2xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %a = arith.mulf %in, %three : bf16
    linalg.yield %a : bf16
  } -> tensor<1x2x2x2xbf16>
  return %0 : tensor<1x2x2x2xbf16>
}
