// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-index-to-iota)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-index-to-iota,ipu-fold-constants,canonicalize)' | FileCheck %s --check-prefix=FOLD

// torch.arange as torch-mlir exports it: a generic yielding its loop index. The index becomes
// an input holding 0..n-1; on constants alone, ipu-fold-constants then computes it.

// CHECK-LABEL: func.func @arange
// CHECK: %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel"]} ins(%[[IOTA]] : tensor<5xi64>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i64, %{{.*}}: i64):
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[IN]] : i64 to index
// CHECK-NOT: linalg.index
// CHECK: arith.index_cast %[[I]] : index to i64
// FOLD-LABEL: func.func @arange
// FOLD-NEXT: %[[C:.*]] = arith.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// FOLD-NEXT: return %[[C]]
func.func @arange() -> tensor<5xi64> {
  %e = tensor.empty() : tensor<5xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<5xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<5xi64>
  return %r : tensor<5xi64>
}

// -----

// A causal mask on run-time data: both loop indices become inputs (one iota per loop, read
// through a map of that loop alone); the inputs the generic had come first.

// CHECK-LABEL: func.func @causal
// CHECK-DAG: %[[ROWS:.*]] = arith.constant dense<[0, 1, 2]> : tensor<3xi64>
// CHECK-DAG: %[[COLS:.*]] = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[ROWS]], %[[COLS]] : tensor<3x4xf32>, tensor<3xi64>, tensor<4xi64>)
// CHECK-NOT: linalg.index
// FOLD-LABEL: func.func @causal
// FOLD: linalg.generic
func.func @causal(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi ugt, %j, %i : index
    %m = arith.select %future, %ninf, %in : f32
    linalg.yield %m : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
