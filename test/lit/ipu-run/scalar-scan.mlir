// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 1 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc200 | FileCheck %s

// A prefix sum written element by element: tensor.extract at the induction variable and the one
// before it (gathers at coordinates computed on the device), a scalar add, tensor.insert at the
// induction variable (a generic selecting the new value where the coordinate matches).

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK: supersteps:

func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %r = scf.for %i = %c1 to %c16 step %c1 iter_args(%t = %x) -> tensor<16xf32> {
    %im1 = arith.subi %i, %c1 : index
    %a = tensor.extract %t[%im1] : tensor<16xf32>
    %b = tensor.extract %t[%i] : tensor<16xf32>
    %s = arith.addf %a, %b : f32
    %t2 = tensor.insert %s into %t[%i] : tensor<16xf32>
    scf.yield %t2 : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
