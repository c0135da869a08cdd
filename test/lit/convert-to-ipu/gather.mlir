// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-index-to-iota,ipu-convert-to-ipu)' | FileCheck %s

// nn.Embedding as torch-mlir exports it: a generic reading a captured table at (index, d).
// It becomes ipu.gather on the table, the indices (through a generic keeping the bounds
// checks) and the iota of the table's rows; the column index may be a linalg.index or the
// iota input ipu-index-to-iota makes of it.

// CHECK-LABEL: func.func @embedding
// CHECK-DAG: %[[TABLE:.*]] = arith.constant dense<{{.*}}> : tensor<6x4xf32>
// CHECK-DAG: %[[ROWS:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
// CHECK: %[[CHECKED:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x3xi64>)
// CHECK: cf.assert %{{.*}}, "index must be smaller than dim size"
// CHECK: cf.assert %{{.*}}, "index must be larger or equal to 0"
// CHECK-NEXT: linalg.yield %{{.*}} : i64
// CHECK: %[[R:.*]] = "ipu.gather"(%[[TABLE]], %[[CHECKED]], %[[ROWS]]) : (tensor<6x4xf32>, tensor<2x3xi64>, tensor<6xi64>) -> tensor<2x3x4xf32>
// CHECK-NOT: tensor.extract
// CHECK: return %[[R]]
func.func @embedding(%ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %table = arith.constant dense<[[0.0, 0.1, 0.2, 0.3], [1.0, 1.1, 1.2, 1.3], [2.0, 2.1, 2.2, 2.3], [3.0, 3.1, 3.2, 3.3], [4.0, 4.1, 4.2, 4.3], [5.0, 5.1, 5.2, 5.3]]> : tensor<6x4xf32>
  %c0_i64 = arith.constant 0 : i64
  %c6 = arith.constant 6 : index
  %e = tensor.empty() : tensor<2x3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x3xi64>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%in: i64, %out: f32):
    %row = arith.index_cast %in : i64 to index
    %col = linalg.index 2 : index
    %lt = arith.cmpi slt, %row, %c6 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %in, %c0_i64 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %x = tensor.extract %table[%row, %col] : tensor<6x4xf32>
    linalg.yield %x : f32
  } -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}
