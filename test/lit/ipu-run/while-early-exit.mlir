// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 1 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc200 | FileCheck %s

// An early-exit loop: the index of the first element above 0.9 (64 if none) and that element,
// searched one element an iteration. scf.while carries an index (as an i64 0-d tensor), an i1
// and an f32; each step reads x at the carried index (a gather at a device coordinate).

// CHECK: check output 0: max abs error 0, max rel error 0 (exact): ok
// CHECK: check output 1: max abs error {{.*}}: ok
// CHECK: supersteps:

func.func @main(%x: tensor<64xf32>) -> (tensor<i32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %th = arith.constant 0.9 : f32
  %false = arith.constant false
  %true = arith.constant true
  %zero = arith.constant 0.0 : f32
  %r:3 = scf.while (%i = %c0, %found = %false, %v = %zero) : (index, i1, f32) -> (index, i1, f32) {
    %inside = arith.cmpi slt, %i, %c64 : index
    %missing = arith.xori %found, %true : i1
    %go = arith.andi %inside, %missing : i1
    scf.condition(%go) %i, %found, %v : index, i1, f32
  } do {
  ^bb0(%i: index, %found: i1, %v: f32):
    %e = tensor.extract %x[%i] : tensor<64xf32>
    %hit = arith.cmpf ogt, %e, %th : f32
    %next = arith.addi %i, %c1 : index
    %i2 = arith.select %hit, %i, %next : index
    scf.yield %i2, %hit, %e : index, i1, f32
  }
  %i32 = arith.index_cast %r#0 : index to i32
  %t = tensor.from_elements %i32 : tensor<i32>
  %vt = tensor.from_elements %r#2 : tensor<f32>
  return %t, %vt : tensor<i32>, tensor<f32>
}
