// Diagnostics that were not expected, expectations nothing met, and diagnostics of another
// severity than expected are reported in mlir-opt's words (the same text, byte for byte, as
// mlir-opt 22 prints for this file), and the exit status is 1.
// RUN: not ipu-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s

func.func @wrong_message(%a: i32) -> i32 {
  // expected-error@+1 {{wrong message}}
  %b = arith.addi %a, %a : i64
  return %b : i32
}

// -----

func.func @wrong_severity() {
  // expected-warning@+1 {{custom op 'arith.frobnicate' is unknown}}
  %x = arith.frobnicate : i32
  return
}

// -----

func.func @nothing_wrong() {
  // expected-remark@+1 {{never emitted}}
  return
}

// Reported as they happen:
// CHECK: verify-diagnostics-mismatch.mlir:8:19: error: unexpected error: use of value '%a' expects different type than prior uses: 'i64' vs 'i32'
// CHECK-NEXT: {{^}}  %b = arith.addi %a, %a : i64
// CHECK-NEXT: {{^}}                  ^{{$}}
// CHECK-NEXT: verify-diagnostics-mismatch.mlir:6:26: error: unexpected note: prior use here
// CHECK-NEXT: {{^}}func.func @wrong_message
// CHECK-NEXT: {{^}}                         ^{{$}}
// CHECK-NEXT: verify-diagnostics-mismatch.mlir:15:6: error: 'error' diagnostic emitted when expecting a 'warning'
// CHECK-NEXT: {{^}}  // expected{{-}}warning@+1
// CHECK-NEXT: {{^}}     ^{{$}}

// Reported at the end, in the order of the file; a near miss leaves its expectation unmet:
// CHECK-NEXT: verify-diagnostics-mismatch.mlir:7:6: error: expected error "wrong message" was not produced
// CHECK-NEXT: {{^}}  // expected{{-}}error@+1 {{[{][{]}}wrong message{{[}][}]}}
// CHECK-NEXT: {{^}}     ^~~~~~~~~~~~~{{$}}
// CHECK-NEXT: verify-diagnostics-mismatch.mlir:15:6: error: expected warning "custom op 'arith.frobnicate' is unknown" was not produced
// CHECK: verify-diagnostics-mismatch.mlir:23:6: error: expected remark "never emitted" was not produced
// CHECK-NOT: error:
