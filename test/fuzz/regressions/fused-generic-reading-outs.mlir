// Found by the fuzzer (seed 20042): an element-wise generic that reads its `outs` tensor, fused
// by linalg-fuse-elementwise-ops into the reduction consuming it, makes a two-result generic
// whose reduction reads the other result's `outs` value. ipu-convert-to-ipu did not split it
// ("reads another result's accumulator") and ipu-plan refused it ("with 2 results is not
// supported"); that value, indexed by every loop once, is only its init tensor's value.
module attributes {ipu.target = "tiny"} {
func.func @main(%a: tensor<3x9xf32>, %b: tensor<3x9xf32>) -> (tensor<3xf32>) {
  %v8 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<3x9xf32>) outs(%b : tensor<3x9xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %t2 = arith.addf %out, %in0 : f32
    linalg.yield %t2 : f32
  } -> tensor<3x9xf32>
  %v11 = arith.addf %v8, %v8 : tensor<3x9xf32>
  %c12 = arith.constant 0.0 : f32
  %e13 = tensor.empty() : tensor<3xf32>
  %f14 = linalg.fill ins(%c12 : f32) outs(%e13 : tensor<3xf32>) -> tensor<3xf32>
  %v15 = linalg.reduce ins(%v11 : tensor<3x9xf32>) outs(%f14 : tensor<3xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %v15 : tensor<3xf32>
}
}
