// ipu-opt with no pipeline parses, verifies and prints; its output parses again to the same IR.
// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt %s | ipu-opt | FileCheck %s
// RUN: ipu-opt < %s | FileCheck %s
// RUN: ipu-opt - < %s | FileCheck %s
// RUN: ipu-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: ipu-opt %s --mlir-print-op-generic | ipu-opt | FileCheck %s
// RUN: ipu-opt %s --mlir-print-debuginfo | FileCheck %s --check-prefix=DEBUGINFO

// Top-level ops are wrapped in one module, like mlir-opt does.
// CHECK: module {
// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : tensor<4xf32>
// CHECK: return %[[SUM]] : tensor<4xf32>
// Locations keep the input's file name and line numbers; the implicit module is at line 0.
// DEBUGINFO: {{^}}} loc(#[[MODULE:loc[0-9]*]])
// DEBUGINFO: #[[MODULE]] = loc("{{.*}}round-trip.mlir":0:0)
// DEBUGINFO: loc("{{.*}}round-trip.mlir":[[@LINE+2]]:1)
// DEBUGINFO: loc("{{.*}}round-trip.mlir":[[@LINE+2]]:10)
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %sum = arith.addf %a, %b : tensor<4xf32>
  return %sum : tensor<4xf32>
}

// CHECK-LABEL: func.func @extract
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<4xf32>
func.func @extract(%t: tensor<4xf32>) -> f32 {
  %c1 = arith.constant 1 : index
  %x = tensor.extract %t[%c1] : tensor<4xf32>
  return %x : f32
}

// GENERIC: "builtin.module"() ({
// GENERIC: "func.func"() <{function_type = (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>, sym_name = "add"}>
// GENERIC: "arith.addf"

