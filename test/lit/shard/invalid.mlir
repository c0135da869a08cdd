// ipu-shard's errors: an IPU the target does not have, by annotation or by option.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-shard)'
// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-plan)'
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-shard{ipus=8})' 2>&1 | FileCheck %s --check-prefix=IPUS

// IPUS: error: 'builtin.module' op ipu-shard: ipus=8, but target 'm2000' has 4 IPU(s)
module attributes {ipu.target = "m2000"} {
  func.func @beyond(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
    // expected-error @+1 {{'ipu.matmul' op has 'ipu.ipu_id' 4 : i64, but the target has IPUs 0..3}}
    %0 = "ipu.matmul"(%x, %w) {ipu.ipu_id = 4 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %0 : tensor<8x64xf32>
  }
}

// -----

// One chip has IPU 0 only.
module attributes {ipu.target = "gc200"} {
  func.func @one_chip(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
    // expected-error @+1 {{'ipu.matmul' op has 'ipu.ipu_id' 1 : i64, but the target has IPUs 0..0}}
    %0 = "ipu.matmul"(%x, %w) {ipu.ipu_id = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %0 : tensor<8x64xf32>
  }
}

// -----

module attributes {ipu.target = "m2000"} {
  func.func @not_an_integer(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
    // expected-error @+1 {{'ipu.matmul' op has 'ipu.ipu_id' "one", but the target has IPUs 0..3}}
    %0 = "ipu.matmul"(%x, %w) {ipu.ipu_id = "one"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %0 : tensor<8x64xf32>
  }
}
