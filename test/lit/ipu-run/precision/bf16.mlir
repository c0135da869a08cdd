// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target tiny --random-inputs 0 --check --output-dir %t/out | FileCheck %s
// RUN: %PYTHON -c "import numpy as n, ml_dtypes as m; a = n.load('%t/out/output0.npy'); print(a.dtype, a.view(m.bfloat16).dtype, a.shape)" | FileCheck --check-prefix=FILE %s
// RUN: %PYTHON -c "import numpy as n; n.save('%t/x.npy', n.ones((16, 32), n.float32))"
// RUN: not ipu-run %s --target tiny --input %t/x.npy %t/x.npy %t/x.npy 2>&1 | FileCheck --check-prefix=WRONG %s

// A bf16 linear layer with a bias and a SiLU-like gate: products sum in f32 and round once,
// every element-wise op rounds into bf16 (docs/precision.md), in the reference (MLIR's JIT on
// the program promoted to f32, rounding after each bf16 op) as in the simulator.

// CHECK: check output 0: max abs error {{.*}} (rtol 0.0625): ok
// CHECK: output 0: 16x8 bfloat16 -> {{.*}}out/output0.npy

// .npy has no bf16: the file holds the bits as 2-byte void elements, read back with ml_dtypes.
// FILE: |V2 bfloat16 (16, 8)

// WRONG: ipu-run: error: input #0 of @main: expected 16x32 bfloat16, got 16x32 float32

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<16x32xbf16>, %w: tensor<32x8xbf16>, %b: tensor<8xbf16>) -> tensor<16x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<16x8xbf16>
  %f = linalg.fill ins(%zero : bf16) outs(%e : tensor<16x8xbf16>) -> tensor<16x8xbf16>
  %m = linalg.matmul ins(%x, %w : tensor<16x32xbf16>, tensor<32x8xbf16>) outs(%f : tensor<16x8xbf16>) -> tensor<16x8xbf16>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<16x8xbf16>, tensor<8xbf16>) outs(%e : tensor<16x8xbf16>) {
  ^bb0(%v: bf16, %c: bf16, %o: bf16):
    %s = arith.addf %v, %c : bf16
    %n = arith.negf %s : bf16
    %x2 = math.exp %n : bf16
    %one = arith.constant 1.0 : bf16
    %d = arith.addf %one, %x2 : bf16
    %g = arith.divf %s, %d : bf16
    linalg.yield %g : bf16
  } -> tensor<16x8xbf16>
  return %r : tensor<16x8xbf16>
}
