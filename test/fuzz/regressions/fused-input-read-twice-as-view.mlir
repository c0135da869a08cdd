// fuzz_control seed 286, minimized: a generic reads a splat both as it is (tensor<1xi32>) and,
// through tensor.extract, as its 0-d view (a collapse_shape: the same buffer). ipu-fuse-compute-
// sets fused the splat's compute set into the generic's after checking the first read's type
// only, passing the 1-d result to the 0-d read too: invalid IR ("expected operand #1 rank (1)
// to match the result rank of indexing_map (0)").
module attributes {ipu.target = "tiny"} {
func.func @main(%arg0: tensor<i32>) -> tensor<1xi32> {
  %s = tensor.extract %arg0[] : tensor<i32>
  %splat = tensor.splat %s : tensor<1xi32>
  %c0 = arith.constant 0 : index
  %first = tensor.extract %splat[%c0] : tensor<1xi32>
  %e = tensor.empty() : tensor<1xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%splat : tensor<1xi32>) outs(%e : tensor<1xi32>) {
  ^bb0(%a: i32, %o: i32):
    %x = arith.xori %a, %first : i32
    linalg.yield %x : i32
  } -> tensor<1xi32>
  return %r : tensor<1xi32>
}
}
