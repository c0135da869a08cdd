// One case per rule of the Python verifier (dialects/verifier.py, verify_program.py), with the exact message.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics

func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'ipu.matmul' op expects lhs, rhs and result of the same rank, at least 2; got ranks 1, 2, 1}}
  %c = "ipu.matmul"(%a, %b) : (tensor<8xf32>, tensor<8x2xf32>) -> tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

func.func @quarter_scale_range(%a: tensor<4x8xf8E4M3FNUZ>, %b: tensor<8x2xf8E4M3FNUZ>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'ipu.matmul' op 'ipu.quarter': log2_scale 32 is outside [-32, 32)}}
  %c = "ipu.matmul"(%a, %b) {ipu.quarter = {format = "f143", log2_scale = 32 : i32}} : (tensor<4x8xf8E4M3FNUZ>, tensor<8x2xf8E4M3FNUZ>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

func.func @quarter_scale_type(%a: tensor<4x8xf8E4M3FNUZ>, %b: tensor<8x2xf8E4M3FNUZ>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'ipu.matmul' op 'ipu.quarter': expected log2_scale to be an i32 integer, got -3 : i64}}
  %c = "ipu.matmul"(%a, %b) {ipu.quarter = {format = "f143", log2_scale = -3}} : (tensor<4x8xf8E4M3FNUZ>, tensor<8x2xf8E4M3FNUZ>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

func.func @quarter_format_name(%a: tensor<4x8xf8E4M3FNUZ>, %b: tensor<8x2xf8E4M3FNUZ>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'ipu.matmul' op 'ipu.quarter': format 'f134' is none of f143, f152, e4m3fn, e5m2}}
  %c = "ipu.matmul"(%a, %b) {ipu.quarter = {format = "f134", log2_scale = 0 : i32}} : (tensor<4x8xf8E4M3FNUZ>, tensor<8x2xf8E4M3FNUZ>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

func.func @quarter_fields(%a: tensor<4x8xf8E4M3FNUZ>, %b: tensor<8x2xf8E4M3FNUZ>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'ipu.matmul' op 'ipu.quarter': expected a dictionary of 'format' and 'log2_scale', got {format = "f143"}}}
  %c = "ipu.matmul"(%a, %b) {ipu.quarter = {format = "f143"}} : (tensor<4x8xf8E4M3FNUZ>, tensor<8x2xf8E4M3FNUZ>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

func.func @quarter_format_mismatch(%a: tensor<4x8xf8E5M2FNUZ>, %b: tensor<8x2xf8E5M2FNUZ>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'ipu.matmul' op 'ipu.quarter' format 'f143' does not match the operands' element type f8E5M2FNUZ}}
  %c = "ipu.matmul"(%a, %b) {ipu.quarter = {format = "f143", log2_scale = 0 : i32}} : (tensor<4x8xf8E5M2FNUZ>, tensor<8x2xf8E5M2FNUZ>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

func.func @quarter_not_fp8(%a: tensor<4x8xf16>, %b: tensor<8x2xf16>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'ipu.matmul' op 'ipu.quarter' format 'f143' does not match the operands' element type f16}}
  %c = "ipu.matmul"(%a, %b) {ipu.quarter = {format = "f143", log2_scale = 0 : i32}} : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

func.func @quarter_result(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x2xf8E4M3FN>) -> tensor<4x2xbf16> {
  // expected-error @+1 {{'ipu.matmul' op with 'ipu.quarter' expects an f16 or f32 result, got bf16}}
  %c = "ipu.matmul"(%a, %b) {ipu.quarter = {format = "e4m3fn", log2_scale = 0 : i32}} : (tensor<4x8xf8E4M3FN>, tensor<8x2xf8E4M3FN>) -> tensor<4x2xbf16>
  return %c : tensor<4x2xbf16>
}

// -----

func.func @matmul_dynamic(%a: tensor<?x8xf32>, %b: tensor<8x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'ipu.matmul' op expects a statically shaped lhs, got tensor<?x8xf32>}}
  %c = "ipu.matmul"(%a, %b) : (tensor<?x8xf32>, tensor<8x2xf32>) -> tensor<?x2xf32>
  return %c : tensor<?x2xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x2xf32>) -> tensor<2x4x2xf32> {
  // expected-error @+1 {{'ipu.matmul' op expects equal batch dimensions, got [2], [3] and [2]}}
  %c = "ipu.matmul"(%a, %b) : (tensor<2x4x8xf32>, tensor<3x8x2xf32>) -> tensor<2x4x2xf32>
  return %c : tensor<2x4x2xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<6x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'ipu.matmul' op expects the contraction sizes to match, got lhs K = 8 and rhs K = 6}}
  %c = "ipu.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<6x2xf32>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

func.func @matmul_result(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'ipu.matmul' op expects result shape 4x2, got 4x3}}
  %c = "ipu.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}

// -----

func.func @matmul_element_types(%a: tensor<4x8xf32>, %b: tensor<8x2xf16>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'ipu.matmul' op expects lhs and rhs of the same element type, got f32 and f16}}
  %c = "ipu.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x2xf16>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

func.func @conv_rank(%x: tensor<3x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32> {
  // expected-error @+1 {{'ipu.conv' op expects input, filter and result of rank 4, got ranks 3, 4, 4}}
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32>
  return %y : tensor<1x8x30x30xf32>
}

// -----

func.func @conv_strides(%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32> {
  // expected-error @+1 {{'ipu.conv' op expects 'strides' to have two positive entries, got [1, 0]}}
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 0>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32>
  return %y : tensor<1x8x30x30xf32>
}

// -----

func.func @conv_dilations(%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32> {
  // expected-error @+1 {{'ipu.conv' op expects 'dilations' to have two positive entries, got [1]}}
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1>, padding = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32>
  return %y : tensor<1x8x30x30xf32>
}

// -----

func.func @conv_strides_type(%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32> {
  // expected-error @+1 {{'ipu.conv' op expected 'strides' to be array<i64: ...>, got array<i32: 1, 1>}}
  %y = "ipu.conv"(%x, %w) {strides = array<i32: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32>
  return %y : tensor<1x8x30x30xf32>
}

// -----

func.func @conv_padding(%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32> {
  // expected-error @+1 {{'ipu.conv' op expects 'padding' to have four non-negative entries (top, left, bottom, right), got [0, -1, 0, 0]}}
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, -1, 0, 0>, groups = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32>
  return %y : tensor<1x8x30x30xf32>
}

// -----

func.func @conv_groups(%x: tensor<1x6x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32> {
  // expected-error @+1 {{'ipu.conv' op expects 'groups' (4) to be positive and divide the input channels (6) and the filter count (8)}}
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, groups = 4 : i64} : (tensor<1x6x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32>
  return %y : tensor<1x8x30x30xf32>
}

// -----

func.func @conv_filter_channels(%x: tensor<1x6x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32> {
  // expected-error @+1 {{'ipu.conv' op expects 6 channels per filter (input channels 6 / groups 1), got 3}}
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x6x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x30x30xf32>
  return %y : tensor<1x8x30x30xf32>
}

// -----

func.func @conv_filter_too_large(%x: tensor<1x3x4x4xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x1x1xf32> {
  // expected-error @+1 {{'ipu.conv' op expects the dilated filter to fit in the padded input, got an output of 0x0}}
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x1x1xf32>
  return %y : tensor<1x8x1x1xf32>
}

// -----

func.func @conv_result(%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x32x32xf32> {
  // expected-error @+1 {{'ipu.conv' op expects result shape 1x8x30x30, got 1x8x32x32}}
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x32x32xf32>
  return %y : tensor<1x8x32x32xf32>
}

// -----

func.func @conv_element_types(%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x3x3xi8>) -> tensor<1x8x30x30xf32> {
  // expected-error @+1 {{'ipu.conv' op expects input and filter of the same element type, got f32 and i8}}
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xi8>) -> tensor<1x8x30x30xf32>
  return %y : tensor<1x8x30x30xf32>
}

// -----

func.func @exchange_type(%a: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'ipu.exchange' op expects the result type to equal the source type, got tensor<32xf32> and tensor<64xf32>}}
  %b = "ipu.exchange"(%a) {mapping = {kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<64xf32>) -> tensor<32xf32>
  return %b : tensor<32xf32>
}

// -----

func.func @exchange_mapping_kind(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'ipu.exchange' op 'mapping': unknown tile mapping kind "cyclic": expected "linear", "block" or "intervals"}}
  %b = "ipu.exchange"(%a) {mapping = {kind = "cyclic", grain = 1 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<64xf32>) -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

func.func @exchange_mapping_fields(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'ipu.exchange' op 'mapping': expected a "linear" mapping to have exactly the fields ['grain', 'kind', 'tiles'], got ['kind', 'tiles']}}
  %b = "ipu.exchange"(%a) {mapping = {kind = "linear", tiles = array<i64: 0, 4, 1>}} : (tensor<64xf32>) -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

func.func @exchange_grain(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'ipu.exchange' op 'mapping': expected a positive grain, got 0}}
  %b = "ipu.exchange"(%a) {mapping = {kind = "linear", grain = 0 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<64xf32>) -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

module attributes {ipu.target = "tiny"} {
  func.func @exchange_tiles_outside_target(%a: tensor<64xf32>) -> tensor<64xf32> {
    // expected-error @+1 {{'ipu.exchange' op 'mapping': tile grid reaches tiles 8..23, outside the target's 16 tiles}}
    %b = "ipu.exchange"(%a) {mapping = {kind = "linear", grain = 1 : i64, tiles = array<i64: 8, 16, 1>}} : (tensor<64xf32>) -> tensor<64xf32>
    return %b : tensor<64xf32>
  }
}

// -----

func.func @exchange_grid_shape(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'ipu.exchange' op 'mapping': expected a tile grid array<i64: first, size0, stride0, ...> with an odd number (>= 3) of entries, got 2}}
  %b = "ipu.exchange"(%a) {mapping = {kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 4>}} : (tensor<64xf32>) -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

func.func @exchange_block_grid(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'ipu.exchange' op 'mapping': expected a tile grid of sizes [4, 1] for blocks 16x64 of a tensor of shape 64x64, got [2, 1]}}
  %b = "ipu.exchange"(%a) {mapping = {kind = "block", block = array<i64: 16, 64>, tiles = array<i64: 0, 2, 1, 1, 0>}} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %b : tensor<64x64xf32>
}

// -----

func.func @exchange_block_rank(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'ipu.exchange' op 'mapping': expected block and tile grid of rank 2 for a tensor of shape 64x64, got block rank 1 and grid rank 1}}
  %b = "ipu.exchange"(%a) {mapping = {kind = "block", block = array<i64: 16>, tiles = array<i64: 0, 4, 1>}} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %b : tensor<64x64xf32>
}

// -----

func.func @exchange_intervals_gap(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'ipu.exchange' op 'mapping': interval [40, 64) leaves a gap before it: intervals must cover the tensor's 64 elements exactly once, in order}}
  %b = "ipu.exchange"(%a) {mapping = {kind = "intervals", intervals = array<i64: 0, 32, 0, 40, 64, 1>}} : (tensor<64xf32>) -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

func.func @exchange_intervals_overlap(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'ipu.exchange' op 'mapping': interval [16, 64) overlaps the previous one: intervals must cover the tensor's 64 elements exactly once, in order}}
  %b = "ipu.exchange"(%a) {mapping = {kind = "intervals", intervals = array<i64: 0, 32, 0, 16, 64, 1>}} : (tensor<64xf32>) -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

func.func @exchange_intervals_short(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'ipu.exchange' op 'mapping': intervals cover elements [0, 48) of a tensor of 64 elements: they must cover it exactly once}}
  %b = "ipu.exchange"(%a) {mapping = {kind = "intervals", intervals = array<i64: 0, 48, 0>}} : (tensor<64xf32>) -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

module attributes {ipu.target = "tiny"} {
  func.func @buffer_not_at_module_level() {
    // expected-error @+1 {{'ipu.buffer' op expects to be directly inside a builtin.module}}
    "ipu.buffer"() {sym_name = "x", type = memref<64xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  // expected-error @+1 {{'ipu.buffer' op expected 'type' to be a memref type, got tensor<64xf32>}}
  "ipu.buffer"() {sym_name = "x", type = tensor<64xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  // expected-error @+1 {{'ipu.buffer' op expects a statically shaped memref, got memref<?xf32>}}
  "ipu.buffer"() {sym_name = "x", type = memref<?xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  // expected-error @+1 {{'ipu.buffer' op expects a memref with the identity layout, got memref<8x8xf32, strided<[16, 1]>>}}
  "ipu.buffer"() {sym_name = "x", type = memref<8x8xf32, strided<[16, 1]>>, tiles = array<i64: 0, 16, 1>} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  // expected-error @+1 {{'ipu.buffer' op expects integer or float elements, got index}}
  "ipu.buffer"() {sym_name = "x", type = memref<8xindex>, tiles = array<i64: 0, 16, 1>} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  // expected-error @+1 {{'ipu.buffer' op 'tiles': expected distinct tiles, but the grid [0, 4, 1, 2, 2] repeats tiles}}
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 4, 1, 2, 2>} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  // expected-error @+1 {{'ipu.buffer' op 'tiles': tile grid reaches tiles 0..16, outside the target's 16 tiles (tiny)}}
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 17, 1>} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  // expected-error @+1 {{'ipu.buffer' op expects a non-negative 'offset' aligned to the element size, got 6}}
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>, offset = 6 : i64} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  // expected-error @+1 {{'ipu.buffer' op needs bytes [0, 262144) of each tile, but tiles of tiny have 65536 bytes}}
  "ipu.buffer"() {sym_name = "x", type = memref<65536xf32>, tiles = array<i64: 0, 16, 1>, offset = 0 : i64} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  // expected-note @+1 {{see existing symbol definition here}}
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  // Checked by builtin.module's own verifier: ipu.buffer names are symbols.
  // expected-error @+1 {{redefinition of symbol named 'x'}}
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  func.func @stream_unknown_buffer(%a: tensor<64xf32>) {
    // expected-error @+1 {{'ipu.host_to_device' op 'buffer' @nowhere does not name an ipu.buffer}}
    "ipu.host_to_device"(%a) {buffer = @nowhere, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 16, 1>}} : (tensor<64xf32>) -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<4xf16>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @stream_element_type(%a: tensor<64xf32>) {
    // expected-error @+1 {{'ipu.host_to_device' op expects @x's element type f16, got f32}}
    "ipu.host_to_device"(%a) {buffer = @x, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 16, 1>}} : (tensor<64xf32>) -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 8, 1>} : () -> ()
  func.func @stream_tile_without_buffer(%a: tensor<64xf32>) {
    // expected-error @+1 {{'ipu.host_to_device' op maps elements to tile 8, which holds no copy of @x}}
    "ipu.host_to_device"(%a) {buffer = @x, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 16, 1>}} : (tensor<64xf32>) -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "y", type = memref<4xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @stream_slice_too_large() -> tensor<64xf32> {
    // expected-error @+1 {{'ipu.device_to_host' op maps 8 elements to tile 0, but @y holds 4 per tile}}
    %t = "ipu.device_to_host"() {buffer = @y, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 16, 1>}} : () -> tensor<64xf32>
    return %t : tensor<64xf32>
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "h", type = memref<8xf16>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @copy_element_types() {
    // expected-error @+1 {{'ipu.copy' op expects @x and @h of the same element type, got f32 and f16}}
    "ipu.copy"() {source = @x, dest = @h, size = 8 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 0, 16, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @copy_unknown_dest() {
    // expected-error @+1 {{'ipu.copy' op 'dest' @y does not name an ipu.buffer}}
    "ipu.copy"() {source = @x, dest = @y, size = 8 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 0, 16, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @copy_size() {
    // expected-error @+1 {{'ipu.copy' op expects a positive 'size', got 0}}
    "ipu.copy"() {source = @x, dest = @x, size = 0 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 0, 16, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @copy_grid_sizes() {
    // expected-error @+1 {{'ipu.copy' op expects 'src_tiles' and 'dst_tiles' of the same sizes, got [16] and [8]}}
    "ipu.copy"() {source = @x, dest = @x, size = 8 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 0, 8, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @copy_outside_target() {
    // expected-error @+1 {{'ipu.copy' op 'dst_tiles': tile grid reaches tiles 1..16, outside the target's 16 tiles (tiny)}}
    "ipu.copy"() {source = @x, dest = @x, size = 8 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 1, 16, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 8, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @copy_source_tile_without_buffer() {
    // expected-error @+1 {{'ipu.copy' op sends from tile 8, which holds no copy of @x}}
    "ipu.copy"() {source = @x, dest = @y, size = 8 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 0, 16, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 0, 4, 1>} : () -> ()
  func.func @copy_dest_tile_without_buffer() {
    // expected-error @+1 {{'ipu.copy' op sends to tile 4, which holds no copy of @y}}
    "ipu.copy"() {source = @x, dest = @y, size = 8 : i64, src_tiles = array<i64: 0, 8, 1>, dst_tiles = array<i64: 0, 8, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @copy_offset_entries() {
    // expected-error @+1 {{'ipu.copy' op expects 'src_offset' to have 2 entries (a base and one stride per grid dimension), got 1}}
    "ipu.copy"() {source = @x, dest = @x, size = 8 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 0, 16, 1>, src_offset = array<i64: 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<64xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @copy_read_out_of_bounds() {
    // The 16th transfer reads [60, 68) of a 64-element buffer.
    // expected-error @+1 {{'ipu.copy' op reads elements [60, 68) of @x on tile 15, which holds 64 per tile: it reads beyond the tile's copy of it}}
    "ipu.copy"() {source = @x, dest = @x, size = 8 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 0, 16, 1>, src_offset = array<i64: 0, 4>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<64xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<16xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @copy_write_out_of_bounds() {
    // expected-error @+1 {{'ipu.copy' op writes elements [-4, 0) of @y on tile 0, which holds 16 per tile: the exchange overflows the tile's copy of it}}
    "ipu.copy"() {source = @x, dest = @y, size = 4 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 0, 16, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: -4, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<64xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "sum", type = memref<16xf32>, tiles = array<i64: 0, 1, 1>} : () -> ()
  func.func @copy_writes_twice() {
    // A gather into tile 0 where consecutive transfers overlap by one element.
    // expected-error @+1 {{'ipu.copy' op writes elements [1, 3) of @sum on tile 0 twice}}
    "ipu.copy"() {source = @x, dest = @sum, size = 2 : i64, src_tiles = array<i64: 0, 8, 1>, dst_tiles = array<i64: 0, 8, 0>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 1>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  func.func private @not_a_compute_set()
  func.func @execute_not_a_compute_set() {
    // expected-error @+1 {{'ipu.execute' op 'compute_set' @not_a_compute_set does not name a func.func marked ipu.compute_set}}
    "ipu.execute"() {compute_set = @not_a_compute_set} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  func.func private @cs(%a: i32) attributes {ipu.compute_set} {
    return
  }
  func.func @execute_signature() {
    // expected-error @+1 {{'ipu.execute' op expects compute set @cs to take no arguments and return nothing, got (i32) -> ()}}
    "ipu.execute"() {compute_set = @cs} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func private @id(%x: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    return %x : tensor<8xf32>
  }
  func.func @vertex_group_outside_compute_set() {
    // expected-error @+1 {{'ipu.vertex_group' op expects to be directly inside a func.func marked ipu.compute_set}}
    "ipu.vertex_group"() {codelet = @id, tiles = array<i64: 0, 16, 1>, inputs = [@x], outputs = [@x]} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func private @id(%x: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    return %x : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op 'outputs' @nowhere does not name an ipu.buffer}}
    "ipu.vertex_group"() {codelet = @id, tiles = array<i64: 0, 16, 1>, inputs = [@x], outputs = [@nowhere]} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func private @id(%x: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    return %x : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op expected 'inputs' to be an array of symbol references, got ["x"]}}
    "ipu.vertex_group"() {codelet = @id, tiles = array<i64: 0, 16, 1>, inputs = ["x"], outputs = [@x]} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func private @id(%x: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    return %x : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op 'tiles': expected distinct tiles, but the grid [0, 4, 0] repeats tiles}}
    "ipu.vertex_group"() {codelet = @id, tiles = array<i64: 0, 4, 0>, inputs = [@x], outputs = [@y]} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 0, 8, 1>} : () -> ()
  func.func private @id(%x: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    return %x : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op runs on tile 8, which holds no copy of @y}}
    "ipu.vertex_group"() {codelet = @id, tiles = array<i64: 0, 16, 1>, inputs = [@x], outputs = [@y]} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func private @id(%x: tensor<8xf32>) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op 'codelet' @id does not name a func.func marked ipu.codelet}}
    "ipu.vertex_group"() {codelet = @id, tiles = array<i64: 0, 16, 1>, inputs = [@x], outputs = [@y]} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<4xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func private @id(%x: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    return %x : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op expects result #0 of codelet @id (tensor<8xf32>) to fit in @y (memref<4xf32>): it views the buffer's leading elements}}
    "ipu.vertex_group"() {codelet = @id, tiles = array<i64: 0, 16, 1>, inputs = [@x], outputs = [@y]} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func private @id(%x: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    return %x : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @id, tiles = array<i64: 0, 8, 1>, inputs = [@x], outputs = [@y]} : () -> ()
    // expected-error @+1 {{'ipu.vertex_group' op writes @y on tile 4, which another vertex group}}
    "ipu.vertex_group"() {codelet = @id, tiles = array<i64: 4, 8, 1>, inputs = [@x], outputs = [@y]} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func private @two(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) attributes {ipu.codelet} {
    return %x, %x : tensor<8xf32>, tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op writes @x on tile 0, which itself also writes in this compute set}}
    "ipu.vertex_group"() {codelet = @two, tiles = array<i64: 0, 16, 1>, inputs = [@x], outputs = [@x, @x]} : () -> ()
    return
  }
}

// -----

func.func @mapping_on_a_non_tensor_op(%a: i32, %b: i32) -> i32 {
  // expected-error @+1 {{'arith.addi' op has 'ipu.mapping' but does not produce exactly one ranked tensor}}
  %c = arith.addi %a, %b {ipu.mapping = {kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 4, 1>}} : i32
  return %c : i32
}

// -----

func.func @mapping_malformed(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'arith.addf' op 'ipu.mapping': expected a tile mapping dictionary, got "linear"}}
  %c = arith.addf %a, %b {ipu.mapping = "linear"} : tensor<64xf32>
  return %c : tensor<64xf32>
}

// -----

func.func @mapping_wrong_shape(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'arith.addf' op 'ipu.mapping': expected a tile grid of sizes [4, 1] for blocks 16x64 of a tensor of shape 64x64, got [4, 4]}}
  %c = arith.addf %a, %b {ipu.mapping = {kind = "block", block = array<i64: 16, 64>, tiles = array<i64: 0, 4, 4, 4, 1>}} : tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

module attributes {ipu.target = "tiny"} {
  // expected-error @+1 {{'func.func' op 'ipu.mapping' of argument 1: tile grid reaches tiles 0..31, outside the target's 16 tiles}}
  func.func @argument_mapping(%a: tensor<64xf32>, %b: tensor<64xf32> {ipu.mapping = {kind = "linear", grain = 2 : i64, tiles = array<i64: 0, 32, 1>}}) {
    return
  }
}

// -----

// expected-error @+1 {{'func.func' op has 'ipu.mapping' on argument 0, which is not a ranked tensor}}
func.func @argument_mapping_on_a_scalar(%a: f32 {ipu.mapping = {kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 1, 1>}}) {
  return
}

// -----

// The target named by the module must exist.
// expected-error-re @+1 {{unknown target 'gc9000'; built-in targets: {{[^()]+}} (or give the path of a .toml target file)}}
module attributes {ipu.target = "gc9000"} {
}

// -----

// expected-error @+1 {{'ipu.target' must be a string naming a target or a .toml file, got 200 : i64}}
module attributes {ipu.target = 200} {
}

// -----

module attributes {ipu.target = "tiny"} {
  // A grid with more entries than tiles in reach is rejected without listing it.
  // expected-error @+1 {{'ipu.buffer' op 'tiles': expected distinct tiles, but the grid [0, 1000000000000, 0] repeats tiles}}
  "ipu.buffer"() {sym_name = "x", type = memref<4xf32>, tiles = array<i64: 0, 1000000000000, 0>} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<4xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @copy_too_many_transfers() {
    // expected-error @+1 {{'ipu.copy' op writes 1000000000 x 4 elements, more than @x could hold on all 16 tiles of tiny (4 per tile)}}
    "ipu.copy"() {source = @x, dest = @x, size = 4 : i64, src_tiles = array<i64: 0, 1000000000, 0>, dst_tiles = array<i64: 0, 1000000000, 0>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

func.func @linear_mapping_repeats_tiles(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'ipu.exchange' op 'mapping': expected distinct tiles in a linear mapping, but the grid [0, 4, 0] repeats tiles}}
  %b = "ipu.exchange"(%a) {mapping = {kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 4, 0>}} : (tensor<64xf32>) -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

func.func @conv_groups_not_i64(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'ipu.conv' op expected 'groups' to be an i64 integer, got 2 : i32}}
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, groups = 2 : i32} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<4xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @stream_more_than_the_buffer_holds(%a: tensor<1000000000000xf32>) {
    // expected-error @+1 {{'ipu.host_to_device' op streams 1000000000000 elements, more than the 16 x 4 that @x holds}}
    "ipu.host_to_device"(%a) {buffer = @x, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 16, 1>}} : (tensor<1000000000000xf32>) -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  // Reported once, at the buffer; its users are not checked against a grid that is wrong.
  // expected-error @+1 {{'ipu.buffer' op 'tiles': expected distinct tiles, but the grid [0, 1000000000000, 0] repeats tiles}}
  "ipu.buffer"() {sym_name = "x", type = memref<4xf32>, tiles = array<i64: 0, 1000000000000, 0>} : () -> ()
  func.func @users_of_a_bad_buffer(%a: tensor<64xf32>) {
    "ipu.host_to_device"(%a) {buffer = @x, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 16, 1>}} : (tensor<64xf32>) -> ()
    "ipu.copy"() {source = @x, dest = @x, size = 4 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 0, 16, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xi32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func private @id(%x: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    return %x : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op expects result #0 of codelet @id to be a static tensor of i32 like @y, got tensor<8xf32>}}
    "ipu.vertex_group"() {codelet = @id, tiles = array<i64: 0, 16, 1>, inputs = [@x], outputs = [@y]} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func private @two(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    return %x : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op expects codelet @two to have 1 arguments, one per buffer in inputs, got 2}}
    "ipu.vertex_group"() {codelet = @two, tiles = array<i64: 0, 16, 1>, inputs = [@x], outputs = [@x]} : () -> ()
    return
  }
}

// -----

// Device variables (ipu.variable): unique names, one per buffer, of the buffer's element type,
// mapped within it, and never streamed by the program.
module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "w", type = memref<4xf32>, tiles = array<i64: 0, 4, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "v", type = memref<4xf32>, tiles = array<i64: 4, 4, 1>} : () -> ()
  "ipu.variable"() {name = "param:w", buffer = @w, type = tensor<16xf32>, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 4, 1>}} : () -> ()
  // expected-error @+1 {{'ipu.variable' op redefines device variable 'param:w' (names are unique)}}
  "ipu.variable"() {name = "param:w", buffer = @v, type = tensor<16xf32>, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 4, 4, 1>}} : () -> ()
  // expected-error @+1 {{'ipu.variable' op places device variable 'param:u' in @w, which already holds 'param:w'}}
  "ipu.variable"() {name = "param:u", buffer = @w, type = tensor<16xf32>, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 4, 1>}} : () -> ()
  func.func @main(%a: tensor<16xf32>) -> tensor<16xf32> attributes {ipu.program} {
    // expected-error @+1 {{'ipu.host_to_device' op streams into @w, the buffer of device variable 'param:w': the host writes variables by name between runs, no run streams them in}}
    "ipu.host_to_device"(%a) {buffer = @w, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<16xf32>) -> ()
    // A run may stream a variable's value out (a result asking for it back).
    %r = "ipu.device_to_host"() {buffer = @w, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 4, 1>}} : () -> tensor<16xf32>
    return %r : tensor<16xf32>
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "w", type = memref<4xf32>, tiles = array<i64: 0, 4, 1>} : () -> ()
  // expected-error @+1 {{'ipu.variable' op expects @w's element type f32, got f16}}
  "ipu.variable"() {name = "a", buffer = @w, type = tensor<16xf16>, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 4, 1>}} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "w", type = memref<4xf32>, tiles = array<i64: 0, 4, 1>} : () -> ()
  // expected-error @+1 {{'ipu.variable' op maps 8 elements to tile 0, but @w holds 4 per tile: the stream overflows it}}
  "ipu.variable"() {name = "a", buffer = @w, type = tensor<16xf32>, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 2, 1>}} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "w", type = memref<4xf32>, tiles = array<i64: 0, 4, 1>} : () -> ()
  // expected-error @+1 {{'ipu.variable' op expects 'type' to be a statically shaped tensor, got memref<16xf32>}}
  "ipu.variable"() {name = "a", buffer = @w, type = memref<16xf32>, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 4, 1>}} : () -> ()
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "w", type = memref<4xf32>, tiles = array<i64: 0, 4, 1>} : () -> ()
  func.func @main() attributes {ipu.program} {
    // expected-error @+1 {{'ipu.variable' op expects to be directly inside a builtin.module}}
    "ipu.variable"() {name = "a", buffer = @w, type = tensor<16xf32>, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 4, 1>}} : () -> ()
    return
  }
}

// -----

// A codelet marked as a partial-sum combine (dialects/combine.py) must be one: here it
// multiplies the partials.
// expected-error @+1 {{'func.func' op is marked 'ipu.combine' (a partial-sum combine) but expects its linalg.generic's body to be one arith.addf of the partial and the accumulator}}
func.func private @combine(%arg0: tensor<4x8xf32>) -> tensor<8xf32> attributes {ipu.codelet, ipu.combine = {combiner = "arith.addf", epilogue = false, init = false}} {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
      iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %3 = arith.mulf %in, %out : f32
    linalg.yield %3 : f32
  } -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// ipu.predicate reads an i1 on a tile holding its buffer (Poplar's If / RepeatWhileTrue).
module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "c", type = memref<1xi1>, tiles = array<i64: 3, 1, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "f", type = memref<1xf32>, tiles = array<i64: 3, 1, 1>} : () -> ()
  func.func @predicates() attributes {ipu.program} {
    // expected-error @+1 {{'ipu.predicate' op reads tile 4, which holds no copy of @c}}
    %p = "ipu.predicate"() {buffer = @c, tile = 4 : i64} : () -> i1
    // expected-error @+1 {{'ipu.predicate' op reads @f of element type f32; a predicate is an i1}}
    %q = "ipu.predicate"() {buffer = @f, tile = 3 : i64} : () -> i1
    // expected-error @+1 {{'ipu.predicate' op reads @c of element type i1; a switch's index is an integer}}
    %i = "ipu.predicate"() {buffer = @c, tile = 3 : i64} : () -> index
    scf.if %p {
    }
    return
  }
}
