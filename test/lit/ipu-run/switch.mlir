// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 0 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --random-inputs 0 --check --target gc200 | FileCheck %s

// scf.index_switch as Poplar's Switch, in a Repeat: the case is the largest element, truncated,
// modulo 3 (computed on one tile, read by ipu.predicate as an index); each case updates the
// tensor and an i32 carried through every block. With these inputs all three blocks run.

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK: check output 1: max abs error 0, max rel error 0 (exact): ok
// CHECK: supersteps:

#id = affine_map<(d0) -> (d0)>
#red = affine_map<(d0) -> ()>
func.func @main(%x0: tensor<64xf32>) -> (tensor<64xf32>, tensor<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %e0 = tensor.empty() : tensor<f32>
  %i0 = arith.constant 0 : i32
  %r:2 = scf.for %k = %c0 to %c6 step %c1 iter_args(%x = %x0, %seen = %i0) -> (tensor<64xf32>, i32) {
    %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %m = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction"]} ins(%x : tensor<64xf32>) outs(%z : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %a = arith.maximumf %v, %acc : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    %big = tensor.extract %m[] : tensor<f32>
    %bi = arith.fptosi %big : f32 to i32
    %three = arith.constant 3 : i32
    %sel = arith.remsi %bi, %three : i32
    %idx = arith.index_cast %sel : i32 to index
    %n:2 = scf.index_switch %idx -> tensor<64xf32>, i32
    case 0 {
      %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
      ^bb0(%v: f32, %o: f32):
        %w = arith.addf %v, %two : f32
        linalg.yield %w : f32
      } -> tensor<64xf32>
      %s = arith.addi %seen, %bi : i32
      scf.yield %d, %s : tensor<64xf32>, i32
    }
    case 1 {
      %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
      ^bb0(%v: f32, %o: f32):
        %w = arith.mulf %v, %two : f32
        linalg.yield %w : f32
      } -> tensor<64xf32>
      scf.yield %d, %seen : tensor<64xf32>, i32
    }
    default {
      %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
      ^bb0(%v: f32, %o: f32):
        %w = arith.subf %v, %two : f32
        linalg.yield %w : f32
      } -> tensor<64xf32>
      %s = arith.subi %seen, %bi : i32
      scf.yield %d, %s : tensor<64xf32>, i32
    }
    scf.yield %n#0, %n#1 : tensor<64xf32>, i32
  }
  %t = tensor.from_elements %r#1 : tensor<i32>
  return %r#0, %t : tensor<64xf32>, tensor<i32>
}
