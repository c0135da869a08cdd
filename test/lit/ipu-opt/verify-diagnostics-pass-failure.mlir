// A failing pass's errors are diagnostics like any other: expected, they make the run succeed,
// and the output file is written.
// RUN: ipu-opt %s --verify-diagnostics -p 'canonicalize,ipu-set-target{target=nope},cse' -o %t

// expected-error@below {{unknown target 'nope'; built-in targets: bow, bow2000, bowpod16, bowpod64, gc2, gc200, m2000, pod16, pod64, tiny (or give the path of a .toml target file)}}
module {
  func.func @f() {
    return
  }
}
