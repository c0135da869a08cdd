// ipu-pipeline's refusals: each at the op or the function, one line, nothing written.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-pipeline{micro-batches=4})'

module attributes {ipu.target = "m2000"} {
  // expected-error @+1 {{'func.func' op ipu-pipeline: input %arg0 of type tensor<6x64xf32> has no batch dimension divisible by micro-batches=4}}
  func.func @indivisible(%x: tensor<6x64xf32>) -> tensor<6x64xf32> {
    %w = arith.constant dense<0.5> : tensor<64x64xf32>
    %y = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<6x64xf32>, tensor<64x64xf32>) -> tensor<6x64xf32>
    return %y : tensor<6x64xf32>
  }
}

// -----

// Fewer micro-batches than stages: 5 stages on a pod16, 4 micro-batches.
module attributes {ipu.target = "pod16"} {
  // expected-error @+1 {{'func.func' op ipu-pipeline: micro-batches=4 is fewer than the 5 pipeline stages (IPUs [0, 1, 2, 3, 4])}}
  func.func @too_few(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %w = arith.constant dense<0.5> : tensor<64x64xf32>
    %0 = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %1 = "ipu.matmul"(%0, %w) {ipu.ipu_id = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %2 = "ipu.matmul"(%1, %w) {ipu.ipu_id = 2 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %3 = "ipu.matmul"(%2, %w) {ipu.ipu_id = 3 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %4 = "ipu.matmul"(%3, %w) {ipu.ipu_id = 4 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %4 : tensor<8x64xf32>
  }
}

// -----

// A value flowing back from a later stage to an earlier one.
module attributes {ipu.target = "m2000"} {
  func.func @backwards(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %w = arith.constant dense<0.5> : tensor<64x64xf32>
    %0 = "ipu.matmul"(%x, %w) {ipu.ipu_id = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    // expected-error @+1 {{'ipu.matmul' op on IPU 0 reads a value of IPU 1, a later pipeline stage: stages run in program order}}
    %1 = "ipu.matmul"(%0, %w) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %1 : tensor<8x64xf32>
  }
}

// -----

// A sum over the batch mixes micro-batches.
module attributes {ipu.target = "m2000"} {
  func.func @batch_sum(%x: tensor<8x64xf32>) -> tensor<64xf32> {
    %e8 = tensor.empty() : tensor<8x64xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x64xf32>) outs(%e8 : tensor<8x64xf32>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %a : f32
      linalg.yield %m : f32
    } -> tensor<8x64xf32>
    %e = tensor.empty() : tensor<64xf32>
    // expected-error @+1 {{'linalg.generic' op mixes the samples of a batch (its result's first dimension is not its inputs'): it cannot be pipelined}}
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
        ins(%r : tensor<8x64xf32>) outs(%e : tensor<64xf32>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    return %y : tensor<64xf32>
  }
}

// -----

// A slice of the batch dimension.
module attributes {ipu.target = "m2000"} {
  func.func @batch_slice(%x: tensor<8x64xf32>) -> tensor<4x64xf32> {
    // expected-error @+1 {{'tensor.extract_slice' op slices, pads or reshapes the batch dimension: it cannot be split into micro-batches}}
    %y = tensor.extract_slice %x[0, 0] [4, 64] [1, 1] {ipu.ipu_id = 0 : i64} : tensor<8x64xf32> to tensor<4x64xf32>
    return %y : tensor<4x64xf32>
  }
}

// -----

// Device variables make a training step, which ipu-pipeline orders by the phases its ops'
// locations name (test/lit/pipeline/training.mlir): here none.
module attributes {ipu.target = "m2000"} {
  // expected-error @+1 {{'func.func' op ipu-pipeline: device variables (training), but no op's location names a forward phase (the torch front end's phase:forward): not a training step it can pipeline}}
  func.func @train(%w: tensor<64x64xf32> {ipu.resident = "param:w"}, %x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %y = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %y : tensor<8x64xf32>
  }
}

// -----

// ipu-shard first: every op needs its IPU.
module attributes {ipu.target = "m2000"} {
  func.func @unsharded(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %w = arith.constant dense<0.5> : tensor<64x64xf32>
    // expected-error @+1 {{'ipu.matmul' op has no 'ipu.ipu_id': run ipu-shard before ipu-pipeline}}
    %y = "ipu.matmul"(%x, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %y : tensor<8x64xf32>
  }
}

// -----

// BatchNorm's batch statistics (training mode): the mean over the batch dimension of the input
// depends on every micro-batch, so no micro-batch can be computed alone.
module attributes {ipu.target = "m2000"} {
  func.func @batch_statistics(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<64xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
    // expected-error @+1 {{'linalg.generic' op mixes the samples of a batch (its result's first dimension is not its inputs'): it cannot be pipelined}}
    %mean = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
        ins(%x : tensor<8x64xf32>) outs(%init : tensor<64xf32>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%a: f32, %o: f32):
      %eighth = arith.constant 0.125 : f32
      %w = arith.mulf %a, %eighth : f32
      %s = arith.addf %w, %o : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    %e8 = tensor.empty() : tensor<8x64xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x, %mean : tensor<8x64xf32>, tensor<64xf32>) outs(%e8 : tensor<8x64xf32>) attrs = {ipu.ipu_id = 1 : i64} {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %d = arith.subf %p, %q : f32
      linalg.yield %d : f32
    } -> tensor<8x64xf32>
    return %y : tensor<8x64xf32>
  }
}

// -----

// Only weights: nothing is read along a batch dimension.
module attributes {ipu.target = "m2000"} {
  // expected-error @+1 {{'func.func' op ipu-pipeline: no argument is read along a batch dimension: nothing to split}}
  func.func @no_input(%w: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %t = arith.constant dense<0.5> : tensor<8x64xf32>
    %y = "ipu.matmul"(%t, %w) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %w : tensor<64x64xf32>
  }
}

// -----

// A concatenation along the batch dimension: not an op the split handles.
module attributes {ipu.target = "m2000"} {
  func.func @batch_concat(%x: tensor<8x64xf32>) -> tensor<16x64xf32> {
    %e = tensor.empty() : tensor<8x64xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    } -> tensor<8x64xf32>
    // expected-error @+1 {{'tensor.concat' op reads batched data, but ipu-pipeline cannot split this op along the batch}}
    %y = tensor.concat dim(0) %r, %r {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<16x64xf32>
    return %y : tensor<16x64xf32>
  }
}
