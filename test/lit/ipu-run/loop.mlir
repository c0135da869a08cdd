// RUN: ipu-run %s --random-inputs 1 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc200 | FileCheck %s

// A time-stepping loop as users write it: 1-D heat, 50 steps of u += 0.25 * (left - 2u + right)
// on a zero-padded u, the new u a fresh tensor each step (`outs` is a tensor.empty). The
// compiler turns the loop into Poplar's Repeat; --check runs the same loop under the
// ExecutionEngine, whose bufferization must allow a loop yielding a new tensor.

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK-NOT: FAILED
// CHECK: supersteps:

#id = affine_map<(d0) -> (d0)>
module {
  func.func @main(%u0: tensor<512xf32>) -> tensor<512xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c50 = arith.constant 50 : index
    %zero = arith.constant 0.0 : f32
    %k = arith.constant 0.25 : f32
    %two = arith.constant 2.0 : f32
    %r = scf.for %t = %c0 to %c50 step %c1 iter_args(%u = %u0) -> tensor<512xf32> {
      %p = tensor.pad %u low[1] high[1] {
      ^bb0(%i: index):
        tensor.yield %zero : f32
      } : tensor<512xf32> to tensor<514xf32>
      %l = tensor.extract_slice %p[0] [512] [1] : tensor<514xf32> to tensor<512xf32>
      %rt = tensor.extract_slice %p[2] [512] [1] : tensor<514xf32> to tensor<512xf32>
      %e = tensor.empty() : tensor<512xf32>
      %n = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
          ins(%u, %l, %rt : tensor<512xf32>, tensor<512xf32>, tensor<512xf32>) outs(%e : tensor<512xf32>) {
      ^bb0(%c: f32, %a: f32, %b: f32, %o: f32):
        %s = arith.addf %a, %b : f32
        %c2 = arith.mulf %two, %c : f32
        %d = arith.subf %s, %c2 : f32
        %kd = arith.mulf %k, %d : f32
        %v = arith.addf %c, %kd : f32
        linalg.yield %v : f32
      } -> tensor<512xf32>
      scf.yield %n : tensor<512xf32>
    }
    return %r : tensor<512xf32>
  }
}
