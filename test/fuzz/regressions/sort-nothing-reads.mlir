// Found by the fuzzer (seed 82): a tm_tensor.sort whose results nothing reads crashed
// ipu-convert-tm-tensor ("max() arg is an empty sequence": no reader, so "every reader is a
// leading slice" held vacuously and topk's k was the max over no slices).
module attributes {ipu.target = "tiny"} {
func.func @main(%x: tensor<4x3xi32>, %y: tensor<5xi32>) -> tensor<5xi32> {
  %e = tensor.empty() : tensor<4x3xi64>
  %iota = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x3xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<4x3xi64>
  %s:2 = "tm_tensor.sort"(%x, %iota) <{dimension = 1 : i64, operandSegmentSizes = array<i32: 0, 2>}> ({
    ^bb0(%a: i32, %b: i32, %ai: i64, %bi: i64):
      %le = "arith.cmpi"(%a, %b) <{predicate = 3 : i64}> : (i32, i32) -> i1
      "tm_tensor.yield"(%le) : (i1) -> ()
  }) : (tensor<4x3xi32>, tensor<4x3xi64>) -> (tensor<4x3xi32>, tensor<4x3xi64>)
  %ey = tensor.empty() : tensor<5xi32>
  %r = linalg.add ins(%y, %y : tensor<5xi32>, tensor<5xi32>) outs(%ey : tensor<5xi32>) -> tensor<5xi32>
  return %r : tensor<5xi32>
}
}
