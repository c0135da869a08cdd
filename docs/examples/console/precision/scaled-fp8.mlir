// A per-tensor-scaled FP8 linear layer as PyTorch writes it: x quantized by 2^-5 (divide,
// clamp to E4M3's 448, truncf), both operands dequantized (extf, times 2^-5 and 2^-6), an f32
// matmul. ipu-fp8-matmul makes the product one FP8 matmul with log2 scale -11
// (docs/precision.md); the reference runs the program as written, and the two agree bit for
// bit: the scales are powers of two and every dequantized value is exact.

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<16x64xf32>, %wq: tensor<48x64xf8E4M3FN>) -> tensor<16x48xf32> {
  %zero = arith.constant 0.0 : f32
  %xs = arith.constant 3.125000e-02 : f32
  %ws = arith.constant 1.562500e-02 : f32
  %lo = arith.constant -448.0 : f32
  %hi = arith.constant 448.0 : f32
  %e0 = tensor.empty() : tensor<16x64xf8E4M3FN>
  %xq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x64xf32>) outs(%e0 : tensor<16x64xf8E4M3FN>) {
  ^bb0(%in: f32, %out: f8E4M3FN):
    %0 = arith.divf %in, %xs : f32
    %1 = arith.maximumf %0, %lo : f32
    %2 = arith.minimumf %1, %hi : f32
    %3 = arith.truncf %2 : f32 to f8E4M3FN
    linalg.yield %3 : f8E4M3FN
  } -> tensor<16x64xf8E4M3FN>
  %e1 = tensor.empty() : tensor<16x64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%xq : tensor<16x64xf8E4M3FN>) outs(%e1 : tensor<16x64xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %xs : f32
    linalg.yield %1 : f32
  } -> tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<48x64xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%wq : tensor<48x64xf8E4M3FN>) outs(%e2 : tensor<48x64xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %ws : f32
    linalg.yield %1 : f32
  } -> tensor<48x64xf32>
  %e3 = tensor.empty() : tensor<64x48xf32>
  %wt = linalg.transpose ins(%w : tensor<48x64xf32>) outs(%e3 : tensor<64x48xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<16x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e4 : tensor<16x48xf32>) -> tensor<16x48xf32>
  %y = linalg.matmul ins(%a, %wt : tensor<16x64xf32>, tensor<64x48xf32>) outs(%acc : tensor<16x48xf32>) -> tensor<16x48xf32>
  return %y : tensor<16x48xf32>
}
