// RUN: ipu-run %s --target tiny --random-inputs 0 --check | FileCheck %s
// RUN: ipu-run %s --target tiny --random-inputs 3 --check | FileCheck %s

// Scaled f8E4M3FNUZ as PyTorch writes it (x / scale, clamped, cast; the product dequantized in
// f32), with an FP8 result: the activation's per-tensor scale maps its largest magnitude to
// the format's largest value (240), the product of FP8 operands sums in f32 and rounds once,
// and an FP8 addition rounds into the format. The JIT has no FP8: the reference rounds every
// FP8 op with its own f32 arithmetic (docs/precision.md); the result's tolerance is one step
// of the format at its largest value (eps 0.125), the f32 one's f32's.

// CHECK: check output 0: max abs error {{.*}} (rtol 0.0001): ok
// CHECK: check output 1: max abs error {{.*}} (rtol 0.125): ok
// CHECK: output 0: 16x8 float32
// CHECK: output 1: 16x8 float8_e4m3fnuz

#id = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
func.func @main(%x: tensor<16x32xf32>, %w: tensor<32x8xf8E4M3FNUZ>, %wscale: tensor<f32>) -> (tensor<16x8xf32>, tensor<16x8xf8E4M3FNUZ>) {
  %zero = arith.constant 0.0 : f32
  %largest = arith.constant 240.0 : f32
  %scalar = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%scalar : tensor<f32>) -> tensor<f32>
  %amax = linalg.reduce ins(%x : tensor<16x32xf32>) outs(%init : tensor<f32>) dimensions = [0, 1]
    (%v: f32, %acc: f32) {
      %a = math.absf %v : f32
      %m = arith.maximumf %a, %acc : f32
      linalg.yield %m : f32
    }
  %e8 = tensor.empty() : tensor<16x32xf8E4M3FNUZ>
  %q = linalg.generic {indexing_maps = [#id, #all, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %amax : tensor<16x32xf32>, tensor<f32>) outs(%e8 : tensor<16x32xf8E4M3FNUZ>) {
  ^bb0(%v: f32, %m: f32, %o: f8E4M3FNUZ):
    %s = arith.divf %m, %largest : f32
    %scaled = arith.divf %v, %s : f32
    %c = arith.truncf %scaled : f32 to f8E4M3FNUZ
    linalg.yield %c : f8E4M3FNUZ
  } -> tensor<16x32xf8E4M3FNUZ>
  %e = tensor.empty() : tensor<16x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %p = linalg.matmul ins(%q, %w : tensor<16x32xf8E4M3FNUZ>, tensor<32x8xf8E4M3FNUZ>) outs(%f : tensor<16x8xf32>) -> tensor<16x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #all, #all, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %amax, %wscale : tensor<16x8xf32>, tensor<f32>, tensor<f32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%v: f32, %m: f32, %ws: f32, %o: f32):
    %s = arith.divf %m, %largest : f32
    %both = arith.mulf %s, %ws : f32
    %r = arith.mulf %v, %both : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  %z8 = arith.constant 0.0 : f8E4M3FNUZ
  %eo = tensor.empty() : tensor<16x8xf8E4M3FNUZ>
  %fo = linalg.fill ins(%z8 : f8E4M3FNUZ) outs(%eo : tensor<16x8xf8E4M3FNUZ>) -> tensor<16x8xf8E4M3FNUZ>
  %slice = tensor.extract_slice %q[0, 0] [16, 8] [1, 1] : tensor<16x32xf8E4M3FNUZ> to tensor<16x8xf8E4M3FNUZ>
  %p8 = linalg.matmul ins(%q, %w : tensor<16x32xf8E4M3FNUZ>, tensor<32x8xf8E4M3FNUZ>) outs(%fo : tensor<16x8xf8E4M3FNUZ>) -> tensor<16x8xf8E4M3FNUZ>
  %sum = linalg.add ins(%p8, %slice : tensor<16x8xf8E4M3FNUZ>, tensor<16x8xf8E4M3FNUZ>) outs(%eo : tensor<16x8xf8E4M3FNUZ>) -> tensor<16x8xf8E4M3FNUZ>
  return %y, %sum : tensor<16x8xf32>, tensor<16x8xf8E4M3FNUZ>
}
