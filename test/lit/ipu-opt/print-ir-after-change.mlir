// --mlir-print-ir-after-change prints the IR after each pass that changed it: canonicalize
// folds the multiplication and ipu-set-target adds the attribute; cse then finds nothing.
// (mlir-opt prints nothing for this flag alone; with --mlir-print-ir-after=PASSES it narrows
// those to the ones that changed the IR, as in mlir-opt.)
// RUN: ipu-opt %s -p 'builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))' --mlir-print-ir-after-change -o %t 2>&1 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))' --mlir-print-ir-after-change --mlir-print-ir-after=cse,ipu-set-target -o %t 2>&1 | FileCheck %s --check-prefix=NARROWED

// CHECK: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// CHECK: arith.constant 6 : i32
// CHECK: // -----// IR Dump After SetTarget (ipu-set-target) //----- //
// CHECK-NEXT: module attributes {ipu.target = "tiny"} {
// CHECK-NOT: IR Dump

// NARROWED-NOT: Canonicalizer
// NARROWED: // -----// IR Dump After SetTarget (ipu-set-target) //----- //
// NARROWED-NOT: IR Dump
func.func @f() -> i32 {
  %a = arith.constant 2 : i32
  %b = arith.constant 3 : i32
  %c = arith.muli %a, %b : i32
  return %c : i32
}
