// RUN: ipu-run %s --target tiny --input %S/Inputs/nan-inputs-x.npy %S/Inputs/nan-inputs-y.npy --check | FileCheck %s

// NaN, infinities and signed zeros as inputs, where the float ops differ in what they make
// of them: maximumf / minimumf propagate a NaN, maxnumf / minnumf return the other operand,
// ordered comparisons are false and unordered ones true on a NaN; and reductions over a
// vector holding NaNs, by maximumf and by maxnumf. Each against the ExecutionEngine.

// CHECK-COUNT-10: check output {{[0-9]+}}: max abs error 0, {{.*}}: ok
// CHECK-NOT: FAILED

func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi1>, tensor<8xi1>, tensor<8xf32>,
        tensor<f32>, tensor<f32>, tensor<f32>) {
  %a = arith.maximumf %x, %y : tensor<8xf32>
  %b = arith.maxnumf %x, %y : tensor<8xf32>
  %c = arith.minimumf %x, %y : tensor<8xf32>
  %d = arith.minnumf %x, %y : tensor<8xf32>
  %e = arith.cmpf olt, %x, %y : tensor<8xf32>
  %f = arith.cmpf une, %x, %y : tensor<8xf32>
  %g = arith.select %e, %x, %y : tensor<8xi1>, tensor<8xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%ninf : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %m = linalg.reduce ins(%y : tensor<8xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %n = linalg.reduce ins(%y : tensor<8xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.maxnumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %s = linalg.reduce ins(%b : tensor<8xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.minnumf %in, %acc : f32
      linalg.yield %r : f32
    }
  return %a, %b, %c, %d, %e, %f, %g, %m, %n, %s
    : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi1>, tensor<8xi1>, tensor<8xf32>,
      tensor<f32>, tensor<f32>, tensor<f32>
}
