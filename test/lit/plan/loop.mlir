// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s

// A loop body is planned once. The carried tensor keeps its initial value's layout (the
// argument's, 4 tiles of 64) all through the loop, and the element-wise body keeps the layout
// of its largest operand, the carried tensor: the yielded value is already where the next
// iteration reads it. (The generic's `outs` is the carried tensor, unread, as upstream's
// bufferization wants for the reference run of test_differential.py.)

#id = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @main
  // CHECK-SAME: {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}}
  // CHECK: scf.for
  // CHECK: tensor.extract_slice {{.*}} {ipu.mapping =
  // CHECK: linalg.generic {{.*}} {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.partition = array<i64: 64>, ipu.tiles = array<i64: 0, 4, 1>}
  // CHECK: scf.yield
  func.func @main(%u0: tensor<256xf32>, %y: tensor<258xf32>) -> tensor<256xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%u = %u0) -> tensor<256xf32> {
      %left = tensor.extract_slice %y[2] [256] [1] : tensor<258xf32> to tensor<256xf32>
      %n = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
          ins(%u, %left : tensor<256xf32>, tensor<256xf32>) outs(%u : tensor<256xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %v = arith.addf %a, %b : f32
        linalg.yield %v : f32
      } -> tensor<256xf32>
      scf.yield %n : tensor<256xf32>
    }
    return %r : tensor<256xf32>
  }
}
