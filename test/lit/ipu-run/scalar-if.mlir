// RUN: ipu-run %s --random-inputs 0 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 1 --check --target gc2 | FileCheck %s
// RUN: ipu-run %s --random-inputs 2 --check --target gc200 | FileCheck %s

// The smallest slice of scalar code: two elements extracted (each an exchange from its tile to
// a 0-d tensor's), added on one tile, compared with zero; the i1 is the predicate of Poplar's
// If (ipu.predicate: a broadcast and a sync), whose blocks scale by the sum (a scalar captured
// by a generic: broadcast by exchange) or insert it into the other input.

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK-NOT: FAILED
// CHECK: supersteps:

func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %x = tensor.extract %a[%c0] : tensor<8xf32>
  %y = tensor.extract %b[%c3] : tensor<8xf32>
  %s = arith.addf %x, %y : f32
  %z = arith.constant 0.0 : f32
  %c = arith.cmpf ogt, %s, %z : f32
  %r = scf.if %c -> (tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%in: f32, %o: f32):
      %v = arith.mulf %in, %s : f32
      linalg.yield %v : f32
    } -> tensor<8xf32>
    scf.yield %m : tensor<8xf32>
  } else {
    %i = tensor.insert %s into %b[%c3] : tensor<8xf32>
    scf.yield %i : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
