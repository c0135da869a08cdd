// --mlir-timing prints the time of every pass, the Python ones included, to stderr.
// RUN: ipu-opt %s -p 'builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse),ipu-verify)' --mlir-timing -o %t 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUTPUT < %t

// CHECK: Execution time report
// CHECK: Total Execution Time:
// CHECK: ----Wall Time----  ----Name----
// CHECK-NEXT: Canonicalizer
// CHECK-NEXT: SetTarget
// CHECK-NEXT: 'func.func' Pipeline
// CHECK-NEXT: CSE
// CHECK: VerifyIpu
// CHECK: Total

// OUTPUT: module attributes {ipu.target = "tiny"}
func.func @f() {
  return
}
