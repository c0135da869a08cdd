// The model of docs/extending.md: a sum of four products, then a ReLU.
func.func @main(%a: tensor<4x32x32xf32>, %b: tensor<4x32x32xf32>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x32xf32>) -> tensor<32x32xf32>
  %sum = linalg.batch_reduce_matmul ins(%a, %b : tensor<4x32x32xf32>, tensor<4x32x32xf32>) outs(%init : tensor<32x32xf32>) -> tensor<32x32xf32>
  %relu = linalg.max ins(%sum, %init : tensor<32x32xf32>, tensor<32x32xf32>) outs(%empty : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %relu : tensor<32x32xf32>
}
