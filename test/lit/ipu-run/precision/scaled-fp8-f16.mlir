// RUN: ipu-run %s --target c600 --random-inputs 0 --check | FileCheck %s
// RUN: ipu-compile %s --target c600 -o - | FileCheck --check-prefix=L3 %s

// Graphcore's format (f8E4M3FNUZ, Poplar's F143) dequantized in f16 (times 4, divided by 8),
// a batched product into f16, as PopXL's matmul_pow2scaled returns it: one FP8 product with
// log2 scale -1, its f32 sum scaled and rounded once into f16. The reference (the program as
// written, promoted to f32 and rounded per op) agrees bit for bit.

// CHECK: check output 0: max abs error 0, max rel error 0 (rtol {{.*}}): ok
// L3: "ipu.matmul"(%{{.*}}, %{{.*}}) {ipu.quarter = {format = "f143", log2_scale = -1 : i32}} : (tensor<{{.*}}xf8E4M3FNUZ>, tensor<{{.*}}xf8E4M3FNUZ>) -> tensor<{{.*}}xf16>

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @main(%aq: tensor<2x16x96xf8E4M3FNUZ>, %bq: tensor<2x96x24xf8E4M3FNUZ>) -> tensor<2x16x24xf16> {
  %zero = arith.constant 0.0 : f16
  %four = arith.constant 4.0 : f16
  %eight = arith.constant 8.0 : f16
  %e0 = tensor.empty() : tensor<2x16x96xf16>
  %a = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%aq : tensor<2x16x96xf8E4M3FNUZ>) outs(%e0 : tensor<2x16x96xf16>) {
  ^bb0(%in: f8E4M3FNUZ, %out: f16):
    %0 = arith.extf %in : f8E4M3FNUZ to f16
    %1 = arith.mulf %0, %four : f16
    linalg.yield %1 : f16
  } -> tensor<2x16x96xf16>
  %e1 = tensor.empty() : tensor<2x96x24xf16>
  %b = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bq : tensor<2x96x24xf8E4M3FNUZ>) outs(%e1 : tensor<2x96x24xf16>) {
  ^bb0(%in: f8E4M3FNUZ, %out: f16):
    %0 = arith.extf %in : f8E4M3FNUZ to f16
    %1 = arith.divf %0, %eight : f16
    linalg.yield %1 : f16
  } -> tensor<2x96x24xf16>
  %e2 = tensor.empty() : tensor<2x16x24xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e2 : tensor<2x16x24xf16>) -> tensor<2x16x24xf16>
  %y = linalg.batch_matmul ins(%a, %b : tensor<2x16x96xf16>, tensor<2x96x24xf16>) outs(%acc : tensor<2x16x24xf16>) -> tensor<2x16x24xf16>
  return %y : tensor<2x16x24xf16>
}
