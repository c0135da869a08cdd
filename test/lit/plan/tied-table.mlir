// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s

// A tied embedding table (lowering/tied_tables.py): a device variable a gather reads first and
// matmuls later. The head's `h @ transpose(table)` becomes `transpose(table @ transpose(h))`,
// the table takes a layout its matmuls read in place (rows in 16 blocks of 32 on tiny's 16
// tiles, not the gather's), and each matmul is cut as the table is: the forward's rows and the
// backward's summed loop in blocks of 32 on tiles 0..15, one apart.

// -----

// CHECK-LABEL: func.func @tied
// CHECK-SAME: %arg0: tensor<512x64xf32> {ipu.mapping = {block = array<i64: 32, 64>, kind = "block", tiles = array<i64: 0, 16, 1, 1, 0>}, ipu.resident = "param:embedding.weight"}
// CHECK: %[[H:.*]] = "ipu.gather"(%arg0,
// CHECK: %[[HT:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<16x64xf32>) outs({{.*}} : tensor<64x16xf32>)
// CHECK: %[[P:.*]] = "ipu.matmul"(%arg0, %[[HT]]) {{.*}} ipu.partition = array<i64: 32, 16, 64>, ipu.tiles = array<i64: 0, 16, 1, 1, 0, 1, 0>} : (tensor<512x64xf32>, tensor<64x16xf32>) -> tensor<512x16xf32>
// CHECK: %[[L:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<512x16xf32>) outs({{.*}} : tensor<16x512xf32>)
// CHECK: %[[D:.*]] = "ipu.matmul"(%arg3, %arg0) {{.*}} ipu.partition = array<i64: 16, 64, 32>, ipu.tiles = array<i64: 0, 1, 0, 1, 0, 16, 1>}
// CHECK: return %[[L]], %[[D]]

#swap = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  func.func @tied(%table: tensor<512x64xf32> {ipu.resident = "param:embedding.weight"}, %ids: tensor<16xi64>, %rows: tensor<512xi64>, %dlogits: tensor<16x512xf32>) -> (tensor<16x512xf32>, tensor<16x64xf32>) {
    %h = "ipu.gather"(%table, %ids, %rows) : (tensor<512x64xf32>, tensor<16xi64>, tensor<512xi64>) -> tensor<16x64xf32>
    %e = tensor.empty() : tensor<64x512xf32>
    %t = linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]} ins(%table : tensor<512x64xf32>) outs(%e : tensor<64x512xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<64x512xf32>
    %logits = "ipu.matmul"(%h, %t) : (tensor<16x64xf32>, tensor<64x512xf32>) -> tensor<16x512xf32>
    %dh = "ipu.matmul"(%dlogits, %table) : (tensor<16x512xf32>, tensor<512x64xf32>) -> tensor<16x64xf32>
    return %logits, %dh : tensor<16x512xf32>, tensor<16x64xf32>
  }
}

// -----

// A weight no gather reads is no tied table: its transposed read is left as it is.

// CHECK-LABEL: func.func @untied
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<512x64xf32>)
// CHECK: "ipu.matmul"(%arg1, %[[T]])

#swap2 = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  func.func @untied(%weight: tensor<512x64xf32> {ipu.resident = "param:head.weight"}, %h: tensor<16x64xf32>) -> tensor<16x512xf32> {
    %e = tensor.empty() : tensor<64x512xf32>
    %t = linalg.generic {indexing_maps = [#swap2, #id2], iterator_types = ["parallel", "parallel"]} ins(%weight : tensor<512x64xf32>) outs(%e : tensor<64x512xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<64x512xf32>
    %logits = "ipu.matmul"(%h, %t) : (tensor<16x64xf32>, tensor<64x512xf32>) -> tensor<16x512xf32>
    return %logits : tensor<16x512xf32>
  }
}
