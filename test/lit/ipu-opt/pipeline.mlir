// One --pass-pipeline mixes upstream passes (canonicalize, cse, nested func.func pipelines)
// with the Python passes, in the order written.
// RUN: ipu-opt %s --pass-pipeline='builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse),func.func(canonicalize),cse,ipu-verify)' | FileCheck %s
// A bare list means the same as builtin.module(...); -p is short for --pass-pipeline.
// RUN: ipu-opt %s -p 'canonicalize, ipu-set-target{target="gc2"}, func.func(cse)' | FileCheck %s --check-prefix=GC2
// The passes named, and only those, run: cse alone merges the multiplies but folds nothing.
// RUN: ipu-opt %s -p 'builtin.module(func.func(cse))' | FileCheck %s --check-prefix=CSE-ONLY
// A later ipu-set-target overrides an earlier one.
// RUN: ipu-opt %s -p 'ipu-set-target{target=gc2},cse,ipu-set-target{target=tiny}' | FileCheck %s --check-prefix=LAST

// CHECK: module attributes {ipu.target = "tiny"} {
// GC2: module attributes {ipu.target = "gc2"} {
// CSE-ONLY: module {
// LAST: module attributes {ipu.target = "tiny"} {

// CHECK-LABEL: func.func @fold_and_cse
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[X]], %[[X]] : tensor<8xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[M]], %[[M]] : tensor<8xf32>
// CHECK-NEXT: return %[[S]]
// CSE-ONLY-LABEL: func.func @fold_and_cse
// CSE-ONLY: arith.mulf
// CSE-ONLY-NOT: arith.mulf
// CSE-ONLY: arith.addf
func.func @fold_and_cse(%x: tensor<8xf32>) -> tensor<8xf32> {
  %m1 = arith.mulf %x, %x : tensor<8xf32>
  %m2 = arith.mulf %x, %x : tensor<8xf32>
  %s = arith.addf %m1, %m2 : tensor<8xf32>
  return %s : tensor<8xf32>
}

// CHECK-LABEL: func.func @fold_constants
// CHECK-NEXT: %[[C:.*]] = arith.constant 5 : i32
// CHECK-NEXT: return %[[C]]
// CSE-ONLY-LABEL: func.func @fold_constants
// CSE-ONLY: arith.addi
func.func @fold_constants() -> i32 {
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %sum = arith.addi %c2, %c3 : i32
  return %sum : i32
}
