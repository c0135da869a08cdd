"""What `pip install .` gives a user: the version in one place, `--version` on every tool, the
license, `py.typed`, the examples and data files in the wheel, the `mlir-opt` command, the
`[torch]` extra, a clear line when an extra is missing; and the wheel installed for real
(not editable) into a fresh virtual environment runs `ipu-demo` from any directory."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

import ipu_mlir
from ipu_mlir.tools import cli

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SCRIPTS = PYPROJECT["project"]["scripts"]
BIN = Path(sys.executable).parent


def test_one_version() -> None:
    assert ipu_mlir.__version__ == importlib.metadata.version("ipu-mlir")
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert f"## [{ipu_mlir.__version__}]" in (REPO / "CHANGELOG.md").read_text()


@pytest.mark.parametrize("tool", sorted(name for name in SCRIPTS if name.startswith("ipu-")))
def test_every_tool_has_version(tool: str) -> None:
    done = subprocess.run([BIN / tool, "--version"], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{tool} (ipu-mlir {ipu_mlir.__version__}, MLIR Python bindings 22.1.8.4)\n"


def test_mlir_opt_on_path() -> None:
    done = subprocess.run(
        [BIN / "mlir-opt", "--irdl-file", REPO / "dialects" / "ipu.irdl.mlir", REPO / "examples" / "relu.mlir"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert '"ipu.buffer"() {sym_name = "x"' in done.stdout


def test_license_is_apache_2() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    text = (REPO / "LICENSE").read_text()
    assert text.strip().startswith("Apache License\n                           Version 2.0, January 2004")
    assert "END OF TERMS AND CONDITIONS" in text


def test_extras() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {requirement.split("==")[0] for requirement in extras["torch"]} == {"torch", "torch-mlir", "ml_dtypes"}
    assert "ipu-mlir[torch]" in extras["test"]
    assert set(cli.EXTRAS.values()) <= set(extras)


def test_a_missing_extra_names_it(tmp_path: Path) -> None:
    # torch made unimportable, as on an install without the [torch] extra
    script = "import sys; sys.modules['torch'] = None; from ipu_mlir.tools import cli; sys.argv[0] = 'ipu-run'; sys.exit(cli.ipu_run())"
    done = subprocess.run(
        [sys.executable, "-c", script, "--model", "resnet18", "--size", "32"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1
    assert done.stderr == "ipu-run: error: this needs torch, which is not installed: pip install 'ipu-mlir[torch]'\n"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy of the tree's files (setuptools reuses a build/ directory it finds)."""
    out, tree = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("tree")
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True, text=True)
    for name in listed.stdout.splitlines():
        if (REPO / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, tree / name)
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out), str(tree)]
    subprocess.run(command, check=True, capture_output=True, timeout=600)
    (built,) = out.glob("ipu_mlir-*.whl")
    return built


def test_the_wheel_holds_the_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in [
        "ipu_mlir/__init__.py",
        "ipu_mlir/py.typed",
        "ipu_mlir/examples/cnn.mlir",
        "ipu_mlir/examples/relu.mlir",
        "ipu_mlir/dialects/ipu.irdl.mlir",
        "ipu_mlir/target/targets/gc200.toml",
        "ipu_mlir/vis/report.js",
        f"ipu_mlir-{ipu_mlir.__version__}.dist-info/licenses/LICENSE",
    ]:
        assert path in names or path.replace("/licenses/", "/") in names, path
    entry_points = zipfile.ZipFile(wheel).read(f"ipu_mlir-{ipu_mlir.__version__}.dist-info/entry_points.txt").decode()
    assert "mlir-opt = ipu_mlir.tools.cli:mlir_opt" in entry_points


def test_installed_wheel_runs_the_demo(wheel: Path, tmp_path: Path) -> None:
    """A fresh venv, the wheel installed without its dependencies, which come from this venv's
    site-packages on the path (not as a site dir: its editable finder of the tree stays off)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet", "--no-deps", str(wheel)]
    subprocess.run(install, check=True, capture_output=True, timeout=300)
    where = subprocess.run(
        [venv / "bin" / "python", "-c", "import ipu_mlir.tools.demo as d; print(d.__file__)"], capture_output=True, text=True, cwd=tmp_path
    )
    assert where.stdout.startswith(str(site)), where.stdout + where.stderr  # the installed copy, not the tree
    demo = subprocess.run([venv / "bin" / "ipu-demo"], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert demo.returncode == 0, demo.stderr
    assert "simulator vs upstream ExecutionEngine: max relative error" in demo.stdout and "(ok)" in demo.stdout
    version = subprocess.run([venv / "bin" / "mlir-opt", "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert "LLVM version 22" in version.stdout
