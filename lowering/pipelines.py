"""The default compilation pipeline, L0 -> L3, as a named pipeline and a function.

    ipu-opt model.mlir -p 'builtin.module(ipu-default-pipeline{target=gc200})'
    ipu-compile model.mlir -o model.l3.mlir --target gc200

Its steps: record the target; rewrite torch-mlir's TMTensor ops (cumsum, sort, scatter) into
generics (`ipu-convert-tm-tensor`, first: upstream passes such as symbol-dce refuse unregistered
ops); keep the entry function (`ipu-select-entry`, then upstream
`symbol-dce` drops the functions it does not call); lower TOSA to linalg with upstream passes (`ipu-import-tosa`,
a no-op on other input); compute what depends only on constants (`ipu-fold-constants`, which
also decides the `cf.assert`s there); fold an inference BatchNorm's per-channel scale and shift
into the constant filter and bias of the convolution before it (`ipu-fold-batch-norm`);
convert standard dialects to L1 (`ipu-convert-to-ipu`, which also normalizes with upstream
passes); place layers on the IPUs of a multi-IPU target (`ipu-shard`, checking annotations
only on one IPU), run them as pipeline stages over micro-batches when asked (`ipu-pipeline`,
not a default step); plan tiles (`ipu-plan`); lower to buffers, exchanges
and supersteps (`ipu-schedule`); fuse element-wise compute sets into their producers
(`ipu-fuse-compute-sets`); run independent work on disjoint tiles in one superstep
(`ipu-merge-supersteps`); lay out tile memory (`ipu-memory-plan`); verify.
"""

from __future__ import annotations

from mlir import ir

from ipu_mlir.target import DEFAULT_TARGET, TARGET_ATTR

from .pass_registry import NamedPipeline, PipelineError, build_pass_manager, register_pipeline
from .resident import resident_names
from .select_entry import public_functions

STEPS = (
    "ipu-convert-tm-tensor",
    "ipu-select-entry",
    "symbol-dce",
    "ipu-import-tosa",
    "ipu-index-to-iota",
    "ipu-fp8-matmul",
    "ipu-fp8-conv",
    "ipu-fold-constants",
    "ipu-fold-batch-norm",
    "ipu-convert-to-ipu",
    "ipu-partials-type",
    "canonicalize",
    "cse",
    "ipu-shard",
    "ipu-plan",
    "ipu-schedule",
    "ipu-fuse-compute-sets",
    "ipu-merge-supersteps",
    "ipu-memory-plan",
    "ipu-verify",
)

# Supersteps ipu-merge-supersteps searches ahead when pipelining: enough to find every stage's
# work of a pipeline step (an assumption, tuned on bench/pipeline.py: a stage of a few layers
# holds tens of supersteps).
PIPELINE_LOOKAHEAD = 64


def default_pipeline(
    target: str | None = None,
    memory_report: str | None = None,
    entry: str | None = None,
    memory_fraction: float | None = None,
    micro_batches: int = 1,
    replicas: int = 1,
    training: bool = False,
) -> str:
    """`memory_fraction`: ipu-plan's budget per tile (poplin's availableMemoryProportion);
    None: the target's. `micro_batches` > 1: ipu-pipeline after ipu-shard; `replicas` > 1:
    ipu-replicate after them, ipu-shard then sharding each replica over its share of the IPUs.
    Both together only for a `training` step (device variables), whose replicas ipu-replicate
    keeps one program (SPMD)."""
    steps = ([f"ipu-set-target{{target={_quoted(target)}}}"] if target else []) + list(STEPS)
    if replicas != 1:
        if micro_batches != 1 and not training:
            raise PipelineError("pipelined replicas (micro-batches and replicas together) are implemented for training only")
        at = steps.index("ipu-shard")
        steps[at : at + 1] = [f"ipu-shard{{replicas={replicas}}}", f"ipu-replicate{{replicas={replicas}}}"]
    if micro_batches != 1:
        shard = next(index for index, step in enumerate(steps) if step.startswith("ipu-shard"))
        steps.insert(shard + 1, f"ipu-pipeline{{micro-batches={micro_batches}}}")
    if micro_batches != 1 or replicas != 1:
        steps[steps.index("ipu-merge-supersteps")] = f"ipu-merge-supersteps{{lookahead={PIPELINE_LOOKAHEAD}}}"
    if memory_fraction is not None:
        if not 0 < memory_fraction <= 1:
            raise PipelineError(f"memory fraction {memory_fraction} is not in (0, 1] (availableMemoryProportion)")
        steps[steps.index("ipu-plan")] = f"ipu-plan{{memory-fraction={memory_fraction!r}}}"
    if entry:
        steps[steps.index("ipu-select-entry")] = f"ipu-select-entry{{entry={_quoted(entry)}}}"
    if memory_report:
        steps[steps.index("ipu-memory-plan")] = f"ipu-memory-plan{{report={_quoted(memory_report)}}}"
    return "builtin.module(" + ",".join(steps) + ")"


def _quoted(value: str) -> str:
    """An option value as the pipeline syntax reads it back: quoted when it holds spaces,
    commas, braces, parentheses or quotes (a path such as `my targets/t,1.toml`)."""
    if not any(c.isspace() or c in ",{}()'\"=" for c in value):
        return value
    for quote in ("'", '"'):
        if quote not in value:
            return f"{quote}{value}{quote}"
    raise PipelineError(f"cannot pass {value!r} as a pipeline option: it holds both kinds of quotes")


def _expand(options: str) -> str:
    chosen = {"target": None, "entry": None}
    for option in filter(None, (o.strip() for o in options.split())):
        key, _, value = option.partition("=")
        if key not in chosen or not value:
            raise PipelineError(f"unknown option '{option}' (ipu-default-pipeline takes target=NAME_OR_FILE entry=FUNCTION)")
        chosen[key] = value
    return default_pipeline(chosen["target"], entry=chosen["entry"])


register_pipeline(NamedPipeline("ipu-default-pipeline", "L0 (linalg on tensors) to an L3 ipu program: " + ", ".join(STEPS), _expand))


def compile_module(
    module: ir.Module,
    target: str | None = None,
    entry: str | None = None,
    memory_fraction: float | None = None,
    micro_batches: int = 1,
    replicas: int = 1,
) -> ir.Module:
    """Runs the default pipeline on `module` in place (a target given here wins over the
    module's `ipu.target`; neither: gc200) and returns it. `entry` names the public function
    compiled (default: main, or the only public function; `lowering/select_entry.py`);
    `memory_fraction` the planner's share of each tile's memory (default: the target's);
    `micro_batches` > 1 pipelines the sharded program (ipu-pipeline), `replicas` > 1 replicates
    it (ipu-replicate)."""
    operation = module.operation
    if target is None and TARGET_ATTR not in operation.attributes:
        target = DEFAULT_TARGET
    training = any(resident_names(function)[0] for function in public_functions(operation))
    pipeline = default_pipeline(
        target, entry=entry, memory_fraction=memory_fraction, micro_batches=micro_batches, replicas=replicas, training=training
    )
    build_pass_manager(pipeline, module.context).run(operation)
    return module
