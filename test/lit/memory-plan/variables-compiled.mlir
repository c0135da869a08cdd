// RUN: not ipu-compile %s --target tiny -o %t 2>&1 | FileCheck %s

// A forward pass whose four 256x256 weights are device variables does not fit tiny's tiles
// (64 KiB each) beside its activations: the error is at the first variable's argument, and
// names the variables on the worst tile (kept for the whole program).

// CHECK: variables-compiled.mlir:[[@LINE+3]]:17: error: Out of memory on tile 0:
// CHECK-SAME: ; device variables there: 65536 B in 4: 'param:w0' (@var0, 16384 B), 'param:w1' (@var1, 16384 B), 'param:w2' (@var2, 16384 B), 'param:w3' (@var3, 16384 B)
// CHECK-SAME: ; activations and inputs live at superstep
func.func @main(%w0: tensor<256x256xf32> {ipu.resident = "param:w0"}, %w1: tensor<256x256xf32> {ipu.resident = "param:w1"},
                %w2: tensor<256x256xf32> {ipu.resident = "param:w2"}, %w3: tensor<256x256xf32> {ipu.resident = "param:w3"},
                %x: tensor<4x256xf32>) -> tensor<4x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x256xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x256xf32>) -> tensor<4x256xf32>
  %h0 = linalg.matmul ins(%x, %w0 : tensor<4x256xf32>, tensor<256x256xf32>) outs(%z : tensor<4x256xf32>) -> tensor<4x256xf32>
  %h1 = linalg.matmul ins(%h0, %w1 : tensor<4x256xf32>, tensor<256x256xf32>) outs(%z : tensor<4x256xf32>) -> tensor<4x256xf32>
  %h2 = linalg.matmul ins(%h1, %w2 : tensor<4x256xf32>, tensor<256x256xf32>) outs(%z : tensor<4x256xf32>) -> tensor<4x256xf32>
  %h3 = linalg.matmul ins(%h2, %w3 : tensor<4x256xf32>, tensor<256x256xf32>) outs(%z : tensor<4x256xf32>) -> tensor<4x256xf32>
  return %h3 : tensor<4x256xf32>
}
