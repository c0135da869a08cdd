// --mlir-print-ir-after-failure prints the IR the failing pass left, after its error, and
// nothing after the passes that succeeded.
// RUN: not ipu-opt %s -p 'builtin.module(canonicalize,ipu-set-target{target=gc201})' --mlir-print-ir-after-failure -o %t 2>&1 | FileCheck %s

// CHECK-NOT: IR Dump
// CHECK: error: unknown target 'gc201'
// CHECK: // -----// IR Dump After SetTarget Failed (ipu-set-target) //----- //
// CHECK-NEXT: module {
// CHECK: arith.constant 6 : i32
// CHECK-NOT: IR Dump
func.func @f() -> i32 {
  %a = arith.constant 2 : i32
  %b = arith.constant 3 : i32
  %c = arith.muli %a, %b : i32
  return %c : i32
}
