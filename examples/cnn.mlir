// A small CNN in upstream linalg on tensors (L0): conv 3x3 + bias + ReLU, 2x2 max pooling,
// flatten, a dense layer + bias + ReLU, and a row sum. `make demo` compiles it for gc200
// (ipu-compile) and runs it on the simulator against MLIR's ExecutionEngine (ipu-run --check).
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
module {
  func.func @main(%image: tensor<8x3x32x32xf32>, %filter: tensor<16x3x3x3xf32>, %bias: tensor<16xf32>,
                  %weights: tensor<4096x128xf32>, %bias2: tensor<128xf32>) -> tensor<8xf32> {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %padded = tensor.pad %image low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<8x3x32x32xf32> to tensor<8x3x34x34xf32>
    %e0 = tensor.empty() : tensor<8x16x32x32xf32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
    %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %filter : tensor<8x3x34x34xf32>, tensor<16x3x3x3xf32>) outs(%f0 : tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
    %act = linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %bias : tensor<8x16x32x32xf32>, tensor<16xf32>) outs(%e0 : tensor<8x16x32x32xf32>) {
    ^bb0(%x: f32, %b: f32, %o: f32):
      %s = arith.addf %x, %b : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    } -> tensor<8x16x32x32xf32>
    %window = tensor.empty() : tensor<2x2xf32>
    %e1 = tensor.empty() : tensor<8x16x16x16xf32>
    %f1 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<8x16x16x16xf32>) -> tensor<8x16x16x16xf32>
    %pool = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%act, %window : tensor<8x16x32x32xf32>, tensor<2x2xf32>) outs(%f1 : tensor<8x16x16x16xf32>) -> tensor<8x16x16x16xf32>
    %flat = tensor.collapse_shape %pool [[0], [1, 2, 3]] : tensor<8x16x16x16xf32> into tensor<8x4096xf32>
    %e2 = tensor.empty() : tensor<8x128xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x128xf32>) -> tensor<8x128xf32>
    %dense = linalg.matmul ins(%flat, %weights : tensor<8x4096xf32>, tensor<4096x128xf32>) outs(%f2 : tensor<8x128xf32>) -> tensor<8x128xf32>
    %hidden = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dense, %bias2 : tensor<8x128xf32>, tensor<128xf32>) outs(%e2 : tensor<8x128xf32>) {
    ^bb0(%x: f32, %b: f32, %o: f32):
      %s = arith.addf %x, %b : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    } -> tensor<8x128xf32>
    %e3 = tensor.empty() : tensor<8xf32>
    %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8xf32>) -> tensor<8xf32>
    %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%hidden : tensor<8x128xf32>) outs(%f3 : tensor<8xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    return %sum : tensor<8xf32>
  }
}
