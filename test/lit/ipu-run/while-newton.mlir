// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 1 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc200 | FileCheck %s

// Newton's iteration for sqrt(x^2 + 0.5) until the largest residual |y^2 - a| is below 1e-5
// (or 50 steps): scf.while as Poplar's RepeatWhileTrue, the residual a reduction to a 0-d
// tensor, the step count an i32 carried through the loop and returned.

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK: check output 1: max abs error 0, max rel error 0 (exact): ok
// CHECK: supersteps:

#id = affine_map<(d0) -> (d0)>
#red = affine_map<(d0) -> ()>
func.func @main(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<i32>) {
  %one = arith.constant dense<1.0> : tensor<64xf32>
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %tol = arith.constant 1.0e-5 : f32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %max = arith.constant 50 : i32
  %e64 = tensor.empty() : tensor<64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e64 : tensor<64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %sq = arith.mulf %v, %v : f32
    %p = arith.addf %sq, %half : f32
    linalg.yield %p : f32
  } -> tensor<64xf32>
  %r:2 = scf.while (%y = %one, %k = %c0) : (tensor<64xf32>, i32) -> (tensor<64xf32>, i32) {
    %e0 = tensor.empty() : tensor<f32>
    %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %res = linalg.generic {indexing_maps = [#id, #id, #red], iterator_types = ["reduction"]} ins(%y, %a : tensor<64xf32>, tensor<64xf32>) outs(%z : tensor<f32>) {
    ^bb0(%yv: f32, %av: f32, %acc: f32):
      %y2 = arith.mulf %yv, %yv : f32
      %d = arith.subf %y2, %av : f32
      %ad = math.absf %d : f32
      %m = arith.maximumf %ad, %acc : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    %err = tensor.extract %res[] : tensor<f32>
    %go = arith.cmpf ogt, %err, %tol : f32
    %more = arith.cmpi slt, %k, %max : i32
    %c = arith.andi %go, %more : i1
    scf.condition(%c) %y, %k : tensor<64xf32>, i32
  } do {
  ^bb0(%y: tensor<64xf32>, %k: i32):
    %yn = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%y, %a : tensor<64xf32>, tensor<64xf32>) outs(%e64 : tensor<64xf32>) {
    ^bb0(%yv: f32, %av: f32, %o: f32):
      %q = arith.divf %av, %yv : f32
      %s = arith.addf %yv, %q : f32
      %h = arith.mulf %s, %half : f32
      linalg.yield %h : f32
    } -> tensor<64xf32>
    %k1 = arith.addi %k, %c1 : i32
    scf.yield %yn, %k1 : tensor<64xf32>, i32
  }
  %kt = tensor.from_elements %r#1 : tensor<i32>
  return %r#0, %kt : tensor<64xf32>, tensor<i32>
}
