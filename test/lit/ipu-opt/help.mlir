// --list-passes and --help list every registered Python pass with its summary and options;
// --help-pass shows one pass's whole description.
// RUN: ipu-opt --list-passes | FileCheck %s -DTARGETS='%builtin_targets'
// RUN: ipu-opt --help | FileCheck %s --check-prefixes=HELP,CHECK -DTARGETS='%builtin_targets'
// RUN: ipu-opt --help-pass ipu-set-target | FileCheck %s --check-prefix=PASS
// RUN: not ipu-opt --help-pass ipu-set-targt 2>&1 | FileCheck %s --check-prefix=TYPO
// RUN: not ipu-opt --no-such-flag %s 2>&1 | FileCheck %s --check-prefix=FLAG

// HELP: usage: ipu-opt
// HELP: --pass-pipeline PIPELINE
// HELP: --split-input-file
// HELP: --verify-diagnostics
// CHECK: Python passes (mix them with any upstream MLIR pass in --pass-pipeline):
// CHECK: ipu-set-target{{ +}}Record the target machine in the module's `ipu.target` attribute.
// CHECK-NEXT: target=<str>  built-in target name ([[TARGETS]]) or path of a target .toml file (required)
// CHECK: ipu-verify{{ +}}Run the Python verifier of the ipu dialect on the module, for the module's target.

// PASS: ipu-set-target: Record the target machine in the module's `ipu.target` attribute.
// PASS: Before, with `ipu-set-target{target=tiny}`:
// PASS: After:
// PASS: module attributes {ipu.target = "tiny"} {
// PASS: Options:
// PASS-NEXT: target=<str>

// TYPO: ipu-opt: error: no Python pass named 'ipu-set-targt'; did you mean 'ipu-set-target'?
// FLAG: ipu-opt: error: unrecognized arguments: --no-such-flag
