// RUN: ipu-run %s --random-inputs 3 --check | FileCheck %s
// RUN: ipu-run %s --random-inputs 4 --check --target gc2 | FileCheck %s

// A convolution's input gradient as torch-mlir lowers aten.convolution_backward: the kernel
// flipped (in and out channels swapped, spatial dimensions read backwards) by a generic that
// extracts from the weight, then a convolution of the padded output gradient. The flip becomes
// a copy (lowering/affine_reads.py), not a gather through an index as large as the weight;
// compared with upstream MLIR's ExecutionEngine.

// CHECK: check output 0: {{.*}}: ok
func.func @main(%grad: tensor<2x8x6x6xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8x3x3xf32>
  %flipped = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<4x8x3x3xf32>) {
  ^bb0(%out: f32):
    %0 = linalg.index 0 : index
    %1 = linalg.index 1 : index
    %2 = linalg.index 2 : index
    %3 = linalg.index 3 : index
    %4 = arith.subi %c2, %2 : index
    %5 = arith.subi %c2, %3 : index
    %x = tensor.extract %w[%1, %0, %4, %5] : tensor<8x4x3x3xf32>
    linalg.yield %x : f32
  } -> tensor<4x8x3x3xf32>
  %padded = tensor.pad %grad low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<2x8x6x6xf32> to tensor<2x8x8x8xf32>
  %init = tensor.empty() : tensor<2x4x6x6xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%init : tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %flipped : tensor<2x8x8x8xf32>, tensor<4x8x3x3xf32>) outs(%filled : tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  return %r : tensor<2x4x6x6xf32>
}
