// Refusals of replicated training: at the op, one line each.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-replicate{replicas=4})'

module attributes {ipu.target = "m2000"} {
  func.func @mismatch(%w: tensor<16xf32> {ipu.resident = "param:w"}, %g: tensor<16xf32>) -> (tensor<16xf32> {ipu.resident = "param:w"}) {
    // expected-error @+1 {{'ipu.all_reduce' op ipu-replicate: all-reduces over 2 replicas, not 4}}
    %r = "ipu.all_reduce"(%g) {replicas = 2 : i64, reduction = "sum"} : (tensor<16xf32>) -> tensor<16xf32>
    return %r : tensor<16xf32>
  }
}

// -----

module attributes {ipu.target = "m2000"} {
  func.func @three(%g: tensor<16xf32>) -> tensor<16xf32> {
    // expected-error @+1 {{'ipu.all_reduce' op expects replicas to be a power of two of at least 2 (GCL's ring all-reduce), got 3}}
    %r = "ipu.all_reduce"(%g) {replicas = 3 : i64, reduction = "sum"} : (tensor<16xf32>) -> tensor<16xf32>
    return %r : tensor<16xf32>
  }
}

// -----

module attributes {ipu.target = "m2000"} {
  func.func @product(%g: tensor<16xf32>) -> tensor<16xf32> {
    // expected-error @+1 {{'"product"' does not satisfy the constraint}}
    %r = "ipu.all_reduce"(%g) {replicas = 4 : i64, reduction = "product"} : (tensor<16xf32>) -> tensor<16xf32>
    return %r : tensor<16xf32>
  }
}

// -----

module attributes {ipu.target = "gc200"} {
  // expected-error @+1 {{'func.func' op ipu-replicate: 4 replicas of 1 IPU(s) need 4 IPUs, but target 'gc200' has 1}}
  func.func @one_chip(%g: tensor<16xf32>) -> tensor<16xf32> {
    %r = "ipu.all_reduce"(%g) {replicas = 4 : i64, reduction = "sum"} : (tensor<16xf32>) -> tensor<16xf32>
    return %r : tensor<16xf32>
  }
}
