// ipu-shard's errors on `ipu.begin_blocks` (BeginBlock from the torch front end): an IPU the
// target does not have. (ipu-plan reads ipu.ipu_id only: these are ipu-shard's alone.)
// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-shard)'

module attributes {ipu.target = "m2000"} {
  // expected-error @+1 {{'func.func' op 'ipu.begin_blocks' puts layer 'layer.3' on IPU 4 : i64, but the target has IPUs 0..3}}
  func.func @block_beyond(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> attributes {ipu.begin_blocks = {"layer.3" = 4 : i64}} {
    %0 = "ipu.matmul"(%x, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %0 : tensor<8x64xf32>
  }
}

// -----

module attributes {ipu.target = "m2000"} {
  // expected-error @+1 {{'func.func' op 'ipu.begin_blocks' puts layer 'layer.3' on IPU "two", but the target has IPUs 0..3}}
  func.func @block_not_an_integer(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> attributes {ipu.begin_blocks = {"layer.3" = "two"}} {
    %0 = "ipu.matmul"(%x, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %0 : tensor<8x64xf32>
  }
}
