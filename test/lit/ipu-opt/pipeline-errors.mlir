// A pipeline that cannot be built is reported once, pointing into the pipeline text, before
// any input is processed; exit status 1 and no output.
// RUN: not ipu-opt %s -p 'builtin.module(canonicalize,no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN --implicit-check-not=module
// RUN: not ipu-opt %s -p 'func.func(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN-NESTED
// RUN: not ipu-opt %s -p 'ipu-set-targte{target=tiny}' 2>&1 | FileCheck %s --check-prefix=TYPO
// RUN: not ipu-opt %s -p 'builtin.module(func.func(cse)' 2>&1 | FileCheck %s --check-prefix=UNCLOSED
// RUN: not ipu-opt %s -p 'cse),canonicalize' 2>&1 | FileCheck %s --check-prefix=EXTRA-PAREN
// RUN: not ipu-opt %s -p 'cse,,canonicalize' 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not ipu-opt %s -p 'cse canonicalize' 2>&1 | FileCheck %s --check-prefix=NO-COMMA
// RUN: not ipu-opt %s -p 'builtin.module(func.func(canonicalize,ipu-verify))' 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not ipu-opt %s -p 'ipu-set-target' 2>&1 | FileCheck %s --check-prefix=REQUIRED
// RUN: not ipu-opt %s -p 'ipu-set-target{tagret=tiny}' 2>&1 | FileCheck %s --check-prefix=BAD-OPTION
// RUN: not ipu-opt %s -p 'ipu-set-target{target="tiny}' 2>&1 | FileCheck %s --check-prefix=QUOTE
// RUN: not ipu-opt %s -p 'ipu-verify{strict=true}' 2>&1 | FileCheck %s --check-prefix=NO-OPTIONS
// RUN: not ipu-opt %s -p 'canonicalize{max-iterations=many}' 2>&1 | FileCheck %s --check-prefix=UPSTREAM-OPTION

// UNKNOWN: ipu-opt: error: invalid --pass-pipeline: unknown pass 'no-such-pass': not an upstream MLIR pass nor a Python pass (ipu-opt --list-passes lists the Python passes)
// UNKNOWN-NEXT: {{^}}  builtin.module(canonicalize,no-such-pass){{$}}
// UNKNOWN-NEXT: {{^}}                              ^{{$}}

// UNKNOWN-NESTED: error: invalid --pass-pipeline: unknown pass 'no-such-pass'
// UNKNOWN-NESTED-NEXT: {{^}}  func.func(no-such-pass){{$}}
// UNKNOWN-NESTED-NEXT: {{^}}            ^{{$}}

// TYPO: error: invalid --pass-pipeline: unknown pass 'ipu-set-targte': not an upstream MLIR pass nor a Python pass; did you mean 'ipu-set-target'?

// UNCLOSED: error: invalid --pass-pipeline: missing ')' closing the nested pipeline
// EXTRA-PAREN: error: invalid --pass-pipeline: unbalanced ')'
// EXTRA-PAREN-NEXT: {{^}}  cse),canonicalize{{$}}
// EXTRA-PAREN-NEXT: {{^}}     ^{{$}}
// EMPTY: error: invalid --pass-pipeline: expected a pass name, found ','
// NO-COMMA: error: invalid --pass-pipeline: expected ',' between passes, found 'c'

// NESTED: error: invalid --pass-pipeline: 'ipu-verify' is a Python pass: it runs on the whole module and cannot be nested under 'func.func'; put it at the top level, e.g. builtin.module(ipu-verify)
// NESTED-NEXT: {{^}}  builtin.module(func.func(canonicalize,ipu-verify)){{$}}
// NESTED-NEXT: {{^}}                                       ^{{$}}

// REQUIRED: error: invalid --pass-pipeline: pass 'ipu-set-target' needs option target (e.g. ipu-set-target{target=...})
// BAD-OPTION: error: invalid --pass-pipeline: pass 'ipu-set-target' has no option 'tagret'; valid options: target
// QUOTE: error: invalid --pass-pipeline: unterminated " quote
// NO-OPTIONS: error: invalid --pass-pipeline: pass 'ipu-verify' takes no options, got 'strict'
// UPSTREAM-OPTION: error: invalid --pass-pipeline: for the --max-iterations option: 'many' value invalid for long argument!; failed to add `canonicalize` with options `max-iterations=many`

func.func @f() {
  return
}
