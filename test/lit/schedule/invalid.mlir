// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-schedule)'

// Malformed L2 input to ipu-schedule. The partition's encoding (both attributes, positive
// blocks, one grid dimension per block, distinct tiles within the target) is the verifier's,
// checked when the input is read; its agreement with the op's loops, and a result mapping on
// every op the pass lowers, are checked by ipu-schedule.

#m = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 2, 1, 1, 0>}
module attributes {ipu.target = "tiny"} {
  func.func @zero_block(%a: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 4>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                        %b: tensor<4x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 1, 0, 1, 0>}}) -> tensor<8x6xf32> {
    // expected-error @+1 {{'ipu.matmul' op expected 'ipu.partition' to hold positive block sizes, got [4, 0, 4]}}
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 0, 4>, ipu.tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>, ipu.mapping = #m}
        : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %c : tensor<8x6xf32>
  }
}

// -----

#m = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 2, 1, 1, 0>}
module attributes {ipu.target = "tiny"} {
  func.func @partition_without_tiles(%a: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 4>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                                     %b: tensor<4x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 1, 0, 1, 0>}}) -> tensor<8x6xf32> {
    // expected-error @+1 {{'ipu.matmul' op has 'ipu.partition' without 'ipu.tiles': a partition needs both}}
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 6, 4>, ipu.mapping = #m} : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %c : tensor<8x6xf32>
  }
}

// -----

#m = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 2, 1, 1, 0>}
module attributes {ipu.target = "tiny"} {
  func.func @tiles_out_of_range(%a: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 4>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                                %b: tensor<4x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 1, 0, 1, 0>}}) -> tensor<8x6xf32> {
    // expected-error @+1 {{'ipu.matmul' op 'ipu.tiles': tile grid reaches tiles 15..16, outside the target's 16 tiles (tiny)}}
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 6, 4>, ipu.tiles = array<i64: 15, 2, 1, 1, 0, 1, 0>, ipu.mapping = #m}
        : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %c : tensor<8x6xf32>
  }
}

// -----

#m = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 2, 1, 1, 0>}
module attributes {ipu.target = "tiny"} {
  func.func @tiles_repeat(%a: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 4>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                          %b: tensor<4x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 1, 0, 1, 0>}}) -> tensor<8x6xf32> {
    // expected-error @+1 {{'ipu.matmul' op 'ipu.tiles': expected distinct tiles, but the grid [3, 2, 0, 1, 0, 1, 0] repeats tiles}}
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 6, 4>, ipu.tiles = array<i64: 3, 2, 0, 1, 0, 1, 0>, ipu.mapping = #m}
        : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %c : tensor<8x6xf32>
  }
}

// -----

#m = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 2, 1, 1, 0>}
module attributes {ipu.target = "tiny"} {
  func.func @grid_rank(%a: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 4>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                       %b: tensor<4x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 1, 0, 1, 0>}}) -> tensor<8x6xf32> {
    // expected-error @+1 {{'ipu.matmul' op expected 'ipu.tiles' to have one grid dimension per loop of 'ipu.partition' (3), got 1}}
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 6, 4>, ipu.tiles = array<i64: 0, 2, 1>, ipu.mapping = #m}
        : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %c : tensor<8x6xf32>
  }
}

// -----

// Well-formed, but a partition of two loops for a matmul's three (m, n, k).
#m = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 2, 1, 1, 0>}
module attributes {ipu.target = "tiny"} {
  func.func @partition_of_other_loops(%a: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 4>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                                      %b: tensor<4x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 1, 0, 1, 0>}}) -> tensor<8x6xf32> {
    // expected-error @+1 {{'ipu.matmul' op expected 'ipu.partition' to have one block size per loop (3: extents [8, 6, 4]), got 2}}
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 6>, ipu.tiles = array<i64: 0, 2, 1, 1, 0>, ipu.mapping = #m}
        : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %c : tensor<8x6xf32>
  }
}

// -----

// Well-formed, but the grid does not have ceil(extent / block) parts per loop.
#m = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 2, 1, 1, 0>}
module attributes {ipu.target = "tiny"} {
  func.func @grid_not_the_parts(%a: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 4>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                                %b: tensor<4x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 1, 0, 1, 0>}}) -> tensor<8x6xf32> {
    // expected-error @+1 {{'ipu.matmul' op expected 'ipu.tiles' grid sizes [2, 1, 1] (ceil(extent / block) for extents [8, 6, 4] and blocks [4, 6, 4]), got [4, 1, 1]}}
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 6, 4>, ipu.tiles = array<i64: 0, 4, 1, 1, 0, 1, 0>, ipu.mapping = #m}
        : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %c : tensor<8x6xf32>
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  func.func @unplanned(%a: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 4>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                       %b: tensor<4x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 1, 0, 1, 0>}}) -> tensor<8x6xf32> {
    // expected-error @+1 {{'ipu.matmul' op has no 'ipu.partition' and 'ipu.tiles'; run ipu-plan first}}
    %c = "ipu.matmul"(%a, %b) : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %c : tensor<8x6xf32>
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  func.func @no_result_mapping(%a: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 4>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                               %b: tensor<4x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 1, 0, 1, 0>}}) -> tensor<8x6xf32> {
    // expected-error @+1 {{'ipu.matmul' op has no 'ipu.mapping' on its result; run ipu-plan first}}
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 6, 4>, ipu.tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>} : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %c : tensor<8x6xf32>
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  func.func @slice_without_mapping(%x: tensor<16x8xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 8>, tiles = array<i64: 0, 2, 1, 1, 0>}}) -> tensor<4x8xf32> {
    // expected-error @+1 {{'tensor.extract_slice' op has no 'ipu.mapping' on its result; run ipu-plan first}}
    %s = tensor.extract_slice %x[4, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
    return %s : tensor<4x8xf32>
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  // expected-error @+1 {{'func.func' op has an argument without ipu.mapping; run ipu-plan first}}
  func.func @argument_without_mapping(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
    return %x : tensor<16x8xf32>
  }
}

// -----

// A partition cutting a window's loop (d0, the shorter; each part would read the window from
// the start of its part of d1 alone): `Space.admits` refuses it rather than compute a wrong
// result.
#in = affine_map<(d0, d1) -> (d0 + d1)>
#out = affine_map<(d0, d1) -> (d1, d0)>
module attributes {ipu.target = "tiny"} {
  func.func @window_loop_cut(%a: tensor<67xf32> {ipu.mapping = {kind = "block", block = array<i64: 67>, tiles = array<i64: 0, 1, 0>}}) -> tensor<64x4xf32> {
    %e = tensor.empty() : tensor<64x4xf32>
    // expected-error @+1 {{'linalg.generic' op has an 'ipu.partition' that cuts loop 0 (extent 4) into blocks of 1, but the op's record keeps it whole; replan with ipu-plan}}
    %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<67xf32>) outs(%e : tensor<64x4xf32>)
        attrs = {ipu.partition = array<i64: 1, 64>, ipu.tiles = array<i64: 0, 4, 1, 1, 0>, ipu.mapping = {kind = "block", block = array<i64: 64, 1>, tiles = array<i64: 0, 1, 0, 4, 1>}} {
    ^bb0(%x: f32, %o: f32):
      linalg.yield %x : f32
    } -> tensor<64x4xf32>
    return %r : tensor<64x4xf32>
  }
}

// -----

// A partition cutting a summed loop whose body `acc - x` is no associative combiner: partial
// results could not be joined.
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @summed_loop_cut(%a: tensor<4x64xi32> {ipu.mapping = {kind = "block", block = array<i64: 4, 64>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                             %init: tensor<4xi32> {ipu.mapping = {kind = "block", block = array<i64: 4>, tiles = array<i64: 0, 1, 0>}}) -> tensor<4xi32> {
    // expected-error @+1 {{'linalg.generic' op has an 'ipu.partition' that cuts summed loop 1 into blocks of 16, but its partial results have no associative combiner; replan with ipu-plan}}
    %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x64xi32>) outs(%init : tensor<4xi32>)
        attrs = {ipu.partition = array<i64: 4, 16>, ipu.tiles = array<i64: 0, 1, 0, 4, 1>, ipu.mapping = {kind = "block", block = array<i64: 4>, tiles = array<i64: 0, 1, 0>}} {
    ^bb0(%x: i32, %acc: i32):
      %d = arith.subi %acc, %x : i32
      linalg.yield %d : i32
    } -> tensor<4xi32>
    return %r : tensor<4xi32>
  }
}
