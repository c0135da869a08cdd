"""`ipu-set-target`: choose the machine a module is compiled for."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from ipu_mlir.target import TARGET_ATTR, builtin_targets, load_target

from .pass_registry import ModulePass, register_pass


@register_pass
@dataclass
class SetTarget(ModulePass):
    """Record the target machine in the module's `ipu.target` attribute.

    The target is a built-in name (a file of target/targets/) or the path of a target .toml file;
    it is loaded and checked here, so a typo fails now rather than in the planner. Later
    passes, the verifier and the simulator read it back (`runtime.target.target_of`).
    The value is stored as written: a relative path stays relative to the working directory.

    Before, with `ipu-set-target{target=tiny}`:

        module {
          func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> { ... }
        }

    After:

        module attributes {ipu.target = "tiny"} {
          func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> { ... }
        }
    """

    name = "ipu-set-target"

    target: str = field(metadata={"help": f"built-in target name ({', '.join(builtin_targets())}) or path of a target .toml file"})

    def run(self, module: ir.Operation) -> None:
        load_target(self.target)
        module.attributes[TARGET_ATTR] = ir.StringAttr.get(self.target, module.context)
