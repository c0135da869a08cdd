// Found by the fuzzer (seed 506): a part of a convolution's output whose whole window lies in the
// low padding gave a negative piece in ipu-schedule ("invalid tensor dimension size").
module attributes {ipu.target = "tiny"} {
func.func @main(%x: tensor<1x1x1x1xf32>, %w: tensor<1x1x1x1xf32>) -> (tensor<1x1x5x5xf32>) {
  %c0 = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %c0 : f32
  } : tensor<1x1x1x1xf32> to tensor<1x1x5x5xf32>
  %e = tensor.empty() : tensor<1x1x5x5xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x1x5x5xf32>, tensor<1x1x1x1xf32>) outs(%f : tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  return %y : tensor<1x1x5x5xf32>
}
}
