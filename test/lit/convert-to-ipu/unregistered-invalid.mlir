// RUN: ipu-opt %s --allow-unregistered-dialect --split-input-file --verify-diagnostics -p 'builtin.module(ipu-convert-to-ipu)'

// Ops of dialects nobody registered are refused before anything runs: upstream's inliner
// cannot tell which symbols they use and aborts the process on them (it did, on torch-mlir's
// TMTensor ops given straight to ipu-convert-to-ipu).

func.func @scan(%arg0: tensor<3x6xf32>) -> tensor<3x6xf32> {
  %e = tensor.empty() : tensor<3x6xf32>
  %a = tensor.empty() : tensor<3xf32>
  // expected-error @+1 {{'tm_tensor.scan' is not supported by ipu-convert-to-ipu: run ipu-convert-tm-tensor first (the default pipeline does): tm_tensor is torch-mlir's TMTensor, emitted for aten.cumsum}}
  %4:2 = "tm_tensor.scan"(%arg0, %e, %a) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%x: f32, %y: f32):
    %5 = arith.addf %x, %y : f32
    "tm_tensor.yield"(%5) : (f32) -> ()
  }) : (tensor<3x6xf32>, tensor<3x6xf32>, tensor<3xf32>) -> (tensor<3x6xf32>, tensor<3xf32>)
  return %4#0 : tensor<3x6xf32>
}

// -----

func.func @other(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'mystery.op' is not supported by ipu-convert-to-ipu: an op of a dialect nobody registered}}
  %0 = "mystery.op"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
