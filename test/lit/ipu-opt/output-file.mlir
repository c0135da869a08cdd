// -o writes the result to a file, and only when everything succeeded.
// RUN: rm -f %t
// RUN: ipu-opt %s -p canonicalize -o %t
// RUN: FileCheck %s < %t
// A failing run leaves an existing output file as it was.
// RUN: echo "previous contents" > %t
// RUN: not ipu-opt %s -p 'ipu-set-target{target=nope}' -o %t 2>&1 | FileCheck %s --check-prefix=ERROR
// RUN: FileCheck %s --check-prefix=KEPT < %t
// -o - is stdout.
// RUN: ipu-opt %s -p canonicalize -o - | FileCheck %s

// CHECK: func.func @f() -> i32
// CHECK-NEXT: arith.constant 6 : i32
// ERROR: output-file.mlir:0:0: error: unknown target 'nope'
// KEPT: previous contents
// KEPT-NOT: func
func.func @f() -> i32 {
  %a = arith.constant 2 : i32
  %b = arith.constant 3 : i32
  %c = arith.muli %a, %b : i32
  return %c : i32
}
