"""The differential fuzzer from the command line (`make fuzz`).

    .venv/bin/python test/fuzz/run_fuzz.py --seeds 2000 --start 0 [--out build/fuzz] [--jobs 4]

Runs seeds start .. start+seeds-1 (see fuzz_check.py), prints a progress line, a reproducer
path for every wrong result and crash, and at the end the counts, the refusals by reason and the op
kinds covered. Exit status 1 if any seed gave a wrong result or a crash that is not in the
expected-failure list (`known_failures.py`), if a listed seed now passes, or if a refusal is
of a kind `known_failures.KNOWN_REFUSALS` does not list (each listed kind is printed with its
reason, each unlisted one with its first seed).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_check import GENERATORS, Outcome, check, write_reproducer  # noqa: E402
from known_failures import KNOWN, KNOWN_CONTROL, KNOWN_REFUSALS  # noqa: E402


def _one(args):
    seed, out, generator = args
    outcome = check(seed, Path(out), generator)
    return (
        outcome.seed,
        outcome.status,
        outcome.reason,
        str(outcome.reproducer or ""),
        outcome.program.kinds,
        outcome.program.dtype,
        outcome.program.target,
    )


def _results(work, jobs):
    """Results in seed order. A worker that dies (a segfault in MLIR) breaks the pool: the seeds
    it was running are run again one per fresh process, and the one that kills its process is a
    crash with a reproducer; the rest go on in a new pool."""
    pending = list(work)
    while pending:
        with ProcessPoolExecutor(jobs) as pool:
            futures = [pool.submit(_one, item) for item in pending]
            for index, future in enumerate(futures):
                try:
                    result = future.result()
                except BrokenProcessPool:
                    break
                yield result
                pending[index] = None
            else:
                return
        left = [item for item in pending if item is not None]
        suspects, pending = left[: jobs + 1], left[jobs + 1 :]  # running or queued when it broke
        for item in suspects:
            with ProcessPoolExecutor(1) as alone:
                try:
                    yield alone.submit(_one, item).result()
                except BrokenProcessPool:
                    yield _died(*item)


def _died(seed, out, generator):
    program = GENERATORS[generator](seed)
    outcome = Outcome(seed, "crash", "the process died (a signal: segfault or abort in MLIR)", "", program)
    repro = write_reproducer(outcome, Path(out), generator)
    return (seed, outcome.status, outcome.reason, str(repro), program.kinds, program.dtype, program.target)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1000, help="how many seeds (default 1000)")
    parser.add_argument("--start", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--out", default="build/fuzz", help="directory for reproducers (default build/fuzz)")
    parser.add_argument(
        "--generator", choices=sorted(GENERATORS), default="tensor", help="tensor (fuzz_gen.py, the default) or control (fuzz_control.py)"
    )
    parser.add_argument("--jobs", type=int, default=max(1, min(8, (os.cpu_count() or 2) // 2)), help="worker processes")
    options = parser.parse_args(argv)
    seeds = range(options.start, options.start + options.seeds)
    counts, refusals, kinds, types = collections.Counter(), collections.Counter(), collections.Counter(), collections.Counter()
    new_failures, fixed, first_seed = [], [], {}
    begin = time.time()
    known_seeds = {"tensor": KNOWN, "control": KNOWN_CONTROL}.get(options.generator, {})
    work = [(seed, options.out, options.generator) for seed in seeds]
    for done, (seed, status, reason, repro, op_kinds, dtype, target) in enumerate(_results(work, options.jobs), 1):
        counts[status] += 1
        kinds.update(op_kinds)
        types[f"{dtype}/{target}"] += 1
        if status == "refused":
            refusals[reason] += 1
            first_seed.setdefault(reason, seed)
        elif status in ("wrong", "crash"):
            known = known_seeds.get(seed)
            listed = " (known: xfail)" if known else ""
            print(f"\nseed {seed}: {status}: {reason}{listed}\n  reproducer: {repro}", flush=True)
            if not known:
                new_failures.append(seed)
        elif seed in known_seeds:
            fixed.append(seed)
        if done % 10 == 0 or done == len(work):
            rate = done / max(time.time() - begin, 1e-9)
            line = " ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            print(f"\r[{done}/{len(work)}] {line}  ({rate:.1f} seeds/s)", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print(f"seeds {options.start}..{options.start + options.seeds - 1}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"time {time.time() - begin:.0f} s")
    unlisted = [reason for reason in refusals if known_refusal(reason) is None]
    if refusals:
        print("refusals by reason:")
        for reason, n in refusals.most_common():
            why = known_refusal(reason)
            print(
                f"  {n:5d}  {reason}\n         "
                + (f"known: {why}" if why else f"NOT LISTED in known_failures.py (first seed {first_seed[reason]})")
            )
    print("types/targets: " + ", ".join(f"{k} {v}" for k, v in sorted(types.items())))
    print("op kinds: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    if fixed:
        print(f"listed as known failures but passing now (remove from known_failures.py): {fixed}")
    if new_failures:
        print(f"new failures: {new_failures}")
    return 1 if new_failures or fixed or unlisted else 0


def known_refusal(kind: str) -> str | None:
    """The reason `known_failures.KNOWN_REFUSALS` gives for a refusal of this kind, if any."""
    return next((why for pattern, why in KNOWN_REFUSALS.items() if re.search(pattern, kind)), None)


if __name__ == "__main__":
    sys.exit(main())
