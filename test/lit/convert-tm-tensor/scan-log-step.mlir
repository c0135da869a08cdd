// RUN: ipu-opt %s --allow-unregistered-dialect -p 'builtin.module(ipu-set-target{target=tiny},ipu-convert-tm-tensor)' | FileCheck %s
// RUN: ipu-opt %s --allow-unregistered-dialect -p 'builtin.module(ipu-set-target{target=gc200},ipu-convert-tm-tensor)' | FileCheck %s --check-prefix=GC200

// A scan too long for one masked reduction on the target's tiles (8x100 on tiny's 16: 80,000
// points against 256 per tile per step) is ceil(log2 100) = 7 steps of y (+)= y shifted by
// 1, 2, 4, ... 64, each shift a slice after a block of the combiner's identity. On gc200's
// 1,472 tiles the masked reduction is cheaper.

// CHECK-LABEL: func.func @cumsum
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[KEPT1:.*]] = tensor.extract_slice %arg0[0, 0] [8, 99] [1, 1]
// CHECK: %[[FILL1:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<8x1xf32>)
// CHECK: %[[SHIFT1:.*]] = tensor.concat dim(1) %[[FILL1]], %[[KEPT1]] : (tensor<8x1xf32>, tensor<8x99xf32>) -> tensor<8x100xf32>
// CHECK: %[[Y1:.*]] = linalg.generic {{.*}} ins(%arg0, %[[SHIFT1]] : tensor<8x100xf32>, tensor<8x100xf32>)
// CHECK: arith.addf
// CHECK: tensor.extract_slice %[[Y1]][0, 0] [8, 98] [1, 1]
// CHECK-COUNT-6: tensor.concat dim(1) %{{.*}}, %{{.*}} : (tensor<8x{{(2|4|8|16|32|64)}}xf32>
// CHECK: %[[Y7:.*]] = linalg.generic
// CHECK: return %[[Y7]]
// GC200-LABEL: func.func @cumsum
// GC200: iterator_types = ["parallel", "parallel", "reduction"]
// GC200-NOT: tensor.concat
func.func @cumsum(%arg0: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %0 = "tensor.empty"() : () -> tensor<8x100xf32>
  %1 = "tensor.empty"() : () -> tensor<8xf32>
  %2:2 = "tm_tensor.scan"(%arg0, %0, %1) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%a: f32, %b: f32):
    %3 = "arith.addf"(%a, %b) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "tm_tensor.yield"(%3) : (f32) -> ()
  }) : (tensor<8x100xf32>, tensor<8x100xf32>, tensor<8xf32>) -> (tensor<8x100xf32>, tensor<8xf32>)
  return %2#0 : tensor<8x100xf32>
}
