// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-import-tosa,ipu-convert-to-ipu)'

// A TOSA op that upstream's tosa-to-linalg cannot lower stops the import.

func.func @custom(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  // expected-error@+1 {{'tosa.custom' is not supported by ipu-import-tosa}}
  %y = tosa.custom %x {domain_name = "example", operator_name = "frobnicate", implementation_attrs = ""} : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

// -----

// What upstream lowers to ops outside L1 stops the conversion: tosa.argmax needs
// linalg.index.

func.func @argmax(%x: tensor<4x8xf32>) -> tensor<4xi32> {
  // expected-error@+1 {{'linalg.generic' is not supported by ipu-convert-to-ipu: linalg.index in the body (ipu-index-to-iota makes it an input)}}
  %y = tosa.argmax %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}
