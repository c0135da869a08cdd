// Found by the fuzzer (seed 46): an argmin over a loop of extent 1 was refused ("'linalg.generic'
// op with 2 results is not supported by ipu-plan"): its iota constant, dense<[0]>, is a splat,
// which the arg-reduction match took for a non-iota index.
module attributes {ipu.target = "tiny"} {
func.func @main(%x: tensor<7x1xf32>) -> (tensor<7xf32>, tensor<7xi64>) {
  %inf = arith.constant 0x7F800000 : f32
  %e = tensor.empty() : tensor<7xf32>
  %m0 = linalg.fill ins(%inf : f32) outs(%e : tensor<7xf32>) -> tensor<7xf32>
  %c0 = arith.constant 0 : i64
  %ei = tensor.empty() : tensor<7xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<7xi64>) -> tensor<7xi64>
  %iota = arith.constant dense<[0]> : tensor<1xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %iota : tensor<7x1xf32>, tensor<1xi64>) outs(%m0, %i0 : tensor<7xf32>, tensor<7xi64>) {
  ^bb0(%in: f32, %k: i64, %acc: f32, %idx: i64):
    %m = arith.minimumf %in, %acc : f32
    %lt = arith.cmpf olt, %in, %acc : f32
    %s = arith.select %lt, %k, %idx : i64
    linalg.yield %m, %s : f32, i64
  } -> (tensor<7xf32>, tensor<7xi64>)
  return %r#0, %r#1 : tensor<7xf32>, tensor<7xi64>
}
}
