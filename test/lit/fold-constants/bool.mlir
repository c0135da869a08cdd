// RUN: ipu-opt %s -p 'builtin.module(ipu-fold-constants)' | FileCheck %s

// A folded i1 tensor (a comparison of constants, as the backward of a TransformerEncoderLayer
// has) becomes an i1 constant: the bindings refuse a bool buffer given the i1 type explicitly.

// CHECK-LABEL: func.func @compare
// CHECK: arith.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-NOT: arith.cmpi
func.func @compare() -> tensor<3xi1> {
  %a = arith.constant dense<[1, 2, 3]> : tensor<3xi64>
  %two = arith.constant 2 : i64
  %e = tensor.empty() : tensor<3xi1>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<3xi64>) outs(%e : tensor<3xi1>) {
  ^bb0(%x: i64, %o: i1):
    %c = arith.cmpi sgt, %x, %two : i64
    linalg.yield %c : i1
  } -> tensor<3xi1>
  return %r : tensor<3xi1>
}
