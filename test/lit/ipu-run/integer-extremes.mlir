// RUN: ipu-run %s --target tiny --input %S/Inputs/integer-extremes-x.npy %S/Inputs/integer-extremes-y.npy %S/Inputs/integer-extremes-b.npy --check | FileCheck %s

// Integers at their extremes (INT_MAX, INT_MIN, -1 read as unsigned, i8 wrapping), which
// random inputs in [-8, 8) never reach: wrapping add and mul, floor and ceil division and
// remainders of negatives, unsigned division, remainder, compare and max of values with the
// top bit set, uitofp / sitofp. Every divisor is non-zero and no division is INT_MIN / -1
// (undefined in MLIR). Each output exact against the ExecutionEngine.

// CHECK-COUNT-15: check output {{[0-9]+}}: max abs error 0, {{.*}}: ok
// CHECK-NOT: FAILED

func.func @main(%x: tensor<8xi32>, %y: tensor<8xi32>, %b: tensor<8xi8>) -> (tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi1>, tensor<8xi1>, tensor<8xi8>, tensor<8xi8>, tensor<8xi32>, tensor<8xi32>) {
  %a = arith.addi %x, %y : tensor<8xi32>
  %m = arith.muli %x, %y : tensor<8xi32>
  %d = arith.floordivsi %x, %y : tensor<8xi32>
  %c = arith.ceildivsi %x, %y : tensor<8xi32>
  %r = arith.remsi %x, %y : tensor<8xi32>
  %du = arith.divui %x, %y : tensor<8xi32>
  %ru = arith.remui %x, %y : tensor<8xi32>
  %u = arith.uitofp %x : tensor<8xi32> to tensor<8xf32>
  %s = arith.sitofp %x : tensor<8xi32> to tensor<8xf32>
  %lt = arith.cmpi ult, %x, %y : tensor<8xi32>
  %slt = arith.cmpi slt, %x, %y : tensor<8xi32>
  %ba = arith.addi %b, %b : tensor<8xi8>
  %bm = arith.muli %b, %b : tensor<8xi8>
  %mx = arith.maxui %x, %y : tensor<8xi32>
  %mn = arith.minsi %x, %y : tensor<8xi32>
  return %a, %m, %d, %c, %r, %du, %ru, %u, %s, %lt, %slt, %ba, %bm, %mx, %mn : tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi1>, tensor<8xi1>, tensor<8xi8>, tensor<8xi8>, tensor<8xi32>, tensor<8xi32>
}
