// Found by the fuzzer (seed 5481): a false alarm of the harness. An argmax over f16 values
// (negated exp(tanh(..)) of f16 values) where two candidates round to the same f16: the
// simulator and the f16 program's own reference pick the first (30), the f32 twin the
// harness compared with picks the larger unrounded one (32). Integer results of f16 programs
// are now also checked against the f16 reference (fuzz_check.py).
// inputs: ipu_mlir.frontends.api.random_inputs(arguments, seed=5481)
module attributes {ipu.target = "tiny"} {
func.func @main(%arg0: tensor<11x65xf16>, %arg1: tensor<65xf16>) -> (tensor<11xi64>) {
  %e1 = tensor.empty() : tensor<11x65xf16>
  %v2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<11x65xf16>, tensor<65xf16>) outs(%e1 : tensor<11x65xf16>) {
  ^bb0(%in0: f16, %in1: f16, %out: f16):
    %t1 = math.absf %in1 : f16
    %t2 = arith.addf %t1, %in1 : f16
    %t3 = math.absf %in0 : f16
    %t4 = arith.constant 1.0 : f16
    %t5 = arith.addf %t3, %t4 : f16
    %t6 = arith.divf %t1, %t5 : f16
    linalg.yield %t6 : f16
  } -> tensor<11x65xf16>
  %e3 = tensor.empty() : tensor<11x65xf16>
  %e4 = tensor.empty() : tensor<65x11xf16>
  %v5:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%v2 : tensor<11x65xf16>) outs(%e3, %e4 : tensor<11x65xf16>, tensor<65x11xf16>) {
  ^bb0(%in0: f16, %o1: f16, %o2: f16):
    %t1 = arith.minimumf %in0, %in0 : f16
    %u1 = math.tanh %in0 : f16
    %u2 = math.exp %u1 : f16
    linalg.yield %t1, %u2 : f16, f16
  } -> (tensor<11x65xf16>, tensor<65x11xf16>)
  %c6 = arith.constant 0x7C00 : f16
  %e7 = tensor.empty() : tensor<65xf16>
  %f8 = linalg.fill ins(%c6 : f16) outs(%e7 : tensor<65xf16>) -> tensor<65xf16>
  %c9 = arith.constant 0 : i64
  %e10 = tensor.empty() : tensor<65xi64>
  %f11 = linalg.fill ins(%c9 : i64) outs(%e10 : tensor<65xi64>) -> tensor<65xi64>
  %v12:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%v5#0 : tensor<11x65xf16>) outs(%f8, %f11 : tensor<65xf16>, tensor<65xi64>) {
  ^bb0(%in: f16, %acc: f16, %idx: i64):
    %kx = linalg.index 0 : index
    %k = arith.index_cast %kx : index to i64
    %m = arith.minimumf %in, %acc : f16
    %better = arith.cmpf olt, %in, %acc : f16
    %s = arith.select %better, %k, %idx : i64
    linalg.yield %m, %s : f16, i64
  } -> (tensor<65xf16>, tensor<65xi64>)
  %e13 = tensor.empty() : tensor<65x11xf16>
  %v14 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v5#1 : tensor<65x11xf16>) outs(%e13 : tensor<65x11xf16>) {
  ^bb0(%in: f16, %out: f16):
    %i0 = linalg.index 0 : index
    %l0 = arith.index_cast %i0 : index to i64
    %x0cast = arith.sitofp %l0 : i64 to f16
    %b1 = arith.maximumf %in, %in : f16
    linalg.yield %b1 : f16
  } -> tensor<65x11xf16>
  %v15 = arith.negf %v5#1 : tensor<65x11xf16>
  %c16 = arith.constant 0xFC00 : f16
  %e17 = tensor.empty() : tensor<11xf16>
  %f18 = linalg.fill ins(%c16 : f16) outs(%e17 : tensor<11xf16>) -> tensor<11xf16>
  %c19 = arith.constant 0 : i64
  %e20 = tensor.empty() : tensor<11xi64>
  %f21 = linalg.fill ins(%c19 : i64) outs(%e20 : tensor<11xi64>) -> tensor<11xi64>
  %d23 = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64]> : tensor<65xi64>
  %v22:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%v15, %d23 : tensor<65x11xf16>, tensor<65xi64>) outs(%f18, %f21 : tensor<11xf16>, tensor<11xi64>) {
  ^bb0(%in: f16, %k: i64, %acc: f16, %idx: i64):
    %m = arith.maximumf %in, %acc : f16
    %better = arith.cmpf ogt, %in, %acc : f16
    %s = arith.select %better, %k, %idx : i64
    linalg.yield %m, %s : f16, i64
  } -> (tensor<11xf16>, tensor<11xi64>)
  return %v22#1 : tensor<11xi64>
}
}

