"""A zoo model's parameters as device variables (`ipu.resident`) against the same model with
them as constants: peak bytes per tile of the memory plan and, with --simulate, the simulated
cycles of one run. What a training step's parameters cost where they stay resident.

    .venv/bin/python bench/resident_params.py resnet50 --size 224 --simulate

Every tensor constant of more than 64 elements becomes an argument marked `ipu.resident`
(read-only: this is the forward pass only). Measured on gc200 (28 Nov, branch f2): ResNet-50
at 224, 239 variables: peak 124,564 bytes a tile as constants, 125,972 as variables (242,592
before ipu-plan spread crowded variables), 711,035 cycles; ResNet-18 at 32, 82 variables:
40,484 and 41,852 bytes, 24,919 and 26,384 cycles (variables keep BatchNorm unfolded).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from mlir import ir

import ipu_mlir.frontends.torch as ipu_torch
from ipu_mlir.dialects import ipu
from ipu_mlir.frontends import api, zoo
from ipu_mlir.lowering.memory_plan import chosen_plan
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime.api import load_simulator
from ipu_mlir.target import load_target


def make_resident(module: ir.Module) -> int:
    """Turns the entry's tensor constants of more than 64 elements into resident arguments;
    returns how many."""
    with module.context:
        main = next(op for op in module.body.operations if op.operation.name == "func.func")
        block = main.regions[0].blocks[0]
        attrs = [ir.DictAttr(a) for a in ir.ArrayAttr(main.attributes["arg_attrs"])] if "arg_attrs" in main.attributes else []
        attrs += [ir.DictAttr.get({})] * (len(block.arguments) - len(attrs))
        constants = [
            op
            for op in block.operations
            if op.operation.name == "arith.constant"
            and isinstance(op.results[0].type, ir.RankedTensorType)
            and np.prod(ir.RankedTensorType(op.results[0].type).shape) > 64
        ]
        for number, op in enumerate(constants):
            argument = block.add_argument(op.results[0].type, op.location)
            op.results[0].replace_all_uses_with(argument)
            op.operation.erase()
            attrs.append(ir.DictAttr.get({ipu.RESIDENT_ATTR: ir.StringAttr.get(f"param:{number}")}))
        results = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results
        main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in block.arguments], results))
        main.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
        return len(constants)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=sorted(zoo.MODELS))
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--target", default="gc200")
    parser.add_argument("--simulate", action="store_true", help="also load the simulator: cycles of one run")
    args = parser.parse_args()
    model, inputs = zoo.build(args.model, size=args.size)
    imported = ipu_torch.export(model, *inputs)
    target = load_target(args.target)
    for resident in (False, True):
        with imported.context:
            module = api.copy_module(imported)
        count = make_resident(module) if resident else 0
        start = time.process_time()
        with module.context:
            compile_module(module, args.target)
            plan = chosen_plan(module.operation, target)
        seconds = time.process_time() - start
        what = f"{count} parameters as variables" if resident else "parameters as constants"
        peak = int(plan.footprint.max())
        line = f"{args.model} {args.size} on {args.target}, {what}: compile {seconds:.1f} s CPU, peak {peak:,} bytes a tile"
        if args.simulate:
            line += f", {load_simulator(module, verified=True).profile.cycles:,} cycles"
        print(line)


if __name__ == "__main__":
    main()
