// RUN: ipu-opt %s --allow-unregistered-dialect --split-input-file -p 'builtin.module(ipu-convert-tm-tensor)' | FileCheck %s

// torch.sort(x) as torch-mlir exports it (an ascending tm_tensor.sort of the values and their
// positions). A stable sort: each element's rank counts the elements that land before it (the
// comparison made both ways, NaN above every value as in PyTorch; a tie goes to the lower position);
// each output position then picks the element of its rank, one generic per sorted operand.

// CHECK-DAG: #[[AT_I:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[AT_K:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @sort
// CHECK: %[[IOTA:.*]] = linalg.generic
// CHECK: %[[RANKS:.*]] = linalg.generic {indexing_maps = [#[[AT_I]], #[[AT_K]], #[[AT_I]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg0 : tensor<3x8xf32>, tensor<3x8xf32>) outs(%{{.*}} : tensor<3x8xi64>)
// CHECK-NEXT: ^bb0(%[[XI:.*]]: f32, %[[XK:.*]]: f32, %[[ACC:.*]]: i64):
// CHECK-NEXT: %[[LE:.*]] = arith.cmpf ole, %[[XK]], %[[XI]] : f32
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[XI]], %[[XI]] : f32
// CHECK-NEXT: %[[FWD:.*]] = arith.ori %[[LE]], %[[NAN]] : i1
// CHECK-NEXT: %[[GE:.*]] = arith.cmpf ole, %[[XI]], %[[XK]] : f32
// CHECK-NEXT: %[[NAN2:.*]] = arith.cmpf uno, %[[XK]], %[[XK]] : f32
// CHECK-NEXT: %[[REV:.*]] = arith.ori %[[GE]], %[[NAN2]] : i1
// CHECK: arith.cmpi eq, %[[FWD]], %[[REV]] : i1
// CHECK: arith.cmpi slt
// CHECK: %[[ONE:.*]] = arith.extui %{{.*}} : i1 to i64
// CHECK: arith.addi %[[ONE]], %[[ACC]] : i64
// CHECK: %[[VALUES:.*]] = linalg.generic {indexing_maps = [#[[AT_K]], #[[AT_K]], #[[AT_I]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[RANKS]], %arg0 : tensor<3x8xi64>, tensor<3x8xf32>) outs(%{{.*}} : tensor<3x8xf32>)
// CHECK: arith.addf
// CHECK: %[[INDICES:.*]] = linalg.generic {{.*}} ins(%[[RANKS]], %[[IOTA]] : tensor<3x8xi64>, tensor<3x8xi64>) outs(%{{.*}} : tensor<3x8xi64>)
// CHECK: arith.addi
// CHECK: return %[[VALUES]], %[[INDICES]]
// CHECK-NOT: tm_tensor
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @sort(%arg0: tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xi64>) {
  %0 = "tensor.empty"() : () -> tensor<3x8xi64>
  %1 = "linalg.generic"(%0) <{indexing_maps = [#map], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%out: i64):
    %4 = "linalg.index"() <{dim = 1 : i64}> : () -> index
    %5 = "arith.index_cast"(%4) : (index) -> i64
    "linalg.yield"(%5) : (i64) -> ()
  }) : (tensor<3x8xi64>) -> tensor<3x8xi64>
  %2:2 = "tm_tensor.sort"(%arg0, %1) <{dimension = 1 : i64, operandSegmentSizes = array<i32: 0, 2>}> ({
  ^bb0(%a: f32, %b: f32, %ai: i64, %bi: i64):
    %3 = "arith.cmpf"(%a, %b) <{fastmath = #arith.fastmath<none>, predicate = 5 : i64}> : (f32, f32) -> i1
    "tm_tensor.yield"(%3) : (i1) -> ()
  }) : (tensor<3x8xf32>, tensor<3x8xi64>) -> (tensor<3x8xf32>, tensor<3x8xi64>)
  return %2#0, %2#1 : tensor<3x8xf32>, tensor<3x8xi64>
}

// -----

// torch.topk(x, k=5): a descending sort whose results are read only through slices of their
// first 5 positions. Those are found by 5 rounds of selection (work 5 x n per row, not n^2):
// the largest value not taken yet, the lowest position holding it (ties in order; NaN above
// every value, as in PyTorch), that position marked taken, and the other operands' values
// there; the rounds are concatenated.

// CHECK-LABEL: func.func @topk
// CHECK: %[[IOTA:.*]] = linalg.generic
// CHECK: %[[NONE:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[BEST:.*]] = linalg.generic {{.*}} ins(%arg0, %[[TAKEN:.*]] : tensor<3x8xf32>, tensor<3x8xi1>) outs(%{{.*}} : tensor<3x1xf32>)
// CHECK: arith.select %{{.*}}, %[[NONE]], %{{.*}} : f32
// CHECK: arith.maximumf
// CHECK: %[[KEY:.*]] = linalg.generic {{.*}} ins(%arg0, %[[TAKEN]], %[[BEST]] : tensor<3x8xf32>, tensor<3x8xi1>, tensor<3x1xf32>) outs(%{{.*}} : tensor<3x1xi64>)
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf uno
// CHECK: arith.minsi
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}} ins(%[[KEY]], %[[BEST]] : tensor<3x1xi64>, tensor<3x1xf32>)
// CHECK: %[[AT:.*]] = linalg.generic {{.*}} ins(%[[KEY]] : tensor<3x1xi64>)
// CHECK: %[[TAKEN2:.*]] = linalg.generic {{.*}} ins(%[[TAKEN]], %[[AT]] : tensor<3x8xi1>, tensor<3x1xi64>)
// CHECK: linalg.generic {{.*}} ins(%[[IOTA]], %[[AT]] : tensor<3x8xi64>, tensor<3x1xi64>) outs(%{{.*}} : tensor<3x1xi64>)
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[TAKEN2]] : tensor<3x8xf32>, tensor<3x8xi1>)
// CHECK: %[[VALUES:.*]] = tensor.concat dim(1) %[[FIRST]], {{.*}} -> tensor<3x5xf32>
// CHECK: %[[INDICES:.*]] = tensor.concat dim(1) {{.*}} -> tensor<3x5xi64>
// CHECK: tensor.extract_slice %[[VALUES]][0, 0] [3, 5] [1, 1]
// CHECK: tensor.extract_slice %[[INDICES]][0, 0] [3, 5] [1, 1]
// CHECK-NOT: tm_tensor
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @topk(%arg0: tensor<3x8xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>) {
  %0 = "tensor.empty"() : () -> tensor<3x8xi64>
  %1 = "linalg.generic"(%0) <{indexing_maps = [#map], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%out: i64):
    %4 = "linalg.index"() <{dim = 1 : i64}> : () -> index
    %5 = "arith.index_cast"(%4) : (index) -> i64
    "linalg.yield"(%5) : (i64) -> ()
  }) : (tensor<3x8xi64>) -> tensor<3x8xi64>
  %2:2 = "tm_tensor.sort"(%arg0, %1) <{dimension = 1 : i64, operandSegmentSizes = array<i32: 0, 2>}> ({
  ^bb0(%a: f32, %b: f32, %ai: i64, %bi: i64):
    %3 = "arith.cmpf"(%a, %b) <{fastmath = #arith.fastmath<none>, predicate = 3 : i64}> : (f32, f32) -> i1
    "tm_tensor.yield"(%3) : (i1) -> ()
  }) : (tensor<3x8xf32>, tensor<3x8xi64>) -> (tensor<3x8xf32>, tensor<3x8xi64>)
  %6 = "tensor.extract_slice"(%2#0) <{operandSegmentSizes = array<i32: 1, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 3, 5>, static_strides = array<i64: 1, 1>}> : (tensor<3x8xf32>) -> tensor<3x5xf32>
  %7 = "tensor.extract_slice"(%2#1) <{operandSegmentSizes = array<i32: 1, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 3, 5>, static_strides = array<i64: 1, 1>}> : (tensor<3x8xi64>) -> tensor<3x5xi64>
  return %6, %7 : tensor<3x5xf32>, tensor<3x5xi64>
}
