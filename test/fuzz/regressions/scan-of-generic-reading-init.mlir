// Found by the fuzzer (seed 174): an element-wise generic reading its `outs` (x + y, y the
// init), fused by upstream elementwise fusion into the reduction a tm_tensor.scan becomes,
// stayed a second result of the fused generic, which ipu-plan refused ("'linalg.generic' op
// with 2 results is not supported"). ipu-convert-to-ipu now reads such inits as inputs.
module attributes {ipu.target = "tiny"} {
func.func @main(%x: tensor<2x9xf32>, %y: tensor<2x9xf32>) -> tensor<2x9xf32> {
  %v = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x9xf32>) outs(%y : tensor<2x9xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<2x9xf32>
  %e = tensor.empty() : tensor<2x9xf32>
  %a = tensor.empty() : tensor<9xf32>
  %s:2 = "tm_tensor.scan"(%v, %e, %a) <{dimension = 0 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
    ^bb0(%p: f32, %q: f32):
      %m = "arith.minimumf"(%p, %q) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
      "tm_tensor.yield"(%m) : (f32) -> ()
  }) : (tensor<2x9xf32>, tensor<2x9xf32>, tensor<9xf32>) -> (tensor<2x9xf32>, tensor<9xf32>)
  return %s#0 : tensor<2x9xf32>
}
}
