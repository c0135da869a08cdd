// fuzz_control seed 1662, reduced: the reference (not the simulator) was wrong. MLIR 22's
// one-shot-bufferize does not see that an scf.index_switch result aliases the tensor its
// default yields (%a), so it bufferized the later fill into %a's buffer in place, and the
// returned %r read 3s. runtime/reference.py now bufferizes such modules copy-before-write.
// The random input of %c (seed 0) is a small integer: the switch takes its default.
module attributes {ipu.target = "tiny"} {
func.func @main(%a: tensor<8xi32>, %c: tensor<i32>) -> (tensor<8xi32>, tensor<8xi32>) {
  %s = tensor.extract %c[] : tensor<i32>
  %i = arith.index_cast %s : i32 to index
  %r = scf.index_switch %i -> tensor<8xi32>
  case 1000 {
    %e = tensor.empty() : tensor<8xi32>
    %z = arith.constant 0 : i32
    %f = linalg.fill ins(%z : i32) outs(%e : tensor<8xi32>) -> tensor<8xi32>
    scf.yield %f : tensor<8xi32>
  }
  default {
    scf.yield %a : tensor<8xi32>
  }
  %c3 = arith.constant 3 : i32
  %d = linalg.fill ins(%c3 : i32) outs(%a : tensor<8xi32>) -> tensor<8xi32>
  return %r, %d : tensor<8xi32>, tensor<8xi32>
}
}
