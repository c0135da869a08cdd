// A failing pass's errors are diagnostics like any other: expected, they make the run succeed,
// and the output file is written.
// RUN: ipu-opt %s --verify-diagnostics -p 'canonicalize,ipu-set-target{target=nope},cse' -o %t

// expected-error-re@below {{unknown target 'nope'; built-in targets: {{[^()]+}} (or give the path of a .toml target file)}}
module {
  func.func @f() {
    return
  }
}
