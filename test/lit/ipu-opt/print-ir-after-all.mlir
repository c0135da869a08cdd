// --mlir-print-ir-after-all prints the IR to stderr after every pass, the Python ones included.
// RUN: ipu-opt %s -p 'builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))' --mlir-print-ir-after-all -o %t 2>&1 | FileCheck %s
// RUN: ipu-opt %s -p 'ipu-set-target{target=tiny}' --mlir-print-ir-after-all --mlir-print-op-generic -o %t 2>&1 | FileCheck %s --check-prefix=GENERIC

// CHECK: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// CHECK-NEXT: module {
// CHECK: arith.constant 6 : i32
// CHECK: // -----// IR Dump After SetTarget (ipu-set-target) //----- //
// CHECK-NEXT: module attributes {ipu.target = "tiny"} {
// A nested pass prints the function it ran on.
// CHECK: // -----// IR Dump After CSE (cse) //----- //
// CHECK-NEXT: func.func @f() -> i32 {

// GENERIC: // -----// IR Dump After SetTarget (ipu-set-target) //----- //
// GENERIC-NEXT: "builtin.module"() ({
// GENERIC: }) {ipu.target = "tiny"} : () -> ()
func.func @f() -> i32 {
  %a = arith.constant 2 : i32
  %b = arith.constant 3 : i32
  %c = arith.muli %a, %b : i32
  return %c : i32
}
