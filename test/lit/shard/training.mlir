// ipu-shard on a training step (frontends/joint.py's joint program): the forward is placed as a
// model's is (blocks or memory balance); each backward and update op goes to the IPU of the
// layer its location names (that layer's first forward op), one naming none follows the op
// before it. The device variables count as weights in the balance.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-shard)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-shard{ipus=2},ipu-plan)' | FileCheck %s --check-prefix=PLAN

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @blocks
  func.func @blocks(%w0: tensor<64x64xf32> {ipu.resident = "param:l0.weight"}, %w1: tensor<64x64xf32> {ipu.resident = "param:l1.weight"},
                    %x: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<64x64xf32> {ipu.resident = "param:l0.weight"},
                    tensor<64x64xf32> {ipu.resident = "param:l1.weight"})
      attributes {ipu.begin_blocks = {"l1" = 3 : i64}} {
    // CHECK: "ipu.matmul"{{.*}}ipu.ipu_id = 0 : i64
    // CHECK: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    // The loss's gradient names no layer: on the IPU of the op before it.
    // CHECK: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    // CHECK: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    // CHECK: "ipu.matmul"{{.*}}ipu.ipu_id = 0 : i64
    // CHECK: "ipu.matmul"{{.*}}ipu.ipu_id = 0 : i64
    // CHECK: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    %h = "ipu.matmul"(%x, %w0) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l0"("aten.mm"("m.py":1:0))))
    %y = "ipu.matmul"(%h, %w1) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l1"("aten.mm"("m.py":2:0))))
    %gy = "ipu.matmul"(%y, %w1) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("aten.mul"("m.py":3:0)))
    %gh = "ipu.matmul"(%gy, %w1) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l1"("aten.mm"("m.py":4:0))))
    %g0 = "ipu.matmul"(%gh, %w0) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l0"("aten.mm"("m.py":5:0))))
    // the update of l0.weight, then of l1.weight (a layer inside a named one finds it)
    %u0 = "ipu.matmul"(%w0, %w0) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("phase:update"("l0"("aten.sub"("m.py":6:0))))
    %u1 = "ipu.matmul"(%w1, %w1) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("phase:update"("l1.inner"("aten.sub"("m.py":7:0))))
    return %g0, %u0, %u1 : tensor<8x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
  }
}

// -----

// Memory balance over the forward alone: each forward matmul weighs its weight, a parameter
// (16,384 bytes, counted twice: with its gradient; an optimizer state would count once more),
// and its result (2,048 bytes); the backward's larger results do not move the cut. Each op goes to the stage its middle byte falls in: on 4 IPUs the forward on
// IPUs 1 and 3, on 2 IPUs on 0 and 1; the backward of l1 with l1, of l0 with l0.
module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @balanced
  // PLAN-LABEL: func.func @balanced
  func.func @balanced(%w0: tensor<64x64xf32> {ipu.resident = "param:l0.weight"}, %w1: tensor<64x64xf32> {ipu.resident = "param:l1.weight"},
                      %x: tensor<8x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
    // CHECK: "ipu.matmul"{{.*}}ipu.ipu_id = 1 : i64
    // CHECK: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    // CHECK: "ipu.matmul"{{.*}}ipu.ipu_id = 3 : i64
    // CHECK: "ipu.matmul"{{.*}}ipu.ipu_id = 1 : i64
    // The variables on their first user's IPU: %w0 on IPU 0's tiles, %w1 on IPU 1's (1472..2943).
    // PLAN-SAME: (%{{[a-z0-9_]*}}: tensor<64x64xf32> {ipu.mapping = {{[^}]*}}tiles = array<i64: {{[0-9]}}{{[0-9]*}},
    // PLAN-SAME: ipu.mapping = {{[^}]*}}tiles = array<i64: {{1[4-9][0-9][0-9]|2[0-9][0-9][0-9]}},
    %h = "ipu.matmul"(%x, %w0) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l0"("aten.mm"("m.py":1:0))))
    %y = "ipu.matmul"(%h, %w1) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l1"("aten.mm"("m.py":2:0))))
    %gw1 = "ipu.matmul"(%w1, %w1) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("phase:backward"("l1"("aten.mm"("m.py":3:0))))
    %gw0 = "ipu.matmul"(%w0, %gw1) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("phase:backward"("l0"("aten.mm"("m.py":4:0))))
    return %gw0, %gw1 : tensor<64x64xf32>, tensor<64x64xf32>
  }
}

// -----

// A parameter's optimizer state weighs with it: l2.weight has Adam's two (4 x 16,384 bytes with
// its gradient), so the 2-IPU cut falls after l1 (l0 and l1 on IPU 0); counting the parameters
// alone (thirds), l1 would go to IPU 1.
module attributes {ipu.target = "m2000"} {
  // PLAN-LABEL: func.func @optimizer_state
  func.func @optimizer_state(%w0: tensor<64x64xf32> {ipu.resident = "param:l0.weight"}, %w1: tensor<64x64xf32> {ipu.resident = "param:l1.weight"},
                             %w2: tensor<64x64xf32> {ipu.resident = "param:l2.weight"},
                             %m: tensor<64x64xf32> {ipu.resident = "opt:exp_avg:l2.weight"}, %v: tensor<64x64xf32> {ipu.resident = "opt:exp_avg_sq:l2.weight"},
                             %x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    // PLAN: "ipu.matmul"{{.*}}ipu.ipu_id = 0 : i64
    // PLAN: "ipu.matmul"{{.*}}ipu.ipu_id = 0 : i64
    // PLAN: "ipu.matmul"{{.*}}ipu.ipu_id = 1 : i64
    %h = "ipu.matmul"(%x, %w0) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l0"("aten.mm"("m.py":1:0))))
    %i = "ipu.matmul"(%h, %w1) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l1"("aten.mm"("m.py":2:0))))
    %y = "ipu.matmul"(%i, %w2) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l2"("aten.mm"("m.py":3:0))))
    return %y : tensor<8x64xf32>
  }
}
