// --verify-diagnostics checks the diagnostics against the expected-* annotations, as mlir-opt
// does; when every diagnostic was expected and every expectation met, the exit status is 0 even
// though chunks failed.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics
// RUN: ipu-opt %s -split-input-file -verify-diagnostics -p 'canonicalize,ipu-set-target{target=tiny},func.func(cse)'

// expected-note@below {{prior use here}}
func.func @relative(%a: i32) -> i32 {
  // expected-error@+1 {{use of value '%a' expects different type than prior uses: 'i64' vs 'i32'}}
  %b = arith.addi %a, %a : i64
  return %b : i32
}

// -----

func.func @same_line() {
  %x = arith.frobnicate : i32 // expected-error {{custom op 'arith.frobnicate' is unknown}}
  return
}

// -----

func.func @above_and_minus() {
  %x = arith.frobnicate : i32
  // expected-error@above {{is unknown}}
  return
}

// -----

func.func @minus() {
  %x = arith.frobnicate : i32

  // expected-error@-2 {{'arith.frobnicate'}}
  return
}

// -----

// An ipu-opt extension that mlir-opt 22 does not have: @N is an absolute line number.
// expected-error@43 {{custom op 'arith.frobnicate' is unknown}}
func.func @absolute() {
  %x = arith.frobnicate : i32
  return
}

// -----

func.func @regex(%a: i32) -> i32 {
  // expected-error-re@+1 {{expects different type than prior uses: 'i{{[0-9]+}}' vs 'i32'}}
  %b = arith.addi %a, %a : i16
  return %b : i32
}
// expected-note@-5 {{prior use here}}

// -----

// expected-error@unknown {{'arith.constant' op failed to verify that all of {value, result} have same type}}
"func.func"() ({
  %x = "arith.constant"() {value = 1 : i32} : () -> i64 loc(unknown)
  "func.return"() : () -> ()
}) {sym_name = "unknown_location", function_type = () -> ()} : () -> ()

// -----

// A chunk without diagnostics is fine too.
func.func @valid() {
  return
}
