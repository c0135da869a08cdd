// --mlir-pass-statistics prints the statistics the passes keep (upstream ones: CSE counts what
// it removed) after the run, to stderr, with the counts upstream mlir-opt gives.
// RUN: ipu-opt %s -p 'builtin.module(ipu-set-target{target=tiny},func.func(cse))' --mlir-pass-statistics -o %t 2>&1 | FileCheck %s
// RUN: %mlir-opt-ipu %s -p 'builtin.module(func.func(cse))' --mlir-pass-statistics -o %t 2>&1 | FileCheck %s --check-prefix=UPSTREAM

// CHECK: ... Pass statistics report ...
// CHECK: SetTarget
// CHECK: 'func.func' Pipeline
// CHECK-NEXT: CSE
// CHECK-NEXT: (S) 2 num-cse'd - Number of operations CSE'd

// UPSTREAM: CSE
// UPSTREAM-NEXT: (S) 2 num-cse'd - Number of operations CSE'd
func.func @f() -> (i32, i32) {
  %a = arith.constant 2 : i32
  %b = arith.constant 2 : i32
  return %a, %b : i32, i32
}
