// RUN: ipu-opt %s --split-input-file --load-pass-plugin=%S/Inputs/whole_loops.py -p 'builtin.module(ipu-plan)' | FileCheck %s

// A loop an op's record keeps whole (a softmax's row; here the loops `test.whole_loops`
// names, Inputs/whole_loops.py) is never cut, whichever path of ipu-plan chooses the
// partition (`Space.admits`).

// -----

// The shortcut (a generic with no combiner cuts its result row-major) would cut loop 0; the
// cost model's search cuts loop 1 instead.
// CHECK-LABEL: func.func @shortcut
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 64, 4>

#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  func.func @shortcut(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %e = tensor.empty() : tensor<64x64xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], test.whole_loops = array<i64: 0>} ins(%a : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.negf %x : f32
      linalg.yield %y : f32
    } -> tensor<64x64xf32>
    return %r : tensor<64x64xf32>
  }
}

// -----

// The reuse path: %n is cut in rows, which the second generic keeps whole: it does not take
// %n's partition.
// CHECK-LABEL: func.func @reuse
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 4, 64>
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 64, 4>

#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  func.func @reuse(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %e = tensor.empty() : tensor<64x64xf32>
    %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.negf %x : f32
      linalg.yield %y : f32
    } -> tensor<64x64xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], test.whole_loops = array<i64: 0>} ins(%n : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = math.exp %x : f32
      linalg.yield %y : f32
    } -> tensor<64x64xf32>
    return %r : tensor<64x64xf32>
  }
}

// -----

// The search (a reduction with a combiner): the summed loop 1 may be cut, the kept loop 0 not.
// CHECK-LABEL: func.func @search
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 64,

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @search(%a: tensor<64x1024xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
    %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"], test.whole_loops = array<i64: 0>} ins(%a : tensor<64x1024xf32>) outs(%init : tensor<64xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    return %r : tensor<64xf32>
  }
}

// -----

// The serial split: no cut of this matmul over 16 tiles fits 39,321 bytes a tile; its columns
// (loop 1) are kept whole, so it is computed in pieces of rows (lhs sliced), not of columns
// (which cost the same without the plugin, and win the tie), each keeping its columns whole.
// CHECK-LABEL: func.func @serial
// CHECK-NOT: tensor.extract_slice %arg1
// CHECK: tensor.extract_slice %arg0
// CHECK-NEXT: "ipu.matmul"{{.*}}ipu.partition = array<i64: {{[0-9]+}}, 256, {{[0-9]+}}>
// CHECK-NOT: tensor.extract_slice %arg1
// CHECK: tensor.concat dim(0)

module attributes {ipu.target = "tiny"} {
  func.func @serial(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
    %c = "ipu.matmul"(%a, %b) {test.whole_loops = array<i64: 1>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    return %c : tensor<256x256xf32>
  }
}
