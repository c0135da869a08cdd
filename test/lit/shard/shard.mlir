// ipu-shard alone (L1 -> L1): layers placed on the IPUs of an m2000 by memory balance, or by
// the annotations PopTorch's BeginBlock(ipu_id=...) leaves; then planned on their IPU's tiles
// and scheduled with the tensors crossing IPUs copied in link phases.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-shard{ipus=2})' | FileCheck %s --check-prefix=TWO
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-shard)' | FileCheck %s --check-prefix=FOUR
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-shard{ipus=2},ipu-plan)' | FileCheck %s --check-prefix=PLAN
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-shard{ipus=2},ipu-plan,ipu-schedule,ipu-verify)' | FileCheck %s --check-prefix=L3

// Bytes per op (weights read first + result): 1,081,344; 1,056,768; 270,336; 270,336 of
// 2,678,784. Each op goes to the stage its middle byte falls in.
module attributes {ipu.target = "m2000"} {
  // TWO-LABEL: func.func @mlp
  // FOUR-LABEL: func.func @mlp
  // PLAN-LABEL: func.func @mlp
  func.func @mlp(%x: tensor<8x256xf32>) -> tensor<8x256xf32> {
    %w0 = arith.constant dense<1.0> : tensor<256x1024xf32>
    %w1 = arith.constant dense<1.0> : tensor<1024x256xf32>
    %w2 = arith.constant dense<1.0> : tensor<256x256xf32>
    %w3 = arith.constant dense<1.0> : tensor<256x256xf32>
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 0 : i64
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 1 : i64
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 1 : i64
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 1 : i64
    // FOUR: "ipu.matmul"{{.*}}ipu.ipu_id = 0 : i64
    // FOUR: "ipu.matmul"{{.*}}ipu.ipu_id = 2 : i64
    // FOUR: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    // FOUR: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    // The first matmul on IPU 0's tiles, the others on IPU 1's (1472..2943).
    // PLAN: "ipu.matmul"{{.*}}ipu.tiles = array<i64: {{[0-9]}}{{[0-9]*}},
    // PLAN: "ipu.matmul"{{.*}}ipu.tiles = array<i64: {{1[4-9][0-9][0-9]|2[0-9][0-9][0-9]}},
    %0 = "ipu.matmul"(%x, %w0) : (tensor<8x256xf32>, tensor<256x1024xf32>) -> tensor<8x1024xf32>
    %1 = "ipu.matmul"(%0, %w1) : (tensor<8x1024xf32>, tensor<1024x256xf32>) -> tensor<8x256xf32>
    %2 = "ipu.matmul"(%1, %w2) : (tensor<8x256xf32>, tensor<256x256xf32>) -> tensor<8x256xf32>
    %3 = "ipu.matmul"(%2, %w3) : (tensor<8x256xf32>, tensor<256x256xf32>) -> tensor<8x256xf32>
    return %3 : tensor<8x256xf32>
  }
  // One tensor crosses, %0 from IPU 0 to IPU 1: its copy follows the one global sync.
  // L3-LABEL: func.func @mlp
  // L3: "ipu.execute"
  // L3: "ipu.sync"() {kind = "global"}
  // L3-NEXT: "ipu.copy"(){{.*}}source = @matmul0
  // L3-NOT: kind = "global"
  // L3: return
}

// -----

// Annotations: an op without one runs on the IPU of the op before it.
module attributes {ipu.target = "m2000"} {
  // TWO-LABEL: func.func @annotated
  // FOUR-LABEL: func.func @annotated
  func.func @annotated(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 0 : i64
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 1 : i64
    // FOUR: "ipu.matmul"{{.*}}ipu.ipu_id = 0 : i64
    // FOUR: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    %0 = "ipu.matmul"(%x, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %1 = "ipu.matmul"(%0, %w) {ipu.ipu_id = 3 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %2 = "ipu.matmul"(%1, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %3 = "ipu.matmul"(%2, %w) {ipu.ipu_id = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %3 : tensor<8x64xf32>
  }
  // %w crosses from IPU 0, where its first user placed it, once to each other IPU using it:
  // IPU 3's second matmul copies it from IPU 3's copy, within the IPU.
  // L3-LABEL: func.func @annotated
  // L3: "ipu.sync"() {kind = "global"}
  // L3: "ipu.copy"() {dest = @[[ONCE:matmul_in[0-9]+]], {{.*}}source = @arg1_0
  // L3: "ipu.sync"() {kind = "internal"}
  // L3: "ipu.copy"() {dest = @matmul_in{{[0-9]+}}, {{.*}}source = @[[ONCE]]
  // L3: "ipu.sync"() {kind = "global"}
  // L3: "ipu.copy"() {{{.*}}source = @arg1_0
  // L3-NOT: kind = "global"
}

// -----

// PopTorch's BeginBlock from the torch front end: `ipu.begin_blocks` names the layer where each
// IPU's block begins; an op inside that layer (its location's name is the layer's path or one
// under it) starts the block, the ops after it follow; the innermost layer named wins.
module attributes {ipu.target = "m2000"} {
  // TWO-LABEL: func.func @blocks
  // FOUR-LABEL: func.func @blocks
  // PLAN-LABEL: func.func @blocks
  // L3-LABEL: func.func @blocks
  func.func @blocks(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32>
      attributes {ipu.begin_blocks = {"layer.1" = 2 : i64, "layer.1.inner" = 3 : i64, "layer.10" = 1 : i64}} {
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 0 : i64
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 2 : i64
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 2 : i64
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    // TWO: "ipu.matmul"{{.*}}ipu.ipu_id = 1 : i64
    // FOUR-COUNT-5: "ipu.matmul"{{.*}}ipu.ipu_id
    %0 = "ipu.matmul"(%x, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("layer.0"("aten.mm"("m.py":1:0)))
    %1 = "ipu.matmul"(%0, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("layer.1.query"("aten.mm"("m.py":2:0)))
    %2 = "ipu.matmul"(%1, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc(unknown)
    %3 = "ipu.matmul"(%2, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("layer.1.inner.dense"("aten.mm"("m.py":3:0)))
    %4 = "ipu.matmul"(%3, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("layer.10"("aten.mm"("m.py":4:0)))
    return %4 : tensor<8x64xf32>
  }
}
