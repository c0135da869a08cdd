// Two programs the verifier rejects, each with the error it must give (--verify-diagnostics).

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  func.func @copy_past_the_buffer() attributes {ipu.program} {
    // expected-error @+1 {{'ipu.copy' op writes elements [4, 12) of @t on tile 1, which holds 8 per tile: the exchange overflows the tile's copy of it}}
    "ipu.copy"() {source = @x, dest = @t, size = 8 : i64, src_tiles = array<i64: 0, 2, 1>, dst_tiles = array<i64: 0, 2, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 4>} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    return
  }
}

// -----

func.func @f(%a: i32) -> i32 {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%a' expects different type than prior uses: 'i64' vs 'i32'}}
  %b = arith.addi %a, %a : i64
  return %a : i32
}
