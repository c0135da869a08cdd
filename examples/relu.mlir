// ReLU of 64 floats per tile on the 16 tiles of the tiny target, then a gather of each
// tile's first four results onto tile 0. Written by tools/demo.py (build_relu_program).
module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "head", tiles = array<i64: 0, 1, 1>, type = memref<64xf32>} : () -> ()
  func.func @main(%arg0: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<64xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%arg0) {buffer = @x, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<1024xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @relu_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.copy"() {dest = @head, dst_offset = array<i64: 0, 4>, dst_tiles = array<i64: 0, 16, 0>, size = 4 : i64, source = @y, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 16, 1>} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @y, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<1024xf32>
    %1 = "ipu.device_to_host"() {buffer = @head, mapping = {grain = 1 : i64, kind = "linear", tiles = array<i64: 0, 1, 1>}} : () -> tensor<64xf32>
    return %0, %1 : tensor<1024xf32>, tensor<64xf32>
  }
  func.func private @relu_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @relu, inputs = [@x], outputs = [@y], tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
  func.func private @relu(%arg0: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.codelet} {
    %cst = arith.constant dense<0.000000e+00> : tensor<64xf32>
    %0 = arith.maximumf %arg0, %cst : tensor<64xf32>
    return %0 : tensor<64xf32>
  }
}

