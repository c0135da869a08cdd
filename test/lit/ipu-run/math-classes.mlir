// math.erfc, isnan and isfinite against the ExecutionEngine (libm's erfc; LLVM's class tests).
// isinf, isnormal and clampf have no LLVM lowering in MLIR 22 (the reference refuses them);
// test_codelet.py checks them against numpy.
// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s

// CHECK: check output 0: {{.*}}: ok
// CHECK: check output 1: {{.*}} (exact): ok
// CHECK: check output 2: {{.*}} (exact): ok
#id = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xi1>, tensor<256xi1>) {
  %e = tensor.empty() : tensor<256xf32>
  %b = tensor.empty() : tensor<256xi1>
  %r:3 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<256xf32>) outs(%e, %b, %b : tensor<256xf32>, tensor<256xi1>, tensor<256xi1>) {
  ^bb0(%a: f32, %o0: f32, %o1: i1, %o2: i1):
    %three = arith.constant 3.0 : f32
    %zero = arith.constant 0.0 : f32
    %s = arith.mulf %a, %three : f32          // into erfc's far range
    %c = math.erfc %s : f32
    %q = arith.divf %a, %zero : f32           // +-inf, and NaN for 0/0
    %n = math.isnan %q : f32
    %f = math.isfinite %q : f32
    linalg.yield %c, %n, %f : f32, i1, i1
  } -> (tensor<256xf32>, tensor<256xi1>, tensor<256xi1>)
  return %r#0, %r#1, %r#2 : tensor<256xf32>, tensor<256xi1>, tensor<256xi1>
}
