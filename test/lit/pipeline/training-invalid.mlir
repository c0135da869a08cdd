// ipu-pipeline's refusals on a training step: one line at the function.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-pipeline{micro-batches=2})'

// Two IPUs make 3 pipeline stages in training: 2 micro-batches are too few (PopART's rule).
module attributes {ipu.target = "m2000"} {
  // expected-error @+1 {{'func.func' op ipu-pipeline: gradient accumulation of 2 micro-batches is fewer than the 3 pipeline stages of a training step over 2 IPUs (2 x IPUs - 1, PopART's rule): accumulate at least 3}}
  func.func @too_few(%w0: tensor<64x64xf32> {ipu.resident = "param:l0.weight"}, %x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %h = "ipu.matmul"(%x, %w0) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l0"("aten.mm"("m.py":1:0))))
    %y = "ipu.matmul"(%h, %w0) {ipu.ipu_id = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l1"("aten.mm"("m.py":2:0))))
    return %y : tensor<8x64xf32>
  }
}

// -----

// The micro-batches the step holds (one per forward after a backward) must be the option's.
module attributes {ipu.target = "tiny"} {
  // expected-error @+1 {{'func.func' op ipu-pipeline: the training step holds 1 micro-batches, not micro-batches=2}}
  func.func @one(%w0: tensor<64x64xf32> {ipu.resident = "param:l0.weight"}, %x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %h = "ipu.matmul"(%x, %w0) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l0"("aten.mm"("m.py":1:0))))
    %g = "ipu.matmul"(%h, %w0) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l0"("aten.mm"("m.py":2:0))))
    return %g : tensor<8x64xf32>
  }
}
