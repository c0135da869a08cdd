// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 1 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc200 | FileCheck %s

// A data-dependent scf.if in a Repeat: each step subtracts (sum > 0) or adds, by an amount
// computed from the induction variable (carried as a 0-d counter), and counts the steps that
// took the first block in an i32 carried through both blocks: both blocks run in one run.

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK: check output 1: max abs error 0, max rel error 0 (exact): ok
// CHECK: supersteps:

#id = affine_map<(d0) -> (d0)>
#red = affine_map<(d0) -> ()>
func.func @main(%x0: tensor<64xf32>) -> (tensor<64xf32>, tensor<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1 : i32
  %none = arith.constant 0 : i32
  %step = arith.constant 0.75 : f32
  %e = tensor.empty() : tensor<64xf32>
  %e0 = tensor.empty() : tensor<f32>
  %r:2 = scf.for %k = %c0 to %c8 step %c1 iter_args(%x = %x0, %taken = %none) -> (tensor<64xf32>, i32) {
    %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction"]} ins(%x : tensor<64xf32>) outs(%z : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %a = arith.addf %v, %acc : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    %sum = tensor.extract %s[] : tensor<f32>
    %positive = arith.cmpf ogt, %sum, %zero : f32
    %k64 = arith.index_cast %k : index to i64
    %kf = arith.sitofp %k64 : i64 to f32
    %n:2 = scf.if %positive -> (tensor<64xf32>, i32) {
      %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
      ^bb0(%v: f32, %o: f32):
        %w = arith.subf %v, %step : f32
        %u = arith.subf %w, %kf : f32
        linalg.yield %u : f32
      } -> tensor<64xf32>
      %t = arith.addi %taken, %one : i32
      scf.yield %d, %t : tensor<64xf32>, i32
    } else {
      %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
      ^bb0(%v: f32, %o: f32):
        %w = arith.addf %v, %kf : f32
        linalg.yield %w : f32
      } -> tensor<64xf32>
      scf.yield %d, %taken : tensor<64xf32>, i32
    }
    scf.yield %n#0, %n#1 : tensor<64xf32>, i32
  }
  %t = tensor.from_elements %r#1 : tensor<i32>
  return %r#0, %t : tensor<64xf32>, tensor<i32>
}
