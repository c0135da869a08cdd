// --emit-bytecode writes MLIR bytecode; ipu-opt and upstream mlir-opt read it back (the ipu
// dialect's ops included), and it refuses --split-input-file, which splits text.
// RUN: ipu-opt %s -p 'ipu-set-target{target=tiny}' --emit-bytecode -o %t.mlirbc
// RUN: ipu-opt %t.mlirbc | FileCheck %s
// RUN: %mlir-opt-ipu %t.mlirbc | FileCheck %s
// RUN: not ipu-opt %t.mlirbc --split-input-file 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not ipu-opt %s --emit-bytecode --split-input-file 2>&1 | FileCheck %s --check-prefix=EMIT-SPLIT

// CHECK: module attributes {ipu.target = "tiny"} {
// CHECK-NEXT: "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>

// SPLIT: ipu-opt: error: '{{.*}}.mlirbc' is MLIR bytecode: --split-input-file splits text
// EMIT-SPLIT: ipu-opt: error: --emit-bytecode writes one module: it cannot be combined with --split-input-file
"ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
func.func @f() -> tensor<2xf32> {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}
