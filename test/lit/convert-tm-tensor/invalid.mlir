// RUN: ipu-opt %s --allow-unregistered-dialect --split-input-file --verify-diagnostics -p 'builtin.module(ipu-convert-tm-tensor)'

// What the pass does not convert stops it, at the op, naming the ATen ops behind it.

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>, sym_name = "attention"}> ({
  ^bb0(%q: tensor<2x4x8xf32>):
    %e = "tensor.empty"() : () -> tensor<2x4x8xf32>
    // expected-error@+1 {{'tm_tensor.attention' op is not converted by ipu-convert-tm-tensor (torch-mlir's TMTensor, emitted for aten.scaled_dot_product_attention)}}
    %0 = "tm_tensor.attention"(%q, %q, %q, %e) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    "func.return"(%0) : (tensor<2x4x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A scan whose region is not one combiner (x*x + acc).
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "scan"}> ({
  ^bb0(%x: tensor<8xf32>):
    %e = "tensor.empty"() : () -> tensor<8xf32>
    %a = "tensor.empty"() : () -> tensor<f32>
    // expected-error@+1 {{'tm_tensor.scan' op has a region that is not one associative combiner of its two arguments (addf, mulf, addi, max, min, ...) (torch-mlir's TMTensor, emitted for aten.cumsum)}}
    %0:2 = "tm_tensor.scan"(%x, %e, %a) <{dimension = 0 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
    ^bb0(%p: f32, %q: f32):
      %s = "arith.mulf"(%q, %q) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
      %t = "arith.addf"(%p, %s) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
      "tm_tensor.yield"(%t) : (f32) -> ()
    }) : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<f32>)
    "func.return"(%0#0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A scatter writing windows of 4 of 8 columns at an indexed position.
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<3x8xf32>, tensor<2x2xi64>, tensor<2x1x4xf32>) -> tensor<3x8xf32>, sym_name = "window"}> ({
  ^bb0(%x: tensor<3x8xf32>, %i: tensor<2x2xi64>, %u: tensor<2x1x4xf32>):
    // expected-error@+1 {{'tm_tensor.scatter' op writes windows of size 4 along dimension 1 of the original}}
    %0 = "tm_tensor.scatter"(%u, %i, %x) <{dimension_map = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = true}> ({
    ^bb0(%a: f32, %b: f32):
      "tm_tensor.yield"(%a) : (f32) -> ()
    }) : (tensor<2x1x4xf32>, tensor<2x2xi64>, tensor<3x8xf32>) -> tensor<3x8xf32>
    "func.return"(%0) : (tensor<3x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// An op of another dialect nobody here knows.
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "unknown"}> ({
  ^bb0(%x: tensor<8xf32>):
    // expected-error@+1 {{'mystery.op' is not supported: ipu-mlir does not know the mystery dialect}}
    %0 = "mystery.op"(%x) : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Dynamic shapes (a boolean-mask index_put: its row count depends on the data).
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<24xi64>, tensor<?x1xi64>, tensor<?xi64>) -> tensor<24xi64>, sym_name = "dynamic"}> ({
  ^bb0(%x: tensor<24xi64>, %i: tensor<?x1xi64>, %u: tensor<?xi64>):
    // expected-error@+1 {{'tm_tensor.scatter' op has dynamic shapes (tensor<?xi64>), which ipu-mlir does not support}}
    %0 = "tm_tensor.scatter"(%u, %i, %x) <{dimension_map = array<i64: 0>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = false}> ({
    ^bb0(%a: i64, %b: i64):
      %s = "arith.addi"(%b, %a) : (i64, i64) -> i64
      "tm_tensor.yield"(%s) : (i64) -> ()
    }) : (tensor<?xi64>, tensor<?x1xi64>, tensor<24xi64>) -> tensor<24xi64>
    "func.return"(%0) : (tensor<24xi64>) -> ()
  }) : () -> ()
}) : () -> ()
