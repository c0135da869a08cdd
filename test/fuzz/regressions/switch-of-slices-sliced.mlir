// index_switch yielding a slice in one case: its result buffer has an offset known only at run
// time, and a slice of it an offset the reference computes by affine.apply (expand-strided-metadata).
module attributes {ipu.target = "tiny"} {
func.func @main(%x: tensor<9x4xf32>, %i: tensor<i32>) -> tensor<3x2xf32> {
  %s = tensor.extract %i[] : tensor<i32>
  %k = arith.index_cast %s : i32 to index
  %r = scf.index_switch %k -> tensor<7x4xf32>
  case 0 {
    %z = tensor.extract_slice %x[2, 0] [7, 4] [1, 1] : tensor<9x4xf32> to tensor<7x4xf32>
    scf.yield %z : tensor<7x4xf32>
  }
  default {
    %z = tensor.extract_slice %x[1, 0] [7, 4] [1, 1] : tensor<9x4xf32> to tensor<7x4xf32>
    scf.yield %z : tensor<7x4xf32>
  }
  %v = tensor.extract_slice %r[1, 1] [3, 2] [1, 1] : tensor<7x4xf32> to tensor<3x2xf32>
  return %v : tensor<3x2xf32>
}
}
