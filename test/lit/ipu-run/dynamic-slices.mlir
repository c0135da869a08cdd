// RUN: ipu-run %s --entry rows --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --entry rows --random-inputs 1 --check --target gc200 | FileCheck %s
// RUN: ipu-run %s --entry forcing --random-inputs 2 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --entry columns --random-inputs 3 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --entry windows --random-inputs 4 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --entry at_input --input %S/Inputs/dynamic-slices-x.npy %S/Inputs/dynamic-slices-i.npy --check --target tiny | FileCheck %s
// RUN: not ipu-run %s --entry past_the_end --random-inputs 0 --target tiny 2>&1 | FileCheck %s --check-prefix=BOUNDS

// Slices at an offset the device computes (Poplar's dynamicSlice / dynamicUpdate): the loop's
// induction variable, carried as a 0-d counter, selects the rows read and written. Each entry
// is checked against upstream MLIR's ExecutionEngine.

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK-NOT: FAILED
// CHECK: supersteps:

// BOUNDS: dynamic-slices.mlir:113{{.*}}slice offset out of bounds: not in [0, 7]
// BOUNDS-NOT: Traceback

// Accumulates x[i] * w over the rows and writes row i of the output (rank-reducing slices).
func.func @rows(%x: tensor<8x16xf32>, %w: tensor<16xf32>) -> (tensor<16xf32>, tensor<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %eo = tensor.empty() : tensor<8x16xf32>
  %out0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %acc0, %out = %out0) -> (tensor<16xf32>, tensor<8x16xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<16xf32>
    %p = arith.mulf %row, %w : tensor<16xf32>
    %a = arith.addf %acc, %p : tensor<16xf32>
    %o = tensor.insert_slice %a into %out[%i, 0] [1, 16] [1, 1] : tensor<16xf32> into tensor<8x16xf32>
    scf.yield %a, %o : tensor<16xf32>, tensor<8x16xf32>
  }
  return %r#0, %r#1 : tensor<16xf32>, tensor<8x16xf32>
}

// Time stepping: u += 0.5 * (f[t] - u) from a forcing table, the state after every step stored
// as row t of the history; a loop from 1 reading row t - 1.
func.func @forcing(%u0: tensor<4x8xf32>, %f: tensor<6x4x8xf32>) -> tensor<6x4x8xf32> {
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %eh = tensor.empty() : tensor<6x4x8xf32>
  %zero = arith.constant 0.0 : f32
  %half = arith.constant dense<0.5> : tensor<4x8xf32>
  %h0 = linalg.fill ins(%zero : f32) outs(%eh : tensor<6x4x8xf32>) -> tensor<6x4x8xf32>
  %r:2 = scf.for %t = %c1 to %c7 step %c1 iter_args(%u = %u0, %h = %h0) -> (tensor<4x8xf32>, tensor<6x4x8xf32>) {
    %tm1 = arith.subi %t, %c1 : index
    %ft = tensor.extract_slice %f[%tm1, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<6x4x8xf32> to tensor<4x8xf32>
    %d = arith.subf %ft, %u : tensor<4x8xf32>
    %s = arith.mulf %d, %half : tensor<4x8xf32>
    %u2 = arith.addf %u, %s : tensor<4x8xf32>
    %h2 = tensor.insert_slice %u2 into %h[%tm1, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<6x4x8xf32>
    scf.yield %u2, %h2 : tensor<4x8xf32>, tensor<6x4x8xf32>
  }
  return %r#1 : tensor<6x4x8xf32>
}

// The dynamic offset on the inner dimension: column j of x, scaled by j + 1, into column j of
// part of the output (a partial row along the other dimension: completed from the destination).
func.func @columns(%x: tensor<12x10xf32>, %y0: tensor<16x10xf32>) -> tensor<16x10xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %r = scf.for %j = %c0 to %c10 step %c1 iter_args(%y = %y0) -> tensor<16x10xf32> {
    %col = tensor.extract_slice %x[0, %j] [12, 1] [1, 1] : tensor<12x10xf32> to tensor<12x1xf32>
    %j1 = arith.addi %j, %c1 : index
    %ji = arith.index_cast %j1 : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %e = tensor.empty() : tensor<12x1xf32>
    %k = linalg.fill ins(%jf : f32) outs(%e : tensor<12x1xf32>) -> tensor<12x1xf32>
    %s = arith.mulf %col, %k : tensor<12x1xf32>
    %y2 = tensor.insert_slice %s into %y[2, %j] [12, 1] [1, 1] : tensor<12x1xf32> into tensor<16x10xf32>
    scf.yield %y2 : tensor<16x10xf32>
  }
  return %r : tensor<16x10xf32>
}

// Windows of 3 rows at a stride of 2: read, doubled, written back (slices larger than a row).
func.func @windows(%x: tensor<9x5xf32>) -> tensor<9x5xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %two = arith.constant dense<2.0> : tensor<3x5xf32>
  %r = scf.for %i = %c0 to %c7 step %c2 iter_args(%y = %x) -> tensor<9x5xf32> {
    %w = tensor.extract_slice %y[%i, 0] [3, 5] [1, 1] : tensor<9x5xf32> to tensor<3x5xf32>
    %d = arith.mulf %w, %two : tensor<3x5xf32>
    %y2 = tensor.insert_slice %d into %y[%i, 0] [3, 5] [1, 1] : tensor<3x5xf32> into tensor<9x5xf32>
    scf.yield %y2 : tensor<9x5xf32>
  }
  return %r : tensor<9x5xf32>
}

// An offset read from a 0-d input tensor (no loop).
func.func @at_input(%x: tensor<6x3xf32>, %i: tensor<i32>) -> tensor<2x3xf32> {
  %e = tensor.extract %i[] : tensor<i32>
  %k = arith.index_cast %e : i32 to index
  %s = tensor.extract_slice %x[%k, 0] [2, 3] [1, 1] : tensor<6x3xf32> to tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// Row 8 of 8 rows: the simulator stops at the slice with its message.
func.func @past_the_end(%x: tensor<8x4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %e = tensor.empty() : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %a0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = scf.for %i = %c0 to %c9 step %c1 iter_args(%a = %a0) -> tensor<4xf32> {
    %row = tensor.extract_slice %x[%i, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
    %a2 = arith.addf %a, %row : tensor<4xf32>
    scf.yield %a2 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
