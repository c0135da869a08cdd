// --mlir-print-ir-before=PASSES prints the IR to stderr before the named passes only (their
// arguments, comma-separated, or the flag repeated), Python passes and upstream ones alike;
// --mlir-print-ir-before-all before every pass.
// RUN: ipu-opt %s -p 'builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))' --mlir-print-ir-before=cse -o %t 2>&1 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))' --mlir-print-ir-before=ipu-set-target,cse -o %t 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: ipu-opt %s -p 'builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))' --mlir-print-ir-before=canonicalize --mlir-print-ir-before=cse -o %t 2>&1 | FileCheck %s --check-prefix=REPEATED
// RUN: ipu-opt %s -p 'builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))' --mlir-print-ir-before-all -o %t 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: not ipu-opt %s --mlir-print-ir-before=cse,,canonicalize 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-NOT: IR Dump
// CHECK: // -----// IR Dump Before CSE (cse) //----- //
// CHECK-NEXT: func.func @f() -> i32 {
// CHECK-NEXT: arith.constant 6 : i32
// CHECK-NOT: IR Dump

// TWO-NOT: Canonicalizer
// TWO: // -----// IR Dump Before SetTarget (ipu-set-target) //----- //
// TWO-NEXT: module {
// TWO: // -----// IR Dump Before CSE (cse) //----- //
// TWO-NOT: IR Dump

// REPEATED: // -----// IR Dump Before Canonicalizer (canonicalize) //----- //
// REPEATED: arith.muli
// REPEATED-NOT: SetTarget
// REPEATED: // -----// IR Dump Before CSE (cse) //----- //

// ALL: IR Dump Before Canonicalizer (canonicalize)
// ALL: IR Dump Before SetTarget (ipu-set-target)
// ALL: IR Dump Before CSE (cse)

// BAD: ipu-opt: error: argument --mlir-print-ir-before: invalid pass list 'cse,,canonicalize': comma-separated pass arguments, e.g. cse,ipu-plan
func.func @f() -> i32 {
  %a = arith.constant 2 : i32
  %b = arith.constant 3 : i32
  %c = arith.muli %a, %b : i32
  return %c : i32
}
