// --split-input-file processes the chunks between `// -----` lines separately (each in its own
// module) and joins the results with `// -----` lines.
// RUN: ipu-opt %s --split-input-file -p 'canonicalize' | FileCheck %s
// RUN: ipu-opt %s -split-input-file -p 'canonicalize' | FileCheck %s
// Without the flag the chunks are one module.
// RUN: ipu-opt %s | FileCheck %s --check-prefix=WHOLE

// CHECK: module {
// CHECK-LABEL: func.func @first
// CHECK-NEXT: arith.constant 3 : i32
// CHECK: {{^}}}{{$}}
// CHECK-NEXT: {{^}}// -----{{$}}
// CHECK-NEXT: module {
// WHOLE: module {
// WHOLE-LABEL: func.func @first
// WHOLE-NOT: module
// WHOLE-NOT: // -----
// WHOLE-LABEL: func.func @second
func.func @first() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %c = arith.addi %a, %b : i32
  return %c : i32
}

// -----

// Each chunk is its own module: the same symbol name again is fine.
// CHECK-LABEL: func.func @second
// CHECK-NEXT: return
// CHECK: {{^}}// -----{{$}}
func.func @second() {
  return
}

// -----

// CHECK: module attributes {test.chunk = 3 : i64} {
// CHECK-LABEL: func.func @second
// CHECK-NOT: // -----
module attributes {test.chunk = 3 : i64} {
  func.func @second() {
    return
  }
}
