// fuzz_control seed 192, minimized: an scf.for inside an scf.if whose body reads its initial
// value (an argument, placed by its first reader) beside the carried one. ipu-plan gave the
// loop's result no layout in that case, and the if refused its yield: "yields a tensor.empty
// (#0): a value with no data".
module attributes {ipu.target = "tiny"} {
func.func @main(%x: tensor<5xi64>, %c: tensor<i1>) -> tensor<5xi64> {
  %cc = tensor.extract %c[] : tensor<i1>
  %r = scf.if %cc -> (tensor<5xi64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %f = scf.for %i = %c0 to %c4 step %c1 iter_args(%y = %x) -> (tensor<5xi64>) {
      %s = arith.xori %y, %x : tensor<5xi64>
      scf.yield %s : tensor<5xi64>
    }
    scf.yield %f : tensor<5xi64>
  } else {
    scf.yield %x : tensor<5xi64>
  }
  return %r : tensor<5xi64>
}
}
