// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 1 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc200 | FileCheck %s

// A while loop whose before block computes the value it hands on (do-while form): y is halved
// until its largest magnitude is at most 0.05; the body reads the halved tensor where the
// before block left it, and the loop's result is that buffer after the last condition.

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK: supersteps:

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %limit = arith.constant 0.05 : f32
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<64xf32>
  %e0 = tensor.empty() : tensor<f32>
  %r = scf.while (%y = %x) : (tensor<64xf32>) -> tensor<64xf32> {
    %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %w = arith.mulf %v, %half : f32
      linalg.yield %w : f32
    } -> tensor<64xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%h : tensor<64xf32>) outs(%z : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %a = math.absf %v : f32
      %m = arith.maximumf %a, %acc : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    %big = tensor.extract %s[] : tensor<f32>
    %go = arith.cmpf ogt, %big, %limit : f32
    scf.condition(%go) %h : tensor<64xf32>
  } do {
  ^bb0(%h: tensor<64xf32>):
    %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%h : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %w = arith.addf %v, %v : f32
      %q = arith.mulf %w, %half : f32
      %u = arith.mulf %q, %half : f32
      %t = arith.addf %u, %u : f32
      %k = arith.mulf %t, %half : f32
      linalg.yield %k : f32
    } -> tensor<64xf32>
    scf.yield %d : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}
