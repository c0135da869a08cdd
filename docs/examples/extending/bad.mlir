// An example.batch_reduce_matmul whose operands do not agree: the record's `verify` says so.
func.func @main(%a: tensor<4x8x16xf32>, %b: tensor<4x8x16xf32>) -> tensor<8x16xf32> {
  %r = "example.batch_reduce_matmul"(%a, %b) : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
