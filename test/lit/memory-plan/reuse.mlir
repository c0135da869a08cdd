// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-memory-plan)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-memory-plan{reuse=false})' | FileCheck %s --check-prefix=NOREUSE

// A chain x -> y -> t, one superstep each: @x is dead once @y is computed, so @t takes its
// bytes; @y is live with both and gets its own. Without reuse each buffer has its own bytes.

module attributes {ipu.target = "tiny"} {
  // CHECK: "ipu.buffer"() {offset = 0 : i64, sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>}
  // CHECK-NEXT: "ipu.buffer"() {offset = 256 : i64, sym_name = "y", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>}
  // CHECK-NEXT: "ipu.buffer"() {offset = 0 : i64, sym_name = "t", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>}
  // CHECK-LABEL: func.func @chain
  // NOREUSE: "ipu.buffer"() {offset = 0 : i64, sym_name = "x"
  // NOREUSE-NEXT: "ipu.buffer"() {offset = 256 : i64, sym_name = "y"
  // NOREUSE-NEXT: "ipu.buffer"() {offset = 512 : i64, sym_name = "t"
  // NOREUSE-LABEL: func.func @chain
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  func.func @chain(%arg0: tensor<1024xf32>) -> tensor<1024xf32> attributes {ipu.program} {
    "ipu.host_to_device"(%arg0) {buffer = @x, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<1024xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @x_to_y} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.execute"() {compute_set = @y_to_t} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @t, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<1024xf32>
    return %0 : tensor<1024xf32>
  }
  func.func private @x_to_y() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @relu, inputs = [@x], outputs = [@y], tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
  func.func private @y_to_t() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @relu, inputs = [@y], outputs = [@t], tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
  func.func private @relu(%arg0: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.codelet} {
    %cst = arith.constant dense<0.000000e+00> : tensor<64xf32>
    %0 = arith.maximumf %arg0, %cst : tensor<64xf32>
    return %0 : tensor<64xf32>
  }
}

// -----

// The same chain inside a loop (Poplar's Repeat): the next iteration reads @x again after @t
// is written, so everything the body uses is live through the whole loop: three offsets.

module attributes {ipu.target = "tiny"} {
  // CHECK: "ipu.buffer"() {offset = 0 : i64, sym_name = "x2"
  // CHECK-NEXT: "ipu.buffer"() {offset = 256 : i64, sym_name = "y2"
  // CHECK-NEXT: "ipu.buffer"() {offset = 512 : i64, sym_name = "t2"
  // CHECK-LABEL: func.func @loop
  "ipu.buffer"() {sym_name = "x2", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y2", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t2", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  func.func @loop(%arg0: tensor<1024xf32>) -> tensor<1024xf32> attributes {ipu.program} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    "ipu.host_to_device"(%arg0) {buffer = @x2, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<1024xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    scf.for %i = %c0 to %c4 step %c1 {
      "ipu.execute"() {compute_set = @x_to_y} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
      "ipu.execute"() {compute_set = @y_to_t} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
    }
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @t2, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<1024xf32>
    return %0 : tensor<1024xf32>
  }
  func.func private @x_to_y() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @relu, inputs = [@x2], outputs = [@y2], tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
  func.func private @y_to_t() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @relu, inputs = [@y2], outputs = [@t2], tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
  func.func private @relu(%arg0: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.codelet} {
    %cst = arith.constant dense<0.000000e+00> : tensor<64xf32>
    %0 = arith.maximumf %arg0, %cst : tensor<64xf32>
    return %0 : tensor<64xf32>
  }
}

// -----

// The branches of an scf.if exclude each other: @a (then) and @b (else) share bytes. @x is
// live until the branch that reads it, @y from the branch that writes it.

module attributes {ipu.target = "tiny"} {
  // CHECK: "ipu.buffer"() {offset = 0 : i64, sym_name = "x3"
  // CHECK-NEXT: "ipu.buffer"() {offset = 256 : i64, sym_name = "a3"
  // CHECK-NEXT: "ipu.buffer"() {offset = 256 : i64, sym_name = "b3"
  // CHECK-NEXT: "ipu.buffer"() {offset = 512 : i64, sym_name = "y3"
  // CHECK-LABEL: func.func @branches
  "ipu.buffer"() {sym_name = "x3", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "a3", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b3", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y3", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  func.func @branches(%arg0: tensor<1024xf32>) -> tensor<1024xf32> attributes {ipu.program} {
    %true = arith.constant true
    "ipu.host_to_device"(%arg0) {buffer = @x3, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<1024xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    scf.if %true {
      "ipu.execute"() {compute_set = @x_to_a} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
      "ipu.execute"() {compute_set = @a_to_y} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
    } else {
      "ipu.execute"() {compute_set = @x_to_b} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
      "ipu.execute"() {compute_set = @b_to_y} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
    }
    %0 = "ipu.device_to_host"() {buffer = @y3, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<1024xf32>
    return %0 : tensor<1024xf32>
  }
  func.func private @x_to_a() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @relu, inputs = [@x3], outputs = [@a3], tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
  func.func private @a_to_y() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @relu, inputs = [@a3], outputs = [@y3], tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
  func.func private @x_to_b() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @relu, inputs = [@x3], outputs = [@b3], tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
  func.func private @b_to_y() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @relu, inputs = [@b3], outputs = [@y3], tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
  func.func private @relu(%arg0: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.codelet} {
    %cst = arith.constant dense<0.000000e+00> : tensor<64xf32>
    %0 = arith.maximumf %arg0, %cst : tensor<64xf32>
    return %0 : tensor<64xf32>
  }
}
