// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// arith and math on tensors become linalg.generic (convert-elementwise-to-linalg), and a
// chain of them one generic (linalg-fuse-elementwise-ops).

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @arith_on_tensors
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[S]], %[[X]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf ogt, %[[M]], %[[Y]] : f32
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[C]], %[[M]], %[[Y]] : f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[SEL]] : f32
// CHECK-NEXT: linalg.yield %[[T]] : f32
// CHECK: return %[[R]]
func.func @arith_on_tensors(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.addf %a, %b : tensor<4x8xf32>
  %m = arith.mulf %s, %a : tensor<4x8xf32>
  %c = arith.cmpf ogt, %m, %b : tensor<4x8xf32>
  %r = arith.select %c, %m, %b : tensor<4x8xi1>, tensor<4x8xf32>
  %e = math.tanh %r : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// -----

// Named element-wise ops (and linalg.elementwise) are generalized. %0 has a second user, the
// return, so it stays a generic of its own; the rest fuses.

// CHECK-LABEL: func.func @named_f16
// CHECK: %[[SUB:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<16xf16>, tensor<16xf16>)
// CHECK: arith.subf %{{.*}}, %{{.*}} : f16
// CHECK: %[[REST:.*]] = linalg.generic
// CHECK-SAME: ins(%[[SUB]], %arg1, %arg0 : tensor<16xf16>, tensor<16xf16>, tensor<16xf16>)
// CHECK: arith.maximumf
// CHECK-NEXT: arith.minimumf
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.divf
// CHECK-NEXT: math.log
// CHECK: return %[[REST]], %[[SUB]]
func.func @named_f16(%a: tensor<16xf16>, %b: tensor<16xf16>) -> (tensor<16xf16>, tensor<16xf16>) {
  %e = tensor.empty() : tensor<16xf16>
  %0 = linalg.sub ins(%a, %b : tensor<16xf16>, tensor<16xf16>) outs(%e : tensor<16xf16>) -> tensor<16xf16>
  %1 = linalg.max ins(%0, %b : tensor<16xf16>, tensor<16xf16>) outs(%e : tensor<16xf16>) -> tensor<16xf16>
  %2 = linalg.min ins(%1, %a : tensor<16xf16>, tensor<16xf16>) outs(%e : tensor<16xf16>) -> tensor<16xf16>
  %3 = linalg.exp ins(%2 : tensor<16xf16>) outs(%e : tensor<16xf16>) -> tensor<16xf16>
  %4 = linalg.div ins(%3, %a : tensor<16xf16>, tensor<16xf16>) outs(%e : tensor<16xf16>) -> tensor<16xf16>
  %5 = linalg.elementwise kind=#linalg.elementwise_kind<log> ins(%4 : tensor<16xf16>) outs(%e : tensor<16xf16>) -> tensor<16xf16>
  return %5, %0 : tensor<16xf16>, tensor<16xf16>
}

// -----

// i32, i8 and i1 operands in one body.

// CHECK-LABEL: func.func @integers
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg2, %arg0, %arg1 : tensor<8xi1>, tensor<8xi32>, tensor<8xi8>)
// CHECK-NEXT: ^bb0(%[[C:.*]]: i1, %[[A:.*]]: i32, %[[B:.*]]: i8, %{{.*}}: i32):
// CHECK-NEXT: %[[W:.*]] = arith.extsi %[[B]] : i8 to i32
// CHECK-NEXT: %[[M:.*]] = arith.muli %[[A]], %[[W]] : i32
// CHECK-NEXT: arith.select %[[C]], %[[M]], %[[A]] : i32
func.func @integers(%a: tensor<8xi32>, %b: tensor<8xi8>, %c: tensor<8xi1>) -> tensor<8xi32> {
  %e = tensor.empty() : tensor<8xi32>
  %w = arith.extsi %b : tensor<8xi8> to tensor<8xi32>
  %m = linalg.mul ins(%a, %w : tensor<8xi32>, tensor<8xi32>) outs(%e : tensor<8xi32>) -> tensor<8xi32>
  %r = arith.select %c, %m, %a : tensor<8xi1>, tensor<8xi32>
  return %r : tensor<8xi32>
}

// -----

// CHECK-LABEL: func.func @map
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.subf
// CHECK-NEXT: math.sqrt
func.func @map(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.map ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>)
    (%x: f32, %y: f32, %init: f32) {
      %s = arith.subf %x, %y : f32
      %q = math.sqrt %s : f32
      linalg.yield %q : f32
    }
  return %r : tensor<8xf32>
}

// -----

// A fill is a generic yielding the constant; a splat constant operand folds into the body.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @fill_and_splat
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[SEVEN:.*]] = arith.constant 7.000000e+00 : f32
// CHECK: %[[F:.*]] = linalg.generic {indexing_maps = [#[[ID]]], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<3x5xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[SEVEN]] : f32
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<3x5xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[TWO]] : f32
// CHECK: return %[[F]], %[[S]]
func.func @fill_and_splat(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %seven = arith.constant 7.0 : f32
  %two = arith.constant dense<2.0> : tensor<3x5xf32>
  %e = tensor.empty() : tensor<3x5xf32>
  %f = linalg.fill ins(%seven : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %s = arith.mulf %x, %two : tensor<3x5xf32>
  return %f, %s : tensor<3x5xf32>, tensor<3x5xf32>
}

// -----

// Transposes and broadcasts are generics with permutation / projection maps.

// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @transpose_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[T]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x3x4xi8>) outs(%{{.*}} : tensor<3x4x2xi8>)
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<6xf32>) outs(%{{.*}} : tensor<5x6xf32>)
func.func @transpose_broadcast(%x: tensor<2x3x4xi8>, %v: tensor<6xf32>) -> (tensor<3x4x2xi8>, tensor<5x6xf32>) {
  %e0 = tensor.empty() : tensor<3x4x2xi8>
  %t = linalg.transpose ins(%x : tensor<2x3x4xi8>) outs(%e0 : tensor<3x4x2xi8>) permutation = [1, 2, 0]
  %e1 = tensor.empty() : tensor<5x6xf32>
  %b = linalg.broadcast ins(%v : tensor<6xf32>) outs(%e1 : tensor<5x6xf32>) dimensions = [0]
  return %t, %b : tensor<3x4x2xi8>, tensor<5x6xf32>
}
