// --dump-pass-pipeline prints the pipeline to stderr before running it, as mlir-opt does:
// upstream passes with every option spelled out.
// RUN: ipu-opt %s -p 'builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))' --dump-pass-pipeline 2> %t.stderr | FileCheck %s --check-prefix=OUTPUT
// RUN: FileCheck %s < %t.stderr
// RUN: ipu-opt %s -p 'builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))' --dump-pass-pipeline -o %t 2> %t.stderr
// RUN: FileCheck %s --check-prefix=OUTPUT < %t

// CHECK: Pass Manager with 3 passes:
// CHECK-NEXT: builtin.module(canonicalize{ {{.*}}max-iterations=10{{.*}}},ipu-set-target,func.func(cse))

// OUTPUT-NOT: Pass Manager
// OUTPUT: module attributes {ipu.target = "tiny"}
func.func @f() {
  return
}
