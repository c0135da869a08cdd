// docs/extending.md's plugin, loaded by ipu-opt: its op is converted from linalg, planned,
// scheduled into codelets and priced by its record; its pass takes options.
// RUN: ipu-opt %s --load-pass-plugin=%repo/docs/examples/extending/batch_reduce.py -p 'ipu-convert-to-ipu' | FileCheck %s --check-prefix=L1
// RUN: ipu-opt %s --load-pass-plugin=%repo/docs/examples/extending/batch_reduce.py -p 'ipu-convert-to-ipu,example-annotate-cycles{target=%repo/docs/examples/extending/mini.toml overhead=false}' | FileCheck %s --check-prefix=CYCLES
// RUN: ipu-opt %s --load-pass-plugin=%repo/docs/examples/extending/batch_reduce.py -p 'ipu-default-pipeline{target=%repo/docs/examples/extending/mini.toml}' | FileCheck %s --check-prefix=L3
// RUN: not ipu-opt %s -p 'ipu-convert-to-ipu,example-annotate-cycles' 2>&1 | FileCheck %s --check-prefix=NOPLUGIN

// L1: "example.batch_reduce_matmul"(%arg0, %arg1) : (tensor<4x32x32xf32>, tensor<4x32x32xf32>) -> tensor<32x32xf32>
// L1-NOT: linalg.batch_reduce_matmul

// CYCLES: "example.batch_reduce_matmul"(%arg0, %arg1) {example.cycles = 31401 : i64}

// The summed loop k is cut in four: partial sums, then a combining stage (fused with the ReLU).
// L3: func.func private @batch_reduce_matmul_v0(%arg0: tensor<4x32x8xf32>, %arg1: tensor<4x8x16xf32>) -> tensor<32x16xf32> attributes {ipu.codelet}
// L3-NEXT: "example.batch_reduce_matmul"(%arg0, %arg1) : (tensor<4x32x8xf32>, tensor<4x8x16xf32>) -> tensor<32x16xf32>
// L3: "ipu.vertex_group"() {codelet = @batch_reduce_matmul_v0, inputs = [@batch_reduce_matmul_in0, @arg1_0], outputs = [@batch_reduce_matmul_partial0]
// L3: func.func private @batch_reduce_matmul_combine0_generic_v0

// NOPLUGIN: unknown pass 'example-annotate-cycles'

func.func @main(%a: tensor<4x32x32xf32>, %b: tensor<4x32x32xf32>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x32xf32>) -> tensor<32x32xf32>
  %sum = linalg.batch_reduce_matmul ins(%a, %b : tensor<4x32x32xf32>, tensor<4x32x32xf32>) outs(%init : tensor<32x32xf32>) -> tensor<32x32xf32>
  %relu = linalg.max ins(%sum, %init : tensor<32x32xf32>, tensor<32x32xf32>) outs(%empty : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %relu : tensor<32x32xf32>
}
