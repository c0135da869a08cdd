// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 1 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc200 | FileCheck %s

// Scalars of f16, i8 and i64: extracted, computed on one tile, inserted back or gathered by
// tensor.from_elements.

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK: check output 1: max abs error 0, max rel error 0 (exact): ok
// CHECK: check output 2: max abs error 0, max rel error 0 (exact): ok

func.func @main(%h: tensor<8xf16>, %b: tensor<8xi8>, %l: tensor<8xi64>) -> (tensor<8xf16>, tensor<8xi8>, tensor<2xi64>) {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %x = tensor.extract %h[%c5] : tensor<8xf16>
  %y = arith.mulf %x, %x : f16
  %yh = tensor.insert %y into %h[%c0] : tensor<8xf16>
  %p = tensor.extract %b[%c0] : tensor<8xi8>
  %q = tensor.extract %b[%c5] : tensor<8xi8>
  %m = arith.maxsi %p, %q : i8
  %bm = tensor.insert %m into %b[%c5] : tensor<8xi8>
  %u = tensor.extract %l[%c0] : tensor<8xi64>
  %v = tensor.extract %l[%c5] : tensor<8xi64>
  %w = arith.muli %u, %v : i64
  %z = arith.subi %u, %w : i64
  %t = tensor.from_elements %w, %z : tensor<2xi64>
  return %yh, %bm, %t : tensor<8xf16>, tensor<8xi8>, tensor<2xi64>
}
