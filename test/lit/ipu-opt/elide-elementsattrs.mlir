// --mlir-elide-elementsattrs-if-larger=N prints elements attributes of more than N elements
// as a placeholder, in the output and in IR dumps; smaller ones in full.
// RUN: ipu-opt %s --mlir-elide-elementsattrs-if-larger=4 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(cse)' --mlir-print-ir-after-all --mlir-elide-elementsattrs-if-larger=4 -o %t 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: not ipu-opt %s --mlir-elide-elementsattrs-if-larger=0 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: arith.constant dense_resource<__elided__> : tensor<5xf32>
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>

// DUMP: IR Dump After CSE (cse)
// DUMP: arith.constant dense_resource<__elided__> : tensor<5xf32>

// BAD: ipu-opt: error: argument --mlir-elide-elementsattrs-if-larger: invalid value '0': a positive integer
func.func @f() -> (tensor<5xf32>, tensor<2xf32>) {
  %big = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %small = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %big, %small : tensor<5xf32>, tensor<2xf32>
}
