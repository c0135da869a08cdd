# The two entry points of the README: `make demo` and `make test`.
# Both create (or refresh, when pyproject.toml changes) a local virtual environment first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-quick lint lit pytest browser conformance fuzz fuzz-control fuzz-special fuzz-torch bench docs docs-check pictures clean train-full big-models

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

# The dialect and pipeline tour, then a full-size model: ResNet-50 at 224x224 from PyTorch,
# compiled for gc200, simulated and checked against PyTorch (about 4 minutes on 2 cores).
demo: $(STAMP)
	$(BIN)/ipu-demo
	$(BIN)/ipu-run --model resnet50 --target gc200

test: lint lit pytest

# pytest's workers (pytest-xdist): one per core of the 2-core machine the project is sized for;
# `make test PYTEST_WORKERS=0` runs in one process.
PYTEST_WORKERS ?= 2

# The edit loop: ruff, the lit tests of a few passes and the unit-level pytest files (the
# dialect, targets, codelets, simulator, verifier, planner pieces; 1,178 tests): 17 s on two
# idle cores (2026-11-28). `make test` (8 minutes there, from a fresh clone) is what a merge
# needs: it alone runs the tools, the differential and conformance tests, the PyTorch models
# and the bench driver.
QUICK_LIT := dialect fold-constants merge-supersteps select-entry fuse-compute-sets index-to-iota
QUICK_PYTEST := attrs builders target pass_registry verifier layers oracle ops_registry cost_model codelet \
	simulator program steps serialize select_entry races replicas phases dialect_doc resources exchange memory_plan
test-quick: lint $(STAMP)
	$(BIN)/lit -s $(addprefix test/lit/,$(QUICK_LIT))
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) $(patsubst %,test/python/test_%.py,$(QUICK_PYTEST))

# ruff (configured in pyproject.toml): the tree is formatted and lint-clean, or the test fails.
lint: $(STAMP)
	$(BIN)/ruff format --check --quiet .
	$(BIN)/ruff check --quiet .

lit: $(STAMP)
	$(BIN)/lit -sv test/lit

pytest: $(STAMP) browser
	$(BIN)/pytest -q -n $(PYTEST_WORKERS)

# Debian's chromium, for the test that opens ipu-vis's report in a real headless browser
# (test/python/test_vis_browser.py). Tried, never required: without it that test is skipped
# and says why.
browser:
	@command -v chromium >/dev/null || { { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
		echo "chromium could not be installed (needs root and apt-get): the browser test will be skipped"; }

# Every record's examples with each loop cut into every count of parts, on tiny, gc2 and gc200
# (test/python/test_conformance.py; `make test` runs its shorter default).
conformance: $(STAMP)
	IPU_CONFORMANCE_ALL=1 $(BIN)/pytest -q test/python/test_conformance.py

# Full-size ResNet-50 training on gc200 against PyTorch's loop: docs/training.md's console
# block, minutes long (test/python/test_training_full.py; `make test` skips it); and a
# transformer pipelined over 4 IPUs x 2 replicas of a pod16 (test_replicated_pipelines.py).
train-full: $(STAMP)
	IPU_TRAIN_FULL=1 $(BIN)/pytest -q test/python/test_training_full.py test/python/test_replicated_pipelines.py

# BERT-Large ([3, 7, 7, 7] over an m2000) and GPT-2 medium (sharded over an m2000) at full size,
# with GPT-2 small and BERT-base: time and peak memory per phase, each checked against PyTorch
# (bench/big_models.py; docs/many-ipus.md). Minutes long, several GiB.
big-models: $(STAMP)
	nice $(BIN)/python bench/big_models.py

# The differential fuzzer (test/fuzz/run_fuzz.py): random programs on tiny, gc2 and gc200 in
# f32/f16/f64/i32/i8/i64 (i1 masks, i64 indices) -- named linalg ops (matmuls, convolutions
# plain/grouped/depthwise, pooling), generics (element-wise, reductions, non-associative
# combiners, window maps, linalg.index, arg-max/min), gathers, TMTensor scatter/scan/sort/topk,
# TOSA, tensor ops (strided slices, pad, reshapes, concat) and scf.for loops -- simulated and
# checked against the ExecutionEngine: ok / wrong / crash / refused (known refusals with their
# reason in test/fuzz/known_failures.py). E.g. `make fuzz FUZZ_SEEDS=5000 FUZZ_START=10000`;
# reproducers go to build/fuzz/.
FUZZ_SEEDS ?= 2000
FUZZ_START ?= 0
fuzz: $(STAMP)
	$(BIN)/python test/fuzz/run_fuzz.py --seeds $(FUZZ_SEEDS) --start $(FUZZ_START)

# The control-flow fuzzer (test/fuzz/fuzz_control.py): scf.while with data-dependent trip counts,
# scf.if / index_switch on reduced scalars, scf.for carrying scalars, nesting, scalars outside
# generics, wrapped and clamped gathers, scatters with duplicate indices, pack / unpack, math
# at special values; the same checks and options, e.g. `make fuzz-control FUZZ_SEEDS=500`.
fuzz-control: $(STAMP)
	$(BIN)/python test/fuzz/run_fuzz.py --generator control --seeds $(FUZZ_SEEDS) --start $(FUZZ_START)

# Every element-wise arith / math op on every pair of special values (test/fuzz/fuzz_special.py:
# seed N is op N; 224 seeds sweep them all).
fuzz-special: $(STAMP)
	$(BIN)/python test/fuzz/run_fuzz.py --generator special --seeds 224

# The PyTorch-level fuzzer (test/fuzz/fuzz_pytorch.py): random small nn.Modules (layers,
# activations, indexing, reductions, attention, scatters, einsum, torch.cond, integer division,
# bool / uint8 mask inputs, dict / list outputs, odd layouts and magnitudes, NaN / inf / -0.0 /
# subnormal inputs) through frontends.torch.compile, and small models with a loss and an
# optimizer (at times such a bad batch, or an lr scheduler between calls; from seed 2782 also
# test/fuzz/torch_training.py's gathers, scatters, sorts, RNNs and more losses in training
# chains, LAMB / maximize / lr 0 / dampening, odd batch layouts, f16 / bf16) through trainingModel,
# checked against PyTorch eager and PyTorch's own loop: ok / refused / wrong / crash, each
# verdict in build/fuzz-torch/results.jsonl. About 4 seconds a seed on a quiet core.
fuzz-torch: $(STAMP)
	$(BIN)/python test/fuzz/fuzz_pytorch.py --seeds $(FUZZ_SEEDS) --start $(FUZZ_START)

# Every benchmark (bench/run.py) into bench/results.md and bench/results.json, with xDSL (the
# `bench` extra) for its interpreter rows; `make bench BENCH_ARGS=--quick` for a short run.
BENCH_ARGS ?=
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python bench/run.py --readme README.md $(BENCH_ARGS)

docs: $(STAMP)
	$(BIN)/ipu-dialect-doc -o docs/dialect.md

# Every console block of README.md and docs/, the full-size models' too (minutes; `make test`
# runs the others: test/python/test_docs_console.py).
docs-check: $(STAMP)
	IPU_DOCS_ALL=1 $(BIN)/pytest -q test/python/test_docs_console.py

# README.md's two pictures (full-size ResNet-50's graph and its report) and the graph's caption.
pictures: $(STAMP) browser
	$(BIN)/python docs/images/pictures.py

clean:
	rm -rf $(VENV) build *.egg-info
