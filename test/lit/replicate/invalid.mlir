// ipu-replicate's refusals, each at the function.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-replicate{replicas=3})'
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-replicate{replicas=8})' 2>&1 | FileCheck %s --check-prefix=EIGHT

module attributes {ipu.target = "m2000"} {
  // expected-error @+1 {{'func.func' op ipu-replicate: replicas=3 is not a power of two (GCL's ring all-reduce needs one)}}
  func.func @three(%x: tensor<6x64xf32>) -> tensor<6x64xf32> {
    %w = arith.constant dense<0.5> : tensor<64x64xf32>
    %y = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<6x64xf32>, tensor<64x64xf32>) -> tensor<6x64xf32>
    return %y : tensor<6x64xf32>
  }
}

// -----

// EIGHT: error: 'func.func' op ipu-replicate: 8 replicas of 2 IPU(s) need 16 IPUs, but target 'm2000' has 4
// EIGHT: error: 'func.func' op ipu-replicate: device variables (training) but no ipu.all_reduce: the replicas' updates would drift apart
// EIGHT: error: 'func.func' op ipu-replicate: input %arg0 of type tensor<4x64xf32> has no batch dimension divisible by replicas=8
module attributes {ipu.target = "m2000"} {
  // expected-error @+1 {{'func.func' op ipu-replicate: replicas=3 is not a power of two}}
  func.func @two_ipus(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %w = arith.constant dense<0.5> : tensor<64x64xf32>
    %h = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %y = "ipu.matmul"(%h, %w) {ipu.ipu_id = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %y : tensor<8x64xf32>
  }
}

// -----

module attributes {ipu.target = "m2000"} {
  // expected-error @+1 {{'func.func' op ipu-replicate: replicas=3 is not a power of two}}
  func.func @train(%w: tensor<64x64xf32> {ipu.resident = "param:w"}, %x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %y = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %y : tensor<8x64xf32>
  }
}

// -----

module attributes {ipu.target = "pod16"} {
  // expected-error @+1 {{'func.func' op ipu-replicate: replicas=3 is not a power of two}}
  func.func @indivisible(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %w = arith.constant dense<0.5> : tensor<64x64xf32>
    %y = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    return %y : tensor<4x64xf32>
  }
}
