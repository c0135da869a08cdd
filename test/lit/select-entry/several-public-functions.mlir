// `ipu-select-entry` keeps one public function; `symbol-dce` then drops the others unless the
// entry calls them. Without `entry`, `main` is chosen; several public functions and no `main`
// is an error naming them, as is an entry that does not exist.
// RUN: ipu-opt %s -p 'builtin.module(ipu-select-entry{entry=f},symbol-dce)' | FileCheck %s --check-prefix=F
// RUN: ipu-opt %s -p 'builtin.module(ipu-select-entry,symbol-dce)' | FileCheck %s --check-prefix=MAIN
// RUN: not ipu-opt %s -p 'builtin.module(ipu-select-entry{entry=g})' 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: ipu-compile %s --target tiny --entry f | FileCheck %s --check-prefix=COMPILED

// F-NOT: func.func @main
// F: func.func @f(
// F: func.func private @helper(
// F-NOT: func.func @main

// MAIN-NOT: @f(
// MAIN-NOT: @helper(
// MAIN: func.func @main(
// MAIN-NOT: @f(

// MISSING: error: no public function @g to compile (public functions: @f, @main)

// COMPILED: func.func @f({{.*}}attributes {ipu.program}
// COMPILED-NOT: func.func @main

func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = func.call @helper(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

func.func private @helper(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.addf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
