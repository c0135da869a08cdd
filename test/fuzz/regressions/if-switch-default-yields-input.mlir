// fuzz_control seed 1662, partly minimized: the count of positives of %v3 is 31 (numpy, on
// these inputs), so the if takes its else block, whose switch takes its default and yields %v3
// as it is. The simulator returned exactly that; the ExecutionEngine reference returned 3 in
// the 28 elements where %v3 is negative: the dead generic %v128 writing `outs(%v3)` was
// bufferized in place, because MLIR 22's one-shot-bufferize does not see that the switch's
// result aliases %v3 (reduced: switch-result-aliases-written-input.mlir; docs/mlir-notes.md).
module attributes {ipu.target = "tiny"} {
func.func @main(%arg0: tensor<i32>, %arg1: tensor<31x2xi32>, %arg2: tensor<1xi32>, %arg3: tensor<16x5xi32>, %arg4: tensor<2xi32>, %arg5: tensor<31xi32>, %arg6: tensor<i32>, %arg7: tensor<4x11xi32>, %arg8: tensor<i32>, %arg9: tensor<3xi32>, %arg10: tensor<5xi32>, %arg11: tensor<31xi32>, %arg12: tensor<31x2xi64>, %arg13: tensor<2xi32>) -> tensor<31x2xi32> {
  %s1 = tensor.extract %arg0[] : tensor<i32>
    %q2_1 = arith.maxui %s1, %s1 : i32
  %c4 = arith.constant 0 : index
  %c5 = arith.constant 1 : index
  %v3 = tensor.insert %q2_1 into %arg1[%c4, %c5] : tensor<31x2xi32>
  %c6 = arith.constant 0 : i32
  %e7 = tensor.empty() : tensor<i32>
  %f8 = linalg.fill ins(%c6 : i32) outs(%e7 : tensor<i32>) -> tensor<i32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%v3 : tensor<31x2xi32>) outs(%f8 : tensor<i32>) {
  ^bb0(%x: i32, %acc: i32):
    %z = arith.constant 0 : i32
    %p = arith.cmpi sgt, %x, %z : i32
    %i = arith.extui %p : i1 to i32
    %r = arith.addi %i, %acc : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  %s10 = tensor.extract %v9[] : tensor<i32>
  %c12 = arith.constant 31 : i32
  %go11 = arith.cmpi sgt, %s10, %c12 : i32
  %v13:2 = scf.if %go11 -> (tensor<31x2xi32>, i32) {
  %c14 = arith.constant 1 : i32
  %c15 = arith.constant 0 : i32
  %c16 = arith.constant 1 : i32
  %v17:2 = scf.while (%y18 = %v3, %k19 = %c15) : (tensor<31x2xi32>, i32) -> (tensor<31x2xi32>, i32) {
  %c22 = arith.constant -2147483648 : i32
  %e23 = tensor.empty() : tensor<i32>
  %f24 = linalg.fill ins(%c22 : i32) outs(%e23 : tensor<i32>) -> tensor<i32>
  %v25 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%y18 : tensor<31x2xi32>) outs(%f24 : tensor<i32>) {
  ^bb0(%x: i32, %acc: i32):
    %a = math.absi %x : i32
    %r = arith.maxsi %a, %acc : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  %s26 = tensor.extract %v25[] : tensor<i32>
  %c28 = arith.constant 6 : i32
  %go27 = arith.cmpi ne, %s26, %c28 : i32
  %go29 = arith.cmpi slt, %k19, %c14 : i32
  %go30 = arith.andi %go27, %go29 : i1
  %e31 = tensor.empty() : tensor<31x2xi32>
  %v32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y18 : tensor<31x2xi32>) outs(%e31 : tensor<31x2xi32>) {
  ^bb0(%a: i32, %o: i32):
    %r = arith.xori %a, %s26 : i32
    linalg.yield %r : i32
  } -> tensor<31x2xi32>
  scf.condition(%go30) %v32, %k19 : tensor<31x2xi32>, i32
  } do {
  ^bb0(%y20: tensor<31x2xi32>, %k21: i32):
  %c33 = arith.constant 0 : i32
  %e34 = tensor.empty() : tensor<i32>
  %f35 = linalg.fill ins(%c33 : i32) outs(%e34 : tensor<i32>) -> tensor<i32>
  %v36 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%arg2 : tensor<1xi32>) outs(%f35 : tensor<i32>) {
  ^bb0(%x: i32, %acc: i32):
    %z = arith.constant 0 : i32
    %p = arith.cmpi sgt, %x, %z : i32
    %i = arith.extui %p : i1 to i32
    %r = arith.addi %i, %acc : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  %s37 = tensor.extract %v36[] : tensor<i32>
  %c40 = arith.constant 1 : i32
  %k38 = arith.remui %s37, %c40 : i32
  %k39 = arith.index_cast %k38 : i32 to index
  %s41 = tensor.extract %arg2[%k39] : tensor<1xi32>
    %q42_1 = arith.constant 1 : i32
    %q42_2 = arith.shrsi %s41, %q42_1 : i32
    %q42_3 = arith.maxui %q42_2, %q42_2 : i32
  %c44 = arith.constant 0 : i32
  %e45 = tensor.empty() : tensor<i32>
  %f46 = linalg.fill ins(%c44 : i32) outs(%e45 : tensor<i32>) -> tensor<i32>
  %v47 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%y20 : tensor<31x2xi32>) outs(%f46 : tensor<i32>) {
  ^bb0(%x: i32, %acc: i32):
    %z = arith.constant 0 : i32
    %p = arith.cmpi sgt, %x, %z : i32
    %i = arith.extui %p : i1 to i32
    %r = arith.addi %i, %acc : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  %s48 = tensor.extract %v47[] : tensor<i32>
  %c51 = arith.constant 31 : i32
  %k49 = arith.remui %s48, %c51 : i32
  %k50 = arith.index_cast %k49 : i32 to index
  %c54 = arith.constant 2 : i32
  %k52 = arith.remui %s48, %c54 : i32
  %k53 = arith.index_cast %k52 : i32 to index
  %v43 = tensor.insert %q42_3 into %y20[%k50, %k53] : tensor<31x2xi32>
  %d56 = arith.constant dense<1> : tensor<31x2xi32>
  %v55 = arith.shrsi %v43, %d56 : tensor<31x2xi32>
  %k57 = arith.addi %k21, %c16 : i32
  scf.yield %v55, %k57 : tensor<31x2xi32>, i32
  }
  %e58 = tensor.empty() : tensor<31x2xi32>
  scf.yield %v17#0, %v17#1 : tensor<31x2xi32>, i32
  } else {
  %c97 = arith.constant 0 : i32
  %e98 = tensor.empty() : tensor<i32>
  %f99 = linalg.fill ins(%c97 : i32) outs(%e98 : tensor<i32>) -> tensor<i32>
  %v100 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%v3 : tensor<31x2xi32>) outs(%f99 : tensor<i32>) {
  ^bb0(%x: i32, %acc: i32):
    %r = arith.addi %x, %acc : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  %s101 = tensor.extract %v100[] : tensor<i32>
  %c102 = arith.constant 3 : i32
  %k103 = arith.remsi %s101, %c102 : i32
  %k104 = arith.index_cast %k103 : i32 to index
  %v105 = scf.index_switch %k104 -> tensor<31x2xi32>
  case 0 {
  %s106 = tensor.extract %arg8[] : tensor<i32>
    %q107_1 = arith.constant 2 : i32
    %q107_2 = arith.shli %s106, %q107_1 : i32
    %q107_3 = arith.ori %s106, %q107_2 : i32
    %q107_4 = arith.constant -3 : i32
    %q107_5 = arith.divui %s106, %q107_4 : i32
    %q107_6 = arith.maxui %s106, %s106 : i32
  %e109 = tensor.empty() : tensor<3xi32>
  %v110 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg9 : tensor<3xi32>) outs(%e109 : tensor<3xi32>) {
  ^bb0(%a: i32, %o: i32):
    %r = arith.xori %a, %q107_6 : i32
    linalg.yield %r : i32
  } -> tensor<3xi32>
  %v111 = tensor.extract_slice %v110[0] [1] [1] : tensor<3xi32> to tensor<i32>
  %e112 = tensor.empty() : tensor<31x2xi32>
  %v113 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v3, %v111 : tensor<31x2xi32>, tensor<i32>) outs(%e112 : tensor<31x2xi32>) {
  ^bb0(%a: i32, %b: i32, %o: i32):
    %r = arith.xori %a, %b : i32
    linalg.yield %r : i32
  } -> tensor<31x2xi32>
    scf.yield %v113 : tensor<31x2xi32>
  }
  case 1 {
  %d114 = arith.constant dense<[2147483647, -2147483648, 1, 0, -1, 1073741824, -2]> : tensor<7xi32>
  %v115 = tensor.concat dim(0) %d114, %arg10 : (tensor<7xi32>, tensor<5xi32>) -> tensor<12xi32>
  %e116 = tensor.empty() : tensor<12xi32>
  %v117 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%v115 : tensor<12xi32>) outs(%e116 : tensor<12xi32>) {
  ^bb0(%x: i32, %o: i32):
    %m0 = math.cttz %x : i32
    %m1 = math.ctlz %m0 : i32
    linalg.yield %m1 : i32
  } -> tensor<12xi32>
  %e118 = tensor.empty() : tensor<31x2xi32>
  %v119 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v3, %arg12 : tensor<31x2xi32>, tensor<31x2xi64>) outs(%e118 : tensor<31x2xi32>) {
  ^bb0(%in: i32, %crd0: i64, %out: i32):
    %at0 = arith.index_cast %crd0 : i64 to index
    %g = tensor.extract %arg11[%at0] : tensor<31xi32>
    %r = arith.addi %g, %in : i32
    linalg.yield %r : i32
  } -> tensor<31x2xi32>
    scf.yield %v119 : tensor<31x2xi32>
  }
  case 2 {
  %v120 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v3 : tensor<31x2xi32>) outs(%arg13 : tensor<2xi32>) {
  ^bb0(%in0: i32, %acc: i32):
    %r = arith.xori %in0, %acc : i32
    linalg.yield %r : i32
  } -> tensor<2xi32>
  %c121 = arith.constant 0 : i32
  %e122 = tensor.empty() : tensor<i32>
  %f123 = linalg.fill ins(%c121 : i32) outs(%e122 : tensor<i32>) -> tensor<i32>
  %v124 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%v120 : tensor<2xi32>) outs(%f123 : tensor<i32>) {
  ^bb0(%in0: i32, %acc: i32):
    %t1 = arith.maxui %in0, %in0 : i32
    %t2 = arith.constant 2 : i32
    %t3 = arith.remsi %in0, %t2 : i32
    %r = arith.addi %t3, %acc : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  %e125 = tensor.empty() : tensor<31x2xi32>
  %v126 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v3, %v124 : tensor<31x2xi32>, tensor<i32>) outs(%e125 : tensor<31x2xi32>) {
  ^bb0(%a: i32, %b: i32, %o: i32):
    %r = arith.xori %a, %b : i32
    linalg.yield %r : i32
  } -> tensor<31x2xi32>
    scf.yield %v126 : tensor<31x2xi32>
  }
  default {
    scf.yield %v3 : tensor<31x2xi32>
  }
  scf.yield %v105, %s10 : tensor<31x2xi32>, i32
  }
  %v127 = tensor.from_elements %v13#1 : tensor<i32>
  %v128 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v13#0 : tensor<31x2xi32>) outs(%v3 : tensor<31x2xi32>) {
  ^bb0(%in0: i32, %out: i32):
    %t1 = arith.constant 3 : i32
    %t2 = arith.maxsi %out, %t1 : i32
    %t3 = arith.minui %t2, %out : i32
    linalg.yield %t3 : i32
  } -> tensor<31x2xi32>
  return %v13#0 : tensor<31x2xi32>
}
}

