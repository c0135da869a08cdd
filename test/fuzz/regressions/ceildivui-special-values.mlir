// arith.ceildivui was missing from the codelet semantics: the compiler accepted it and the
// simulator then failed ("'arith.ceildivui' is not supported in codelets"). Every pair of
// integer special values (0, +-1, min, max, ...) as dividend and nonzero divisor.
module attributes {ipu.target = "tiny"} {
func.func @main(%x: tensor<1xi32>) -> tensor<9x7xi32> {
  %a = arith.constant dense<[0, 1, -1, 2, 7, -2147483648, 2147483647, -2147483647, 1073741824]> : tensor<9xi32>
  %b = arith.constant dense<[1, -1, 2, 3, -2147483648, 2147483647, -3]> : tensor<7xi32>
  %e = tensor.empty() : tensor<9x7xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<9xi32>, tensor<7xi32>) outs(%e : tensor<9x7xi32>) {
  ^bb0(%p: i32, %q: i32, %o: i32):
    %y = arith.ceildivui %p, %q : i32
    linalg.yield %y : i32
  } -> tensor<9x7xi32>
  return %r : tensor<9x7xi32>
}
}
