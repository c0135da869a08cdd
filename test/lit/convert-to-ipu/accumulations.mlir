// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// A pipelined training step's running gradient sum (frontends/joint.py): its additions' locations
// name "ipu.accumulate", and fusion leaves them apart, each adding one micro-batch's gradient
// into the sum (lowering/accumulations.py), so that the update reads the sum and the last
// gradient, not all of them. The last addition, unmarked, fuses with the update.

// CHECK-LABEL: func.func @running_sum
// CHECK-SAME: (%[[G1:.*]]: tensor<4x8xf32>, %[[G2:.*]]: tensor<4x8xf32>, %[[G3:.*]]: tensor<4x8xf32>, %[[G4:.*]]: tensor<4x8xf32>, %[[M:.*]]: tensor<4x8xf32>)
// CHECK: %[[S2:.*]] = linalg.generic
// CHECK-SAME: ins(%[[G1]], %[[G2]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.addf %[[A]], %[[B]] : f32
// CHECK: %[[S3:.*]] = linalg.generic
// CHECK-SAME: ins(%[[S2]], %[[G3]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: %[[U:.*]] = linalg.generic
// CHECK-SAME: ins(%[[S3]], %[[G4]], %[[M]] : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: return %[[U]]
func.func @running_sum(%g1: tensor<4x8xf32>, %g2: tensor<4x8xf32>, %g3: tensor<4x8xf32>, %g4: tensor<4x8xf32>, %m: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s2 = arith.addf %g1, %g2 : tensor<4x8xf32> loc(#accumulate)
  %s3 = arith.addf %s2, %g3 : tensor<4x8xf32> loc(#accumulate)
  %s4 = arith.addf %s3, %g4 : tensor<4x8xf32>
  %u = arith.addf %s4, %m : tensor<4x8xf32>
  return %u : tensor<4x8xf32>
}
#accumulate = loc("phase:backward"("layer"("ipu.accumulate"("aten.add.Tensor"))))

// -----

// Unmarked, the same chain is one generic reading every gradient.

// CHECK-LABEL: func.func @unmarked_sum
// CHECK: %[[U:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0, %arg1, %arg2, %arg3, %arg4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[U]]
func.func @unmarked_sum(%g1: tensor<4x8xf32>, %g2: tensor<4x8xf32>, %g3: tensor<4x8xf32>, %g4: tensor<4x8xf32>, %m: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s2 = arith.addf %g1, %g2 : tensor<4x8xf32>
  %s3 = arith.addf %s2, %g3 : tensor<4x8xf32>
  %s4 = arith.addf %s3, %g4 : tensor<4x8xf32>
  %u = arith.addf %s4, %m : tensor<4x8xf32>
  return %u : tensor<4x8xf32>
}
