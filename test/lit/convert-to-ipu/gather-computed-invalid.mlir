// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-index-to-iota,ipu-convert-to-ipu)'

// A tensor.extract at coordinates computed from an output (the accumulator of a reduction:
// each step's coordinate depends on the previous step) is no gather: it is refused by name.

func.func @pointer_chase(%x: tensor<3x5xi64>, %table: tensor<8xi64>) -> tensor<3xi64> {
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<3xi64>
  %z = linalg.fill ins(%c0 : i64) outs(%e : tensor<3xi64>) -> tensor<3xi64>
  // expected-error@+1 {{'linalg.generic' is not supported by ipu-convert-to-ipu: 'tensor.extract' at coordinates computed from an output}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<3x5xi64>) outs(%z : tensor<3xi64>) {
  ^bb0(%in: i64, %acc: i64):
    %k = arith.index_cast %acc : i64 to index
    %t = tensor.extract %table[%k] : tensor<8xi64>
    %s = arith.addi %t, %in : i64
    linalg.yield %s : i64
  } -> tensor<3xi64>
  return %r : tensor<3xi64>
}
