// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-convert-to-ipu)'
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' 2>&1 | FileCheck %s

// Strides known only at run time stay refused: a copy pattern is fixed at compile time.
// Each such slice is reported at its location, with the reason.

// expected-error@+1 {{'func.func' is not supported by ipu-convert-to-ipu: argument #1 has type index (only statically shaped tensors)}}
func.func @dynamic_stride(%x: tensor<8x4xf32>, %step: index) -> tensor<4x4xf32> {
  // CHECK: strided-slice-invalid.mlir:[[@LINE+2]]:8: error: 'tensor.extract_slice' is not supported by ipu-convert-to-ipu: dynamic offsets, sizes or strides
  // expected-error@+1 {{'tensor.extract_slice' is not supported by ipu-convert-to-ipu: dynamic offsets, sizes or strides}}
  %s = tensor.extract_slice %x[0, 0] [4, 4] [%step, 1] : tensor<8x4xf32> to tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// expected-error@+1 {{'func.func' is not supported by ipu-convert-to-ipu: argument #2 has type index (only statically shaped tensors)}}
func.func @dynamic_insert_stride(%x: tensor<8x4xf32>, %y: tensor<4x4xf32>, %step: index) -> tensor<8x4xf32> {
  // CHECK: strided-slice-invalid.mlir:[[@LINE+2]]:8: error: 'tensor.insert_slice' is not supported by ipu-convert-to-ipu: dynamic offsets, sizes or strides
  // expected-error@+1 {{'tensor.insert_slice' is not supported by ipu-convert-to-ipu: dynamic offsets, sizes or strides}}
  %i = tensor.insert_slice %y into %x[0, 0] [4, 4] [%step, 1] : tensor<4x4xf32> into tensor<8x4xf32>
  return %i : tensor<8x4xf32>
}
