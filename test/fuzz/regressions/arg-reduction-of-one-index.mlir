// Found by the fuzzer (seed 2297): an argmin over a reduction loop of extent 1 whose position
// is `linalg.index` was refused ("'linalg.generic' op with 2 results is not supported by
// ipu-plan"): the index of a loop of one, its iota input folded by ipu-fold-constants (the
// reduced tensor a constant-shaped TOSA result), is the constant 0, which the arg-reduction
// match did not take for the loop's position.
module attributes {ipu.target = "tiny"} {
func.func @main(%x: tensor<31xi32>) -> tensor<i64> {
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<31xi32>) -> tensor<1xi32>
  %big = arith.constant 2147483647 : i32
  %e = tensor.empty() : tensor<i32>
  %m0 = linalg.fill ins(%big : i32) outs(%e : tensor<i32>) -> tensor<i32>
  %c0 = arith.constant 0 : i64
  %ei = tensor.empty() : tensor<i64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<i64>) -> tensor<i64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%s : tensor<1xi32>) outs(%m0, %i0 : tensor<i32>, tensor<i64>) {
  ^bb0(%in: i32, %acc: i32, %idx: i64):
    %kx = linalg.index 0 : index
    %k = arith.index_cast %kx : index to i64
    %m = arith.minsi %in, %acc : i32
    %lt = arith.cmpi slt, %in, %acc : i32
    %sel = arith.select %lt, %k, %idx : i64
    linalg.yield %m, %sel : i32, i64
  } -> (tensor<i32>, tensor<i64>)
  return %r#1 : tensor<i64>
}
}
