// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-plan)'

// A carried tensor lives in a buffer from before the loop: it needs an initial value, which a
// tensor.empty is not (the first iteration would read undefined elements).

#id = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %e = tensor.empty() : tensor<256xf32>
    // expected-error@+1 {{'scf.for' op carries a tensor.empty (iter_arg #0): a carried tensor needs an initial value (fill it)}}
    %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%u = %e) -> tensor<256xf32> {
      %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
          ins(%x : tensor<256xf32>) outs(%u : tensor<256xf32>) {
      ^bb0(%a: f32, %o: f32):
        %v = arith.addf %a, %o : f32
        linalg.yield %v : f32
      } -> tensor<256xf32>
      scf.yield %n : tensor<256xf32>
    }
    return %r : tensor<256xf32>
  }
}
