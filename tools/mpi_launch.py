"""`ipu-run --ipus N`: the same command on N MPI ranks, one simulated IPU each
(runtime/distributed.py). Outside mpiexec, `launch` starts `mpiexec -n N` on ipu-run itself;
inside it (`--ipus N` or a plain `mpiexec -n N ipu-run ...`), `run_rank` joins the world and
makes any rank's error end every rank.

MPICH's mpiexec (Hydra) reports a rank that died in a banner naming its process id, on
stdout, and each `MPI_Abort` in an `Abort(...)` line on stderr. The launcher passes everything
else through, says which rank died in one line (each rank writes its process id into a folder
the launcher made), and prints a line all ranks printed alike (an input error) once.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ipu_mlir.runtime import distributed
from ipu_mlir.target.diagnostics import IpuError

RANKS_ENV = "IPU_MLIR_MPI_RANKS"  # the folder where each rank writes its process id (`launch`)
_BANNER = re.compile(r"^(=+|=\s.*|YOUR APPLICATION TERMINATED.*|This typically refers to a problem.*|Please see the FAQ page.*)$")
_PID = re.compile(r"^=\s+PID (\d+) RUNNING AT")
_EXIT = re.compile(r"^YOUR APPLICATION TERMINATED WITH THE EXIT STRING: (.*)$")


def mpiexec() -> str:
    """The mpiexec of this Python's environment (the `mpi` extra's MPICH), else one on PATH."""
    found = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")
    if found is None:
        raise IpuError("--ipus needs MPI's mpiexec: pip install 'ipu-mlir[mpi]'")
    return found


def launch(ranks: int, argv: list[str]) -> int:
    """Runs `ipu-run argv` on `ranks` MPI ranks; its exit status (1 if a rank died)."""
    command = [mpiexec(), "-n", str(ranks), sys.executable, "-m", "ipu_mlir.tools.ipu_run", *argv]
    with tempfile.TemporaryDirectory(prefix="ipu-run-ranks-") as folder:
        # stdin a pipe held open and never written: Hydra then has no stdin to forward (fed the
        # caller's, it once failed a CI run, "process reading stdin too slowly; can't keep up").
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, RANKS_ENV: folder},
        )
        died: dict[str, str] = {}
        printed: set[str] = set()
        lock = threading.Lock()

        def relay(stream, out, banner: bool) -> None:
            blank = False  # Hydra's banner starts with an empty line: held until the next one
            for line in stream:
                text = line.rstrip("\n")
                if banner and (pid := _PID.match(text)):
                    died["pid"] = pid.group(1)
                if banner and (exit_ := _EXIT.match(text)):
                    died["how"] = exit_.group(1)
                if (banner and _BANNER.match(text)) or text.startswith("Abort("):
                    blank = False
                    continue
                if banner and not text:
                    blank = True
                    continue
                with lock:
                    if not banner and text in printed:  # every rank's same error: once
                        continue
                    printed.add(text)
                    out.write("\n" * blank + line)
                    out.flush()
                blank = False

        threads = [
            threading.Thread(target=relay, args=args) for args in ((process.stdout, sys.stdout, True), (process.stderr, sys.stderr, False))
        ]
        for thread in threads:
            thread.start()
        status = process.wait()
        process.stdin.close()
        for thread in threads:
            thread.join()
        errors = sorted(Path(folder).glob("error.*"), key=lambda path: int(path.suffix[1:]))
        if "pid" in died:
            rank = (Path(folder) / died["pid"]).read_text() if (Path(folder) / died["pid"]).exists() else "?"
            sys.stderr.write(f"ipu-run: rank {rank} died ({died.get('how', 'no exit string')}); mpiexec stopped the other ranks\n")
        elif status and errors and not any(line.strip() for line in printed):  # the rank's line, lost by Hydra's abort
            sys.stderr.write(errors[0].read_text() + "\n")
        elif status and not any(line.strip() for line in printed):
            sys.stderr.write(f"ipu-run: mpiexec ended with exit status {status}\n")
    return 1 if status else 0


def run_rank(ipus: int | None, run: Callable[[], int], message: Callable[[IpuError], str]) -> int:
    """`run()` on this MPI rank: joined, its process id noted for the launcher; an error on
    any rank is printed (by `message`) and ends every rank (`World.fail`)."""
    world = None
    try:
        world = distributed.start()
        if ipus is not None and ipus != world.size:
            raise IpuError(f"--ipus {ipus} but mpiexec started {world.size} ranks: give the same number, or leave --ipus out")
        folder = os.environ.get(RANKS_ENV)
        if folder:
            (Path(folder) / str(os.getpid())).write_text(str(world.rank))
        return run()
    except IpuError as error:
        text = message(error)
    except Exception as error:  # the last line of defence, as tools/cli.py's, but ending every rank
        text = f"ipu-run: internal error: {type(error).__name__}: {error} (please report it with the input)"
    if world is None:
        sys.stderr.write(text + "\n")
        return 1
    if world.rank:  # an error every rank meets (an input's) is rank 0's to print: its abort ends this one first
        time.sleep(1)
    folder = os.environ.get(RANKS_ENV)
    if folder:  # for the launcher too: Hydra may end a run before it forwards the aborting rank's stderr
        (Path(folder) / f"error.{world.rank}").write_text(text)
    world.fail(text)
    return 1
