// An op of a dialect nobody here knows, in generic form, is refused where it stands.
// RUN: not ipu-run %s --random-inputs 0 2>&1 | FileCheck %s
// RUN: not ipu-compile %s 2>&1 | FileCheck %s --check-prefix=COMPILE

// CHECK: unknown-dialect.mlir:[[@LINE+5]]:10: error: 'mystery.op' is not supported: ipu-mlir and the MLIR bindings do not know the mystery dialect
// COMPILE: unknown-dialect.mlir:[[@LINE+4]]:10: error: 'mystery.op' is not supported: ipu-mlir does not know the mystery dialect
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "main"}> ({
  ^bb0(%x: tensor<8xf32>):
    %0 = "mystery.op"(%x) : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
