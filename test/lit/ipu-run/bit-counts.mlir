// math.ctlz, math.cttz and math.ctpop on the edges of i64 and i8 (0, -1, the sign bit alone,
// powers of two) and on random inputs, against the ExecutionEngine (LLVM's intrinsics).
// RUN: ipu-run %s --entry edges --random-inputs 1 --check --target tiny | FileCheck %s --check-prefix=EDGES
// RUN: ipu-run %s --entry random --random-inputs 0 --check --target tiny | FileCheck %s --check-prefix=RANDOM

// EDGES-COUNT-3: (exact): ok
// RANDOM-COUNT-3: (exact): ok
#id = affine_map<(d0) -> (d0)>
func.func @edges(%x: tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>) {
  %c = arith.constant dense<[0, -1, -9223372036854775808, 1, 2, 1024, 9223372036854775807, 12345678901]> : tensor<8xi64>
  %e = tensor.empty() : tensor<8xi64>
  %r:3 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%c, %x : tensor<8xi64>, tensor<8xi64>) outs(%e, %e, %e : tensor<8xi64>, tensor<8xi64>, tensor<8xi64>) {
  ^bb0(%a: i64, %b: i64, %o0: i64, %o1: i64, %o2: i64):
    %s = arith.addi %a, %b : i64
    %l = math.ctlz %s : i64
    %t = math.cttz %s : i64
    %p = math.ctpop %s : i64
    linalg.yield %l, %t, %p : i64, i64, i64
  } -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>)
  return %r#0, %r#1, %r#2 : tensor<8xi64>, tensor<8xi64>, tensor<8xi64>
}

func.func @random(%x: tensor<256xi8>) -> (tensor<256xi8>, tensor<256xi8>, tensor<256xi8>) {
  %e = tensor.empty() : tensor<256xi8>
  %r:3 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<256xi8>) outs(%e, %e, %e : tensor<256xi8>, tensor<256xi8>, tensor<256xi8>) {
  ^bb0(%a: i8, %o0: i8, %o1: i8, %o2: i8):
    %l = math.ctlz %a : i8
    %t = math.cttz %a : i8
    %p = math.ctpop %a : i8
    linalg.yield %l, %t, %p : i8, i8, i8
  } -> (tensor<256xi8>, tensor<256xi8>, tensor<256xi8>)
  return %r#0, %r#1, %r#2 : tensor<256xi8>, tensor<256xi8>, tensor<256xi8>
}
