// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fold-batch-norm)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file > %t.plain
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fold-batch-norm)' > %t.folded
// RUN: diff %t.plain %t.folded

// Whenever a condition fails the IR stays as it is (the diff: byte for byte as parsed and
// printed without the pass): each case keeps its filter, its outs and its generic. The BatchNorm-like generic of each is `x * 2 + 1` per channel unless said.

// A filter computed at run time (a function argument): nothing to fold it into.

// CHECK-LABEL: func.func @runtime_filter
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %arg1 : {{.*}}) outs(%[[F:.*]] :
// CHECK: arith.mulf
// CHECK: arith.addf
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @runtime_filter(%x: tensor<1x1x2x2xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %two : f32
    %b = arith.addf %a, %one : f32
    linalg.yield %b : f32
  } -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// The convolution's result read twice (by the generic and returned): the other reader would
// see the scaled values.

// CHECK-LABEL: func.func @result_used_twice
// CHECK: %[[W:.*]] = arith.constant dense<[{{\[\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]]]]>
// CHECK: %[[Y:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %[[W]] :
// CHECK: linalg.generic {{.*}} ins(%[[Y]] :
// CHECK: arith.mulf
// CHECK: return %{{.*}}, %[[Y]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @result_used_twice(%x: tensor<1x1x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %two : f32
    %b = arith.addf %a, %one : f32
    linalg.yield %b : f32
  } -> tensor<1x2x2x2xf32>
  return %0, %y : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// Bodies that are not affine in x with per-channel constants: x * x; a constant divided by x;
// x times a constant that varies along the rows (not per channel); x times a run-time value;
// and ReLU before the affine part (x itself read by the selects).

// CHECK-LABEL: func.func @not_affine
// CHECK: arith.constant dense<[{{\[\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]]]]>
// CHECK-COUNT-5: linalg.conv_2d_nchw_fchw {{.*}} outs(%{{.*}} : tensor<1x2x2x2xf32>)
// CHECK-NOT: linalg.broadcast
// CHECK: arith.mulf %in, %in
// CHECK: arith.divf %{{.*}}, %in
// CHECK: arith.mulf %in, %in_{{.*}}
// CHECK: arith.mulf %in, %in_{{.*}}
// CHECK: arith.cmpf ogt, %in
// CHECK: arith.select
// CHECK: arith.mulf
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d2)>
func.func @not_affine(%x: tensor<1x1x2x2xf32>, %r: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %rows = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %w1 = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %w2 = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %w3 = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %w4 = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w1 : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w2 : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w3 : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y4 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w4 : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y0 : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %in : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y1 : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.divf %two, %in : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  %2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y2, %rows : tensor<1x2x2x2xf32>, tensor<2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %a = arith.mulf %in, %c : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y3, %r : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %a = arith.mulf %in, %c : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  %4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y4 : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.cmpf ogt, %in, %zero : f32
    %s = arith.select %p, %in, %zero : f32
    %a = arith.mulf %s, %two : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  return %0, %1, %2, %3, %4 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// Odd inputs: a filter shared by two convolutions (folding would hold it twice); outs that
// are a run-time tensor; an f16 filter (measured: the
// f16 chain is the more accurate for small scales, docs/compiler.md); an integer convolution;
// a division by a zero constant (an infinite scale is no rounding difference); the
// convolution's result as a generic's outs, not an input. (unreadable.mlir: filters whose
// values cannot be read; test_fold_batch_norm.py: `tensor.empty` outs, whose undefined
// contents the ExecutionEngine reference of test_differential.py refuses.)

// CHECK-LABEL: func.func @odd
// CHECK-NOT: linalg.broadcast
// CHECK-NOT: dense<{{.*}}2.000000e+00
// CHECK-NOT: dense<{{.*}}3.000000e+00
// CHECK-COUNT-4: arith.mulf
// CHECK: arith.muli
// CHECK: arith.divf
// CHECK: arith.mulf
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @odd(%x: tensor<1x1x2x2xf32>, %h: tensor<1x1x2x2xf16>, %i: tensor<1x1x2x2xi32>, %r: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf16>, tensor<1x2x2x2xi32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %zero_h = arith.constant 0.0 : f16
  %zero_i = arith.constant 0 : i32
  %three = arith.constant 3.0 : f32
  %three_h = arith.constant 3.0 : f16
  %three_i = arith.constant 3 : i32
  %w = arith.constant dense<[[[[1.0]]], [[[1.0]]]]> : tensor<2x1x1x1xf32>
  %w2 = arith.constant dense<[[[[1.0]]], [[[1.0]]]]> : tensor<2x1x1x1xf32>
  %wh = arith.constant dense<[[[[1.0]]], [[[1.0]]]]> : tensor<2x1x1x1xf16>
  %wi = arith.constant dense<[[[[1]]], [[[1]]]]> : tensor<2x1x1x1xi32>
  %w3 = arith.constant dense<[[[[1.0]]], [[[1.0]]]]> : tensor<2x1x1x1xf32>
  %w5 = arith.constant dense<[[[[1.0]]], [[[1.0]]]]> : tensor<2x1x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %eh = tensor.empty() : tensor<1x2x2x2xf16>
  %ei = tensor.empty() : tensor<1x2x2x2xi32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %fill_h = linalg.fill ins(%zero_h : f16) outs(%eh : tensor<1x2x2x2xf16>) -> tensor<1x2x2x2xf16>
  %fill_i = linalg.fill ins(%zero_i : i32) outs(%ei : tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xi32>
  %ya = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %yb = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w2 : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%r : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %yh = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%h, %wh : tensor<1x1x2x2xf16>, tensor<2x1x1x1xf16>) outs(%fill_h : tensor<1x2x2x2xf16>) -> tensor<1x2x2x2xf16>
  %yi = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%i, %wi : tensor<1x1x2x2xi32>, tensor<2x1x1x1xi32>) outs(%fill_i : tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xi32>
  %y3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w3 : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y5 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w5 : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%fill : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ya : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %three : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%yb : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %three : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y2 : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %three : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  %4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%yh : tensor<1x2x2x2xf16>) outs(%eh : tensor<1x2x2x2xf16>) {
  ^bb0(%in: f16, %out: f16):
    %a = arith.mulf %in, %three_h : f16
    linalg.yield %a : f16
  } -> tensor<1x2x2x2xf16>
  %5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%yi : tensor<1x2x2x2xi32>) outs(%ei : tensor<1x2x2x2xi32>) {
  ^bb0(%in: i32, %out: i32):
    %a = arith.muli %in, %three_i : i32
    linalg.yield %a : i32
  } -> tensor<1x2x2x2xi32>
  %6 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y3 : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.divf %in, %zero : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  %8 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : tensor<1x2x2x2xf32>) outs(%y5 : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %out, %three : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  return %0, %1, %3, %4, %5, %6, %8 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf16>, tensor<1x2x2x2xi32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

