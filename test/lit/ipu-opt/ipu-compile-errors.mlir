// RUN: rm -rf %t && mkdir -p %t && touch %t/empty.mlir
// RUN: not ipu-compile %t/empty.mlir -o %t/out.mlir 2>&1 | FileCheck --check-prefix=EMPTY %s
// RUN: not ipu-compile %s -o %t/out.mlir --target gc9 2>&1 | FileCheck --check-prefix=TARGET %s -DTARGETS='%builtin_targets'
// RUN: not ipu-compile %s -o %t/out.mlir --memory-report %t/no/report.json 2>&1 | FileCheck --check-prefix=REPORT %s
// RUN: not ipu-compile %t/missing.mlir 2>&1 | FileCheck --check-prefix=MISSING %s
// RUN: not ipu-compile %s --bogus 2>&1 | FileCheck --check-prefix=FLAG %s
// RUN: not ls %t/out.mlir

// ipu-compile's errors name ipu-compile; those about the command line have no location.

// EMPTY: {{^}}ipu-compile: error: nothing to compile: '{{.*}}empty.mlir' is empty{{$}}
// TARGET: {{^}}ipu-compile: error: unknown target 'gc9'; built-in targets: [[TARGETS]] (or give the path of a .toml target file){{$}}
// REPORT: {{^}}ipu-compile: error: cannot write the memory report '{{.*}}/no/report.json': No such file or directory{{$}}
// MISSING: {{^}}ipu-compile: error: cannot open '{{.*}}missing.mlir': No such file or directory{{$}}
// FLAG: {{^}}ipu-compile: error: unrecognized arguments: --bogus{{$}}

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
