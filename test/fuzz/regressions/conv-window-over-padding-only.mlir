// Found by the fuzzer (seed 80, 249, 325, 341, 492): a convolution whose padding exceeds its
// window, so that an output block reads only padding. ipu-plan crashed with "range() arg 3 must
// not be zero" (the operand's first part has extent 0, taken for a block size), and, when the
// whole window of a part lies in the low padding, ipu-schedule built a negative piece ("invalid
// tensor dimension size", seed 506).
module attributes {ipu.target = "tiny"} {
func.func @main(%x: tensor<1x1x2x1xf32>, %w: tensor<1x1x1x1xf32>) -> (tensor<1x1x4x1xf32>) {
  %c0 = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 0] high[0, 0, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %c0 : f32
  } : tensor<1x1x2x1xf32> to tensor<1x1x4x1xf32>
  %e = tensor.empty() : tensor<1x1x4x1xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<1x1x4x1xf32>) -> tensor<1x1x4x1xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x1x4x1xf32>, tensor<1x1x1x1xf32>) outs(%f : tensor<1x1x4x1xf32>) -> tensor<1x1x4x1xf32>
  return %y : tensor<1x1x4x1xf32>
}
}
