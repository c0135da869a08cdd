// RUN: ipu-run %s --random-inputs 1 --check | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc2 | FileCheck %s

// One program with every kind of compute op, compiled by the default pipeline, simulated and
// compared with upstream MLIR's ExecutionEngine: if planning, scheduling or the codelet
// interpreter breaks on one op kind, lit goes red here (the lit files of the passes check
// their IR, not the numbers). Outputs: a padded, strided convolution with a bias; a matmul;
// a max-reduction; a slice of a padded tensor; a concatenation; an f16 sum.

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK: check output 1: max abs error {{.*}}: ok
// CHECK: check output 2: max abs error {{.*}}: ok
// CHECK: check output 3: max abs error {{.*}}: ok
// CHECK: check output 4: max abs error {{.*}}: ok
// CHECK: check output 5: max abs error {{.*}}: ok
// CHECK-NOT: FAILED

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>
module attributes {ipu.target = "tiny"} {
  func.func @main(%x: tensor<1x3x12x12xf32>, %w: tensor<8x3x3x3xf32>, %bias: tensor<8xf32>, %a: tensor<24x40xf32>, %b: tensor<40x16xf32>,
                  %h: tensor<6x300xf16>) -> (tensor<1x8x6x6xf32>, tensor<24x16xf32>, tensor<24xf32>, tensor<20x10xf32>, tensor<64x16xf32>, tensor<6xf16>) {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<1x3x12x12xf32> to tensor<1x3x14x14xf32>
    %ce = tensor.empty() : tensor<1x8x6x6xf32>
    %init = linalg.generic {indexing_maps = [#channel, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bias : tensor<8xf32>) outs(%ce : tensor<1x8x6x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x6x6xf32>
    %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded, %w : tensor<1x3x14x14xf32>, tensor<8x3x3x3xf32>) outs(%init : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>

    %me = tensor.empty() : tensor<24x16xf32>
    %mz = linalg.fill ins(%zero : f32) outs(%me : tensor<24x16xf32>) -> tensor<24x16xf32>
    %mm = linalg.matmul ins(%a, %b : tensor<24x40xf32>, tensor<40x16xf32>) outs(%mz : tensor<24x16xf32>) -> tensor<24x16xf32>

    %re = tensor.empty() : tensor<24xf32>
    %rinit = linalg.fill ins(%ninf : f32) outs(%re : tensor<24xf32>) -> tensor<24xf32>
    %max = linalg.reduce { arith.maximumf } ins(%a : tensor<24x40xf32>) outs(%rinit : tensor<24xf32>) dimensions = [1]

    %one = arith.constant 1.0 : f32
    %pa = tensor.pad %a low[2, 0] high[0, 3] {
    ^bb0(%i: index, %j: index):
      tensor.yield %one : f32
    } : tensor<24x40xf32> to tensor<26x43xf32>
    %slice = tensor.extract_slice %pa[1, 33] [20, 10] [1, 1] : tensor<26x43xf32> to tensor<20x10xf32>

    %cat = tensor.concat dim(0) %mm, %b : (tensor<24x16xf32>, tensor<40x16xf32>) -> tensor<64x16xf32>

    %hzero = arith.constant 0.0 : f16
    %he = tensor.empty() : tensor<6xf16>
    %hinit = linalg.fill ins(%hzero : f16) outs(%he : tensor<6xf16>) -> tensor<6xf16>
    %hsum = linalg.reduce { arith.addf } ins(%h : tensor<6x300xf16>) outs(%hinit : tensor<6xf16>) dimensions = [1]
    return %conv, %mm, %max, %slice, %cat, %hsum : tensor<1x8x6x6xf32>, tensor<24x16xf32>, tensor<24xf32>, tensor<20x10xf32>, tensor<64x16xf32>, tensor<6xf16>
  }
}
