// Found by the fuzzer (seed 3637): an entry returning one value twice crashed the reference (the
// process, a segfault in upstream buffer-results-to-out-params{hoist-static-allocs}).
module attributes {ipu.target = "tiny"} {
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %v = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %v, %v : tensor<4xf32>, tensor<4xf32>
}
}
