// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 1 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc200 | FileCheck %s

// Conjugate gradient to convergence: scf.while carrying x, r, p, the f32 residual norm and an
// i32 count, until r.r <= 1e-10 (or 40 iterations); returns x and the iterations taken.

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK: check output 1: max abs error 0, max rel error 0 (exact): ok
// CHECK: supersteps:

#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%m: tensor<16x16xf32>, %b: tensor<16xf32>) -> (tensor<16xf32>, tensor<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 16.0 : f32
  %e2 = tensor.empty() : tensor<16x16xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %mt = linalg.transpose ins(%m : tensor<16x16xf32>) outs(%e2 : tensor<16x16xf32>) permutation = [1, 0]
  %mtm = linalg.matmul ins(%mt, %m : tensor<16x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%mtm : tensor<16x16xf32>) outs(%e2 : tensor<16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %d = arith.cmpi eq, %i, %j : index
    %w = arith.addf %v, %n : f32
    %s = arith.select %d, %w, %v : f32
    linalg.yield %s : f32
  } -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %x0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %rr0 = linalg.dot ins(%b, %b : tensor<16xf32>, tensor<16xf32>) outs(%z0 : tensor<f32>) -> tensor<f32>
  %rs0 = tensor.extract %rr0[] : tensor<f32>
  %tol = arith.constant 1.0e-10 : f32
  %kmax = arith.constant 40 : i32
  %k0 = arith.constant 0 : i32
  %k1 = arith.constant 1 : i32
  %res:5 = scf.while (%x = %x0, %r = %b, %p = %b, %rs = %rs0, %k = %k0) : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, f32, i32) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, f32, i32) {
    %big = arith.cmpf ogt, %rs, %tol : f32
    %more = arith.cmpi slt, %k, %kmax : i32
    %go = arith.andi %big, %more : i1
    scf.condition(%go) %x, %r, %p, %rs, %k : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, f32, i32
  } do {
  ^bb0(%x: tensor<16xf32>, %r: tensor<16xf32>, %p: tensor<16xf32>, %rs: f32, %k: i32):
    %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
    %ap = linalg.matvec ins(%a, %p : tensor<16x16xf32>, tensor<16xf32>) outs(%z1 : tensor<16xf32>) -> tensor<16xf32>
    %pap_t = linalg.dot ins(%p, %ap : tensor<16xf32>, tensor<16xf32>) outs(%z0 : tensor<f32>) -> tensor<f32>
    %pap = tensor.extract %pap_t[] : tensor<f32>
    %alpha = arith.divf %rs, %pap : f32
    %xn = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %p : tensor<16xf32>, tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
    ^bb0(%xv: f32, %pv: f32, %o: f32):
      %t = arith.mulf %alpha, %pv : f32
      %u = arith.addf %xv, %t : f32
      linalg.yield %u : f32
    } -> tensor<16xf32>
    %rn = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%r, %ap : tensor<16xf32>, tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
    ^bb0(%rv: f32, %av: f32, %o: f32):
      %t = arith.mulf %alpha, %av : f32
      %u = arith.subf %rv, %t : f32
      linalg.yield %u : f32
    } -> tensor<16xf32>
    %rsn_t = linalg.dot ins(%rn, %rn : tensor<16xf32>, tensor<16xf32>) outs(%z0 : tensor<f32>) -> tensor<f32>
    %rsn = tensor.extract %rsn_t[] : tensor<f32>
    %beta = arith.divf %rsn, %rs : f32
    %pn = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%rn, %p : tensor<16xf32>, tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
    ^bb0(%rv: f32, %pv: f32, %o: f32):
      %t = arith.mulf %beta, %pv : f32
      %u = arith.addf %rv, %t : f32
      linalg.yield %u : f32
    } -> tensor<16xf32>
    %kn = arith.addi %k, %k1 : i32
    scf.yield %xn, %rn, %pn, %rsn, %kn : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, f32, i32
  }
  %iters = tensor.from_elements %res#4 : tensor<i32>
  return %res#0, %iters : tensor<16xf32>, tensor<i32>
}
