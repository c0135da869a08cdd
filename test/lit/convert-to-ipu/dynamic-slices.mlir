// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// A slice at the loop's induction variable (Poplar's dynamicSlice): the loop carries a 0-d
// counter, a generic computes the row from it (checking it is in range on the device) and an
// ipu.gather reads that row of the source.

// CHECK-LABEL: func.func @extract_row
// CHECK: scf.for {{.*}} iter_args({{.*}}, %[[COUNT:.*]] = %{{.*}}) -> (tensor<4xf32>, tensor<i64>)
// CHECK: %[[ROW:.*]] = linalg.generic {{.*}} ins(%[[COUNT]] : tensor<i64>) outs({{.*}} : tensor<1xi64>)
// CHECK: cf.assert {{.*}}, "slice offset out of bounds: not in [0, 7]"
// CHECK: "ipu.gather"(%{{.*}}, %[[ROW]], %{{.*}}) : (tensor<8x4xf32>, tensor<1xi64>, tensor<8xi64>) -> tensor<1x4xf32>
// CHECK-NOT: tensor.extract_slice
func.func @extract_row(%x: tensor<8x4xf32>, %a0: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %a0) -> tensor<4xf32> {
    %row = tensor.extract_slice %x[%i, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
    %a2 = arith.addf %a, %row : tensor<4xf32>
    scf.yield %a2 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A row written at the induction variable (dynamicUpdate): a generic over the destination
// selects the update, broadcast to every row, where the row number equals the offset.

// CHECK-LABEL: func.func @insert_row
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4xf32>, tensor<i64>, tensor<8xi64>)
// CHECK: cf.assert {{.*}}, "slice offset out of bounds: not in [0, 7]"
// CHECK: arith.select
// CHECK-NOT: tensor.insert_slice
func.func @insert_row(%y0: tensor<8x4xf32>, %v: tensor<4xf32>) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%y = %y0) -> tensor<8x4xf32> {
    %y2 = tensor.insert_slice %v into %y[%i, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<8x4xf32>
    scf.yield %y2 : tensor<8x4xf32>
  }
  return %r : tensor<8x4xf32>
}

// -----

// The offset on an inner dimension: the source is transposed so the sliced dimension leads, the
// column gathered as a row, and transposed back.

// CHECK-LABEL: func.func @extract_column
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<6x5xf32>) outs(%{{.*}} : tensor<5x6xf32>)
// CHECK: "ipu.gather"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<5x6xf32>, tensor<1xi64>, tensor<5xi64>) -> tensor<1x6xf32>
func.func @extract_column(%x: tensor<6x5xf32>, %j: tensor<i64>) -> tensor<6x1xf32> {
  %e = tensor.extract %j[] : tensor<i64>
  %k = arith.index_cast %e : i64 to index
  %s = tensor.extract_slice %x[0, %k] [6, 1] [1, 1] : tensor<6x5xf32> to tensor<6x1xf32>
  return %s : tensor<6x1xf32>
}
