// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-convert-to-ipu)'

// Dynamic slices (Poplar's dynamicSlice / dynamicUpdate) take one computed offset at a unit
// stride and static sizes (a dynamic size is a dynamic shape, refused as such); what falls
// outside is refused at the slice.

// An offset known when compiling to be out of range: the device's check fails on constants.
func.func @constant_past_the_end(%x: tensor<8x16xf32>) -> tensor<16xf32> {
  %c8 = arith.constant 8 : index
  // expected-error@+1 {{'linalg.generic' is not supported by ipu-convert-to-ipu: a cf.assert that always fails: "slice offset out of bounds: not in [0, 7]"}}
  %row = tensor.extract_slice %x[%c8, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<16xf32>
  return %row : tensor<16xf32>
}

// -----

// A computed offset along a strided dimension.
func.func @strided(%x: tensor<16xf32>, %n: tensor<i64>) -> tensor<4xf32> {
  %e = tensor.extract %n[] : tensor<i64>
  // expected-error@+1 {{'arith.index_cast' is not supported by ipu-convert-to-ipu: scalar arithmetic outside linalg.generic}}
  %k = arith.index_cast %e : i64 to index
  // expected-error@+1 {{'tensor.extract_slice' is not supported by ipu-convert-to-ipu: dynamic offsets, sizes or strides}}
  %s = tensor.extract_slice %x[%k] [4] [2] : tensor<16xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}
