// RUN: ipu-opt %s --verify-diagnostics -p 'builtin.module(ipu-convert-to-ipu)'

// An assert whose condition is the constant false always fails: refused with its message.
func.func @always_fails(%x: tensor<8xf32>) -> tensor<8xf32> {
  %false = arith.constant false
  %e = tensor.empty() : tensor<8xf32>
  // expected-error@+1 {{'linalg.generic' is not supported by ipu-convert-to-ipu: a cf.assert that always fails: "negative size"}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    cf.assert %false, "negative size"
    linalg.yield %in : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
