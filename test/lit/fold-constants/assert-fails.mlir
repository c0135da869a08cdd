// RUN: ipu-opt %s --verify-diagnostics -p 'builtin.module(ipu-fold-constants)'

// An assert on constants that fails somewhere is an error at compile time, at the assert,
// quoting its message: here a running variance of zero (and eps 0) would divide by zero.
func.func @zero_variance(%x: tensor<4xf32>) -> tensor<4xf32> {
  %var = arith.constant dense<[1.0, 0.0, 4.0, 0.0]> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%var : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nz = arith.cmpf one, %in, %zero : f32
    // expected-error@+1 {{'cf.assert' fails at compile time on 2 of 4 constant elements: "unimplemented: tensor with zero element"}}
    cf.assert %nz, "unimplemented: tensor with zero element"
    %q = arith.divf %one, %in : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
