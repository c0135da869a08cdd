// A chunk that fails does not stop the others; its diagnostics keep the line numbers and the
// name of the whole file, and the exit status is 1.
// RUN: not ipu-opt %s --split-input-file 2>%t.stderr | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.stderr

// CHECK: func.func @fine
// CHECK-NEXT: return
// CHECK: {{^}}// -----{{$}}
// CHECK-NEXT: {{^}}// -----{{$}}
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @also_fine
func.func @fine() {
  return
}

// -----

func.func @broken(%a: i32) -> i32 {
  // ERR: split-input-file-errors.mlir:[[@LINE+1]]:19: error: use of value '%a' expects different type than prior uses: 'i64' vs 'i32'
  %b = arith.addi %a, %a : i64
  return %b : i32
}
// ERR: split-input-file-errors.mlir:[[@LINE-5]]:19: note: prior use here

// -----

func.func @also_fine() {
  return
}

// -----

func.func @unknown_op() {
  // ERR: split-input-file-errors.mlir:[[@LINE+1]]:8: error: custom op 'arith.frobnicate' is unknown
  %x = arith.frobnicate : i32
  return
}
