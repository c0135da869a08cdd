// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-set-target{target=tiny},ipu-convert-to-ipu,ipu-plan,ipu-schedule,ipu-verify)' | FileCheck %s

// scf.if becomes Poplar's If at L3 (lowering/control_flow.py): ipu.predicate reads the 0-d i1
// from the tile holding it, and each block copies the value it yields into the If's result
// buffer (made in the layout of the then-block's yield), ending its own superstep.

// CHECK-LABEL: func.func @if
// CHECK: "ipu.execute"
// CHECK: %[[P:.*]] = "ipu.predicate"() {buffer = @[[COND:.*]], tile = {{[0-9]+}} : i64} : () -> i1
// CHECK-NEXT: scf.if %[[P]] {
// CHECK: "ipu.execute"
// CHECK: "ipu.copy"() {dest = @[[RESULT:branch[0-9]+]]
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: } else {
// CHECK-NEXT: "ipu.copy"() {dest = @[[RESULT]]
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: }
// CHECK: "ipu.device_to_host"() {buffer = @[[RESULT]]
func.func @if(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %x = tensor.extract %a[%c0] : tensor<8xf32>
  %big = arith.cmpf ogt, %x, %zero : f32
  %r = scf.if %big -> tensor<8xf32> {
    %d = arith.addf %a, %a : tensor<8xf32>
    scf.yield %d : tensor<8xf32>
  } else {
    scf.yield %a : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// scf.while becomes RepeatWhileTrue: carried values get buffers (initial values copied in
// before the loop); the before block ends in scf.condition on ipu.predicate; the values it
// hands to the body stay in the buffers it left them in; the body writes the new values into
// the carried buffers in place (nothing reads the old ones after), so its yield copies nothing.
// L3 keeps no values on the loop.

// CHECK-LABEL: func.func @while
// CHECK: "ipu.copy"() {dest = @[[T:carried[0-9]+]]
// CHECK: "ipu.copy"() {dest = @[[K:carried[0-9]+]]
// CHECK: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: scf.while : () -> () {
// CHECK: "ipu.execute"
// CHECK: %[[P:.*]] = "ipu.predicate"()
// CHECK-NEXT: scf.condition(%[[P]])
// CHECK-NEXT: } do {
// CHECK: "ipu.execute"
// CHECK-NOT: "ipu.copy"
// CHECK: scf.yield
// CHECK: "ipu.device_to_host"() {buffer = @[[T]]
// CHECK-DAG: "ipu.vertex_group"() {{.*}}outputs = [@[[T]]]
// CHECK-DAG: "ipu.vertex_group"() {{.*}}outputs = [@[[K]]]
func.func @while(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c5 = arith.constant 5 : i32
  %r:2 = scf.while (%t = %a, %k = %c0) : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32) {
    %go = arith.cmpi slt, %k, %c5 : i32
    scf.condition(%go) %t, %k : tensor<4xf32>, i32
  } do {
  ^bb0(%t: tensor<4xf32>, %k: i32):
    %d = arith.addf %t, %t : tensor<4xf32>
    %k1 = arith.addi %k, %c1 : i32
    scf.yield %d, %k1 : tensor<4xf32>, i32
  }
  return %r#0 : tensor<4xf32>
}

// -----

// scf.index_switch becomes Poplar's Switch: ipu.predicate reads the index (an i64 on its tile),
// and each block, the default first, copies its yield into the Switch's result buffer.

// CHECK-LABEL: func.func @switch
// CHECK: %[[I:.*]] = "ipu.predicate"() {buffer = @{{.*}}, tile = {{[0-9]+}} : i64} : () -> index
// CHECK-NEXT: scf.index_switch %[[I]]
// CHECK-NEXT: case 2 {
// CHECK: "ipu.copy"() {dest = @[[RESULT:branch[0-9]+]]
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: default {
// CHECK: "ipu.copy"() {dest = @[[RESULT]]
// CHECK: "ipu.device_to_host"() {buffer = @[[RESULT]]
func.func @switch(%a: tensor<8xf32>, %n: tensor<2xi32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.extract %n[%c0] : tensor<2xi32>
  %i = arith.index_cast %e : i32 to index
  %r = scf.index_switch %i -> tensor<8xf32>
  case 2 {
    %d = arith.addf %a, %a : tensor<8xf32>
    scf.yield %d : tensor<8xf32>
  }
  default {
    scf.yield %a : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
