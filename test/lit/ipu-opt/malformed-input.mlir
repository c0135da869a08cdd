// Errors are printed as file:line:col: error: message, with the source line and a caret, as
// mlir-opt prints them, and ipu-opt exits with status 1 without printing any IR.
// RUN: not ipu-opt %s 2>&1 | FileCheck %s --implicit-check-not=module
// Read from stdin, the file is called <stdin>.
// RUN: not ipu-opt < %s 2>&1 | FileCheck %s --check-prefix=STDIN
// An input that cannot be read.
// RUN: not ipu-opt %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

func.func @f(%a: i32) -> i32 {
  // CHECK: malformed-input.mlir:[[@LINE+5]]:19: error: use of value '%a' expects different type than prior uses: 'i64' vs 'i32'
  // CHECK-NEXT: {{^}}  %b = arith.addi %a, %a : i64
  // CHECK-NEXT: {{^}}                  ^
  // CHECK-NEXT: malformed-input.mlir:[[@LINE-4]]:14: note: prior use here
  // STDIN: <stdin>:[[@LINE+1]]:19: error: use of value
  %b = arith.addi %a, %a : i64
  return %b : i32
}

// MISSING: ipu-opt: error: cannot open '{{.*}}does-not-exist.mlir': No such file or directory
