// Malformed device variables (docs/contracts.md, L0) stop ipu-select-entry at the entry.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-select-entry)'

// expected-error @+1 {{'func.func' op has 'ipu.resident' = 3 : i64 on argument #0: expected a variable's name (a non-empty string)}}
func.func @main(%w: tensor<4xf32> {ipu.resident = 3}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op names device variable 'w' on arguments #0 and #1: one argument per variable}}
func.func @main(%a: tensor<4xf32> {ipu.resident = "w"}, %b: tensor<4xf32> {ipu.resident = "w"}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op updates device variable 'v' (result #0), which no argument declares resident}}
func.func @main(%w: tensor<4xf32> {ipu.resident = "w"}) -> (tensor<4xf32> {ipu.resident = "v"}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op updates device variable 'w' (result #0) with a tensor<4xf16>, but the variable is a tensor<4xf32>}}
func.func @main(%w: tensor<4xf32> {ipu.resident = "w"}, %h: tensor<4xf16>) -> (tensor<4xf16> {ipu.resident = "w"}) {
  return %h : tensor<4xf16>
}

// -----

// expected-error @+1 {{'func.func' op names device variable 'w' on results #0 and #1: one result per variable}}
func.func @main(%w: tensor<4xf32> {ipu.resident = "w"}) -> (tensor<4xf32> {ipu.resident = "w"}, tensor<4xf32> {ipu.resident = "w"}) {
  return %w, %w : tensor<4xf32>, tensor<4xf32>
}
