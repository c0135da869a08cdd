// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 1 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc200 | FileCheck %s

// Generics reading a window `d0 + d1`, whose window loop ipu-plan keeps whole while it cuts
// the other (test/lit/plan/admits.mlir), compared with upstream MLIR's ExecutionEngine on
// each target: unfolds of both orientations (the row-major shortcut used to cut the window
// loop, and every tile read `a` from offset 0: max rel error 1.97), a windowed reduction
// `acc - k x` (no associative combiner; it went wrong the same way) and one with `acc + k x`
// whose long summed window loop the search would otherwise cut.

// CHECK: check output 0: max abs error 0, max rel error 0 {{.*}}: ok
// CHECK: check output 1: max abs error 0, max rel error 0 {{.*}}: ok
// CHECK: check output 2: max abs error 0, max rel error 0 (exact): ok
// CHECK: check output 3: max abs error 0, max rel error 0 (exact): ok
// CHECK-NOT: FAILED

#in = affine_map<(d0, d1) -> (d0 + d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#transposed = affine_map<(d0, d1) -> (d1, d0)>
#w = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @main(%a: tensor<67xf32>, %b: tensor<259xi32>, %w: tensor<4xi32>, %init: tensor<256xi32>,
                %c: tensor<1027xi32>, %v: tensor<1024xi32>, %init4: tensor<4xi32>)
    -> (tensor<64x4xf32>, tensor<4x64xf32>, tensor<256xi32>, tensor<4xi32>) {
  %e = tensor.empty() : tensor<64x4xf32>
  %unfold = linalg.generic {indexing_maps = [#in, #transposed], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<67xf32>) outs(%e : tensor<64x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<64x4xf32>
  %e2 = tensor.empty() : tensor<4x64xf32>
  %rows = linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<67xf32>) outs(%e2 : tensor<4x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x64xf32>
  %difference = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["reduction", "parallel"]} ins(%b, %w : tensor<259xi32>, tensor<4xi32>) outs(%init : tensor<256xi32>) {
  ^bb0(%x: i32, %k: i32, %acc: i32):
    %m = arith.muli %x, %k : i32
    %d = arith.subi %acc, %m : i32
    linalg.yield %d : i32
  } -> tensor<256xi32>
  %sum = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["reduction", "parallel"]} ins(%c, %v : tensor<1027xi32>, tensor<1024xi32>) outs(%init4 : tensor<4xi32>) {
  ^bb0(%x: i32, %k: i32, %acc: i32):
    %m = arith.muli %x, %k : i32
    %d = arith.addi %acc, %m : i32
    linalg.yield %d : i32
  } -> tensor<4xi32>
  return %unfold, %rows, %difference, %sum : tensor<64x4xf32>, tensor<4x64xf32>, tensor<256xi32>, tensor<4xi32>
}
