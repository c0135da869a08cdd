"""The pass registry: declaring and registering passes, option strings, pipeline text, and
errors raised by passes becoming MLIR diagnostics at their locations."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.lowering import pass_registry, verify_pass
from ipu_mlir.lowering.pass_registry import (
    ModulePass,
    PipelineError,
    build_pass,
    build_pass_manager,
    lookup_pass,
    parse_pipeline,
    register_pass,
    registered_passes,
)
from ipu_mlir.target import builtin_targets
from ipu_mlir.target.diagnostics import IpuError, op_error

MODULE = """\
func.func @f(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %b = arith.addi %a, %c0 : i32
  return %b : i32
}
"""


@pytest.fixture(autouse=True)
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Passes registered by a test disappear after it."""
    monkeypatch.setattr(pass_registry, "_REGISTRY", dict(pass_registry._REGISTRY))


@pytest.fixture
def context() -> ir.Context:
    with make_context() as context, ir.Location.unknown():
        yield context


def parse(text: str = MODULE) -> ir.Operation:
    return ir.Operation.parse(f"module {{\n{text}}}", source_name="input.mlir").operation


def register_tuning_pass() -> type[ModulePass]:
    @register_pass
    @dataclass
    class Tuning(ModulePass):
        """Record the options in module attributes.

        Before: module {}
        After:  module attributes {test.label = "x", ...} {}
        """

        name = "test-tuning"
        label: str = field(metadata={"help": "a label"})
        budget: float = field(default=0.6, metadata={"help": "a fraction", "above": 0, "maximum": 1})
        tiles: int = field(default=4, metadata={"help": "a count", "minimum": 1})
        fast_path: bool = field(default=False, metadata={"help": "a flag"})

        def run(self, module: ir.Operation) -> None:
            module.attributes["test.label"] = ir.StringAttr.get(self.label)
            module.attributes["test.budget"] = ir.FloatAttr.get_f64(self.budget)
            module.attributes["test.tiles"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), self.tiles)
            module.attributes["test.fast_path"] = ir.BoolAttr.get(self.fast_path)

    return Tuning


# --- the built-in passes ---------------------------------------------------------------------


def test_importing_lowering_registers_the_foundation_passes() -> None:
    names = [cls.name for cls in registered_passes()]
    assert "ipu-set-target" in names
    assert "ipu-verify" in names
    assert names == sorted(names)


@pytest.mark.parametrize("cls", registered_passes(), ids=lambda cls: cls.name)
def test_every_registered_pass_documents_a_summary_and_a_before_after_example(cls: type[ModulePass]) -> None:
    assert cls.summary().endswith(".")
    assert "Before" in cls.description() and "After" in cls.description()
    assert all(option.help for option in cls.options())


def test_set_target_stores_the_target_attribute(context: ir.Context) -> None:
    module = parse()
    build_pass_manager("ipu-set-target{target=gc2}").run(module)
    assert str(module.attributes["ipu.target"]) == '"gc2"'


def test_set_target_rejects_an_unknown_target_at_the_module(context: ir.Context) -> None:
    module = parse()
    with pytest.raises(ir.MLIRError) as caught:
        build_pass_manager("ipu-set-target{target=gc9000}").run(module)
    [diagnostic] = caught.value.error_diagnostics
    assert str(diagnostic.location) == 'loc("input.mlir":1:1)'
    builtins = ", ".join(builtin_targets())
    assert diagnostic.message == f"unknown target 'gc9000'; built-in targets: {builtins} (or give the path of a .toml target file)"


def test_verify_pass_emits_every_verifier_error_at_its_location(context: ir.Context, monkeypatch: pytest.MonkeyPatch) -> None:
    module = parse()
    (func,) = module.regions[0].blocks[0].operations
    add = func.regions[0].blocks[0].operations[1]
    seen_targets = []

    def fake_verify(root: ir.Operation, target: object) -> list[IpuError]:
        seen_targets.append(target.name)
        return [op_error(add, "first problem"), IpuError("second problem", func.location)]

    monkeypatch.setattr(verify_pass.verifier, "verify", fake_verify)
    module.attributes["ipu.target"] = ir.StringAttr.get("tiny")
    with pytest.raises(ir.MLIRError) as caught:
        build_pass_manager("ipu-verify").run(module)
    assert seen_targets == ["tiny"]
    assert [(str(d.location), d.message) for d in caught.value.error_diagnostics] == [
        ('loc("input.mlir":4:8)', "'arith.addi' op first problem"),
        ('loc("input.mlir":2:1)', "second problem"),
    ]


def test_verify_pass_accepts_a_module_without_ipu_ops(context: ir.Context) -> None:
    module = parse()
    build_pass_manager("ipu-verify").run(module)


# --- declaring and registering passes --------------------------------------------------------


def test_registered_pass_exposes_name_summary_description_and_options() -> None:
    cls = register_tuning_pass()
    assert lookup_pass("test-tuning") is cls
    assert cls.summary() == "Record the options in module attributes."
    assert cls.description().splitlines()[2] == "Before: module {}"
    assert [option.usage() for option in cls.options()] == [
        "label=<str>  a label (required)",
        "budget=<float>  a fraction (> 0 and <= 1; default: 0.6)",
        "tiles=<int>  a count (>= 1; default: 4)",
        "fast-path=<bool>  a flag (default: false)",
    ]


def test_registering_the_same_class_twice_keeps_one_entry() -> None:
    first = register_tuning_pass()
    second = register_tuning_pass()
    assert lookup_pass("test-tuning") is second is not first
    assert [cls.name for cls in registered_passes()].count("test-tuning") == 1


def class_without_docstring() -> type:
    @dataclass
    class Undocumented(ModulePass):
        name = "test-undocumented"

        def run(self, module: ir.Operation) -> None:
            pass

    return Undocumented


def class_without_name() -> type:
    @dataclass
    class Nameless(ModulePass):
        """Summary."""

        def run(self, module: ir.Operation) -> None:
            pass

    return Nameless


def class_not_a_dataclass() -> type:
    class Plain(ModulePass):
        """Summary."""

        name = "test-plain"

        def run(self, module: ir.Operation) -> None:
            pass

    return Plain


def class_with_annotated_name() -> type:
    @dataclass
    class Annotated(ModulePass):
        """Summary."""

        name: str = "test-annotated"

        def run(self, module: ir.Operation) -> None:
            pass

    return Annotated


def class_with_list_option() -> type:
    @dataclass
    class ListOption(ModulePass):
        """Summary."""

        name = "test-list-option"
        tiles: list = field(default_factory=list, metadata={"help": "tiles"})

        def run(self, module: ir.Operation) -> None:
            pass

    return ListOption


def class_with_undocumented_option() -> type:
    @dataclass
    class Quiet(ModulePass):
        """Summary."""

        name = "test-quiet"
        level: int = 1

        def run(self, module: ir.Operation) -> None:
            pass

    return Quiet


def class_with_misspelt_bound() -> type:
    @dataclass
    class Misspelt(ModulePass):
        """Summary."""

        name = "test-misspelt"
        level: int = field(default=1, metadata={"help": "a level", "minimun": 1})

        def run(self, module: ir.Operation) -> None:
            pass

    return Misspelt


def class_with_bounded_text() -> type:
    @dataclass
    class BoundedText(ModulePass):
        """Summary."""

        name = "test-bounded-text"
        label: str = field(default="a", metadata={"help": "a label", "minimum": 1})

        def run(self, module: ir.Operation) -> None:
            pass

    return BoundedText


def class_without_run() -> type:
    @dataclass
    class Lazy(ModulePass):
        """Summary."""

        name = "test-lazy"

    return Lazy


def class_named_like_upstream() -> type:
    @dataclass
    class MyCse(ModulePass):
        """Summary."""

        name = "cse"

        def run(self, module: ir.Operation) -> None:
            pass

    return MyCse


@pytest.mark.parametrize(
    ("make_class", "error_type", "message"),
    [
        (
            class_without_docstring,
            TypeError,
            "pass class class_without_docstring.<locals>.Undocumented: a pass needs a docstring: a one-line summary, then a "
            "before/after example",
        ),
        (
            class_without_name,
            TypeError,
            "pass class class_without_name.<locals>.Nameless: set the class attribute `name` (without type annotation) to "
            'the pipeline name, e.g. name = "ipu-my-pass"',
        ),
        (
            class_not_a_dataclass,
            TypeError,
            "pass class class_not_a_dataclass.<locals>.Plain: a pass must be a @dataclass (put @register_pass above @dataclass)",
        ),
        (
            class_with_annotated_name,
            TypeError,
            "option name of pass class class_with_annotated_name.<locals>.Annotated: write `name = ...` without a type "
            "annotation; it is the pass's pipeline name, not an option",
        ),
        (
            class_with_list_option,
            TypeError,
            "option tiles of pass class class_with_list_option.<locals>.ListOption: an option must be str, int, float or "
            "bool, not <class 'list'>",
        ),
        (
            class_with_undocumented_option,
            TypeError,
            "option level of pass class class_with_undocumented_option.<locals>.Quiet: describe the option with "
            "field(metadata={'help': ...})",
        ),
        (
            class_with_misspelt_bound,
            TypeError,
            "option level of pass class class_with_misspelt_bound.<locals>.Misspelt: unknown metadata key 'minimun' "
            "(allowed: above, help, maximum, minimum)",
        ),
        (
            class_with_bounded_text,
            TypeError,
            "option label of pass class class_with_bounded_text.<locals>.BoundedText: only int and float options take bounds",
        ),
        (class_without_run, TypeError, "pass class class_without_run.<locals>.Lazy: a pass must define run(self, module)"),
        (
            class_named_like_upstream,
            ValueError,
            "pass class class_named_like_upstream.<locals>.MyCse: pass name 'cse' is already an upstream MLIR pass",
        ),
    ],
    ids=lambda value: value.__name__ if callable(value) else None,
)
def test_register_pass_rejects_malformed_passes(make_class, error_type: type, message: str) -> None:
    with pytest.raises(error_type) as caught:
        register_pass(make_class())
    assert str(caught.value) == message


def test_a_second_class_cannot_take_a_registered_name() -> None:
    @dataclass
    class Impostor(ModulePass):
        """Summary."""

        name = "ipu-verify"

        def run(self, module: ir.Operation) -> None:
            pass

    with pytest.raises(ValueError) as caught:
        register_pass(Impostor)
    assert str(caught.value) == (
        "pass class test_a_second_class_cannot_take_a_registered_name.<locals>.Impostor: pass name "
        "'ipu-verify' is already taken by ipu_mlir.lowering.verify_pass.VerifyIpu"
    )


# --- option strings --------------------------------------------------------------------------


def test_build_pass_parses_typed_and_quoted_options() -> None:
    register_tuning_pass()
    tuning = build_pass("test-tuning", "label='two words' budget=0.5  tiles=16 fast-path")
    assert (tuning.label, tuning.budget, tuning.tiles, tuning.fast_path) == ("two words", 0.5, 16, True)
    tuning = build_pass("test-tuning", 'label="a}b,c)" fast-path=false tiles={8}')
    assert (tuning.label, tuning.budget, tuning.tiles, tuning.fast_path) == ("a}b,c)", 0.6, 8, False)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("", "pass 'test-tuning' needs option label (e.g. test-tuning{label=...})"),
        ("label=x colour=red", "pass 'test-tuning' has no option 'colour'; valid options: label, budget, tiles, fast-path"),
        ("label=x fast_path", "pass 'test-tuning' has no option 'fast_path'; valid options: label, budget, tiles, fast-path"),
        ("label=x tiles=many", "option 'tiles' of pass 'test-tuning' expects an integer, got 'many'"),
        ("label=x tiles=1.5", "option 'tiles' of pass 'test-tuning' expects an integer, got '1.5'"),
        ("label=x budget=half", "option 'budget' of pass 'test-tuning' expects a number, got 'half'"),
        ("label=x fast-path=yes", "option 'fast-path' of pass 'test-tuning' expects true or false, got 'yes'"),
        ("label=x tiles=0", "option 'tiles' of pass 'test-tuning' must be >= 1, got 0"),
        ("label=x tiles=-5", "option 'tiles' of pass 'test-tuning' must be >= 1, got -5"),
        ("label=x budget=0", "option 'budget' of pass 'test-tuning' must be > 0 and <= 1, got 0"),
        ("label=x budget=5.0", "option 'budget' of pass 'test-tuning' must be > 0 and <= 1, got 5.0"),
        ("label=x budget=nan", "option 'budget' of pass 'test-tuning' must be finite, got nan"),
        ("label=x budget=-inf", "option 'budget' of pass 'test-tuning' must be finite, got -inf"),
        ("label", "option 'label' of pass 'test-tuning' needs a value: label=<str>"),
        ("label=x label=y", "option 'label' of pass 'test-tuning' is given twice"),
        ("label='x", "pass 'test-tuning': unterminated value of option 'label' in 'label='x'"),
        ("=x", "pass 'test-tuning': expected an option name before '=' in '=x'"),
    ],
)
def test_build_pass_rejects_bad_options_naming_pass_and_option(options: str, message: str) -> None:
    register_tuning_pass()
    with pytest.raises(PipelineError) as caught:
        build_pass("test-tuning", options)
    assert caught.value.message == message


def test_in_bounds_options_are_accepted() -> None:
    register_tuning_pass()
    built = build_pass("test-tuning", "label=x budget=1 tiles=1")
    assert (built.budget, built.tiles) == (1.0, 1)


def test_built_in_pass_options_are_bounded() -> None:
    for pass_name, options, message in (
        ("ipu-plan", "grain=0", "option 'grain' of pass 'ipu-plan' must be >= 1, got 0"),
        ("ipu-plan", "memory-fraction=5.0", "option 'memory-fraction' of pass 'ipu-plan' must be > 0 and <= 1, got 5.0"),
        ("ipu-fold-constants", "max-elements=-1", "option 'max-elements' of pass 'ipu-fold-constants' must be >= 0, got -1"),
    ):
        with pytest.raises(PipelineError) as caught:
            build_pass(pass_name, options)
        assert caught.value.message == message


def test_build_pass_rejects_unknown_names_suggesting_close_ones() -> None:
    with pytest.raises(PipelineError) as caught:
        build_pass("ipu-verfy")
    assert caught.value.message == "no Python pass named 'ipu-verfy'; did you mean 'ipu-verify'?"


def test_options_of_a_pass_without_options_are_refused() -> None:
    with pytest.raises(PipelineError) as caught:
        build_pass("ipu-verify", "x=1")
    assert caught.value.message == "pass 'ipu-verify' takes no options, got 'x'"


# --- pipeline text ---------------------------------------------------------------------------


def test_parse_pipeline_keeps_order_nesting_options_and_offsets() -> None:
    text = "builtin.module(canonicalize{max-iterations=3}, ipu-set-target{target='a,b)'},func.func(cse,canonicalize))"
    elements = parse_pipeline(text)
    assert [element.name for element in elements] == ["canonicalize", "ipu-set-target", "func.func"]
    assert elements[0].options == "max-iterations=3"
    assert elements[1].options == "target='a,b)'"
    assert text[elements[1].start : elements[1].end] == "ipu-set-target{target='a,b)'}"
    assert [inner.name for inner in elements[2].nested] == ["cse", "canonicalize"]
    assert [element.name for element in parse_pipeline(" cse , canonicalize ")] == ["cse", "canonicalize"]
    assert parse_pipeline("") == () == parse_pipeline("builtin.module()")


@pytest.mark.parametrize(
    ("pipeline", "message", "offset"),
    [
        ("builtin.module(cse", "missing ')' closing the nested pipeline", 18),
        ("cse)", "unbalanced ')'", 3),
        ("cse,", "expected a pass name, found end of pipeline", 4),
        ("cse canonicalize", "expected ',' between passes, found 'c'", 4),
        ("ipu-set-target{target=tiny", "missing '}' matching this '{'", 14),
        ("ipu-set-target(cse)", "'ipu-set-target' is a pass, not an operation: give its options in braces, ipu-set-target{...}", 0),
        ("cse,ipu-set-target{target=tiny", "missing '}' matching this '{'", 18),
        ("cse,ipu-set-target{tgt=tiny}", "pass 'ipu-set-target' has no option 'tgt'; valid options: target", 4),
        (
            "cse,builtin.module(func.func(ipu-verify))",
            "'ipu-verify' is a Python pass: it runs on the whole module and cannot be nested under "
            "'func.func'; put it at the top level, e.g. builtin.module(ipu-verify)",
            29,
        ),
        (
            "canonicalize,func.func(cse,bogus-pass)",
            "unknown pass 'bogus-pass': not an upstream MLIR pass nor a Python pass (ipu-opt --list-passes lists the Python passes)",
            27,
        ),
        (
            "canonicalize{bogus=1}",
            "<Pass-Options-Parser>: no such option bogus; failed to add `canonicalize` with options `bogus=1`",
            0,
        ),
    ],
)
def test_build_pass_manager_reports_where_the_pipeline_is_wrong(context: ir.Context, pipeline: str, message: str, offset: int) -> None:
    with pytest.raises(PipelineError) as caught:
        build_pass_manager(pipeline)
    assert (caught.value.message, caught.value.offset) == (message, offset)


def test_pipeline_runs_python_and_upstream_passes_in_the_written_order(context: ir.Context) -> None:
    order = []

    @register_pass
    @dataclass
    class Snapshot(ModulePass):
        """Record how many ops the function has.

        Before and after: unchanged.
        """

        name = "test-snapshot"

        def run(self, module: ir.Operation) -> None:
            func = module.regions[0].blocks[0].operations[0]
            order.append(len(func.regions[0].blocks[0].operations))

    pass_manager = build_pass_manager("builtin.module(test-snapshot,func.func(canonicalize),test-snapshot)")
    assert str(pass_manager).startswith("builtin.module(test-snapshot,func.func(canonicalize{")
    pass_manager.run(parse())
    assert order == [3, 1]


def test_errors_raised_by_a_pass_become_diagnostics(context: ir.Context) -> None:
    @register_pass
    @dataclass
    class Picky(ModulePass):
        """Reject every arith op, and the module.

        Before: arith ops. After: errors.
        """

        name = "test-picky"

        def run(self, module: ir.Operation) -> None:
            func = module.regions[0].blocks[0].operations[0]
            ops = func.regions[0].blocks[0].operations
            raise ExceptionGroup(
                "picky", [op_error(ops[0], "no constants"), ExceptionGroup("inner", [op_error(ops[1], "no adds")]), IpuError("no module")]
            )

    module = parse()
    with pytest.raises(ir.MLIRError) as caught:
        build_pass_manager("test-picky").run(module)
    assert [(str(d.location), d.message) for d in caught.value.error_diagnostics] == [
        ('loc("input.mlir":3:9)', "'arith.constant' op no constants"),
        ('loc("input.mlir":4:8)', "'arith.addi' op no adds"),
        ('loc("input.mlir":1:1)', "no module"),
    ]


def test_other_exceptions_in_a_pass_propagate(context: ir.Context) -> None:
    @register_pass
    @dataclass
    class Buggy(ModulePass):
        """Crash.

        Before: anything. After: a KeyError.
        """

        name = "test-buggy"

        def run(self, module: ir.Operation) -> None:
            raise KeyError("bug")

    with pytest.raises(KeyError):
        build_pass_manager("test-buggy").run(parse())
