// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 1 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc200 | FileCheck %s

// Scalar code as front ends leave it before folding: a trip count and a coordinate computed
// from index constants (folded before the scalars' rewrite, so Repeat keeps its constant
// bound and the read is a slice), and an arith.select of tensors on a scalar condition (a
// generic reading the condition's 0-d tensor as a broadcast input).

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK: supersteps:

func.func @main(%x: tensor<8xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.muli %c2, %c2 : index
  %i = arith.addi %c1, %c2 : index
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%t = %x) -> tensor<8xf32> {
    %v = tensor.extract %t[%i] : tensor<8xf32>
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %v, %zero : f32
    %s = arith.select %pos, %t, %c : tensor<8xf32>
    %d = arith.addf %s, %t : tensor<8xf32>
    scf.yield %d : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
