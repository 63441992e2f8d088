"""core.contract: the API's shared rules, their bounds, and that the layers use them (the docs' table of the
bounds is rendered from it: tests/project/test_contract_reference.py)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from core import contract
from core.contract import MAX_TRAIT_KEY, POLES, RUN_KINDS, ModelState, pole_of, trait_key, unique_trait_key
from core.model_states import Operation
from tests.support.processes import FreshPython

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Politeness", "politeness"),
        ("  Tone / Voice!! ", "tone_voice"),
        ("Ünïcode ñame", "n_code_ame"),
        ("!!!", "trait"),
        ("", "trait"),
        ("a" * 47 + " b", "a" * 47),  # cut at 48 (the `_`), then trimmed
        ("x" * 60, "x" * 48),
    ],
)
def test_trait_key_of_a_name(name: str, key: str) -> None:
    assert trait_key(name) == key
    assert len(trait_key(name)) <= MAX_TRAIT_KEY


def test_a_taken_key_gets_a_suffix_and_stays_within_48_characters() -> None:
    long = "k" * 48
    taken = {long}
    for n in range(2, 120):  # past _9 and _99 the suffix grows and the key shrinks to fit
        key = unique_trait_key(long, taken)
        assert key == "k" * (48 - len(f"_{n}")) + f"_{n}"
        assert len(key) == MAX_TRAIT_KEY
        taken.add(key)
    assert unique_trait_key("short", {"short", "short_2"}) == "short_3"
    assert unique_trait_key("free", {"other"}) == "free"


def test_the_pole_rule_has_a_neutral_middle() -> None:
    assert [pole_of(q) for q in (1.0, 0.5001, 0.5, 0.4999, 0.0)] == [
        "positive",
        "positive",
        "neutral",
        "negative",
        "negative",
    ]
    assert set(POLES) == {"positive", "negative", "neutral"}


def test_the_engine_s_array_form_of_the_pole_rule_is_pole_of() -> None:
    from core.engine.poles import on_poles, pole_signs

    grid = [0.0, 0.25, 0.4999999, 0.5, 0.5000001, 0.75, 1.0, 1 / 2, 2 / 4]
    sign = {"positive": 1, "negative": -1, "neutral": 0}
    assert pole_signs(grid).tolist() == [sign[pole_of(q)] for q in grid]
    assert on_poles(grid).tolist() == [pole_of(q) != "neutral" for q in grid]


def test_the_openapi_document_lists_the_contract_s_values(tmp_path: Path) -> None:
    from service.config.settings import Settings
    from service.process.api import create_app

    doc = create_app(Settings.from_env(data_dir=tmp_path, embedder="hashing")).openapi()
    schemas = doc["components"]["schemas"]

    def enum_of(schema: str, field: str) -> tuple[str, ...]:
        prop = schemas[schema]["properties"][field]
        options = prop.get("enum") or next(o["enum"] for o in prop.get("anyOf", []) if "enum" in o)
        return tuple(options)

    assert enum_of("TrainIn", "effort") == contract.TRAIN_EFFORTS
    assert enum_of("DiscoverIn", "effort") == contract.DISCOVER_EFFORTS
    assert enum_of("SynthesizeIn", "synth_type") == contract.SYNTH_TYPES
    assert enum_of("TraitIn", "aggregation") == contract.AGGREGATIONS
    text = schemas["SampleIn"]["properties"]["text"]
    assert text["maxLength"] == contract.MAX_TEXT_CHARS
    assert schemas["SamplesIn"]["properties"]["samples"]["maxItems"] == contract.MAX_SAMPLES_PER_REQUEST


def test_the_contract_imports_nothing_but_the_standard_library(fresh_python: FreshPython) -> None:
    code = (
        "import sys, core.contract; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('core', 'numpy', 'pydantic', 'httpx')))"
    )
    assert fresh_python(code).stdout.strip() == "['core', 'core.contract']"


# Every folder of code the contract governs: the layers, and the benchmarks and harness that drive them.
CODE_FOLDERS = ("core", "service", "app", "pages", "benchmarks", "harness")


def _code() -> list[Path]:
    return [
        path
        for folder in CODE_FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != ROOT / "core" / "contract.py"
    ]


def _everywhere(check: Callable[[str, str], list[str]]) -> list[str]:
    """`check(source, where)` over every file of code the contract governs."""
    return [hit for path in _code() for hit in check(path.read_text(), str(path.relative_to(ROOT)))]


def _restating(pattern: str) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in _code() if re.search(pattern, p.read_text())]


def test_no_layer_restates_the_text_limit_or_the_name_patterns() -> None:
    """These rules live in core.contract only: a second literal is how the old copies drifted apart."""
    assert _restating(r"\b20_?000\b") == []
    assert _restating(re.escape("[a-z0-9][a-z0-9_-]{0,62}")) == []  # namespaces and handles
    assert _restating(re.escape("[A-Za-z0-9][A-Za-z0-9._-]{0,63}")) == []  # tags


# -- numbers: literals in the places where a contract number would go (AST patterns, no value guessing) ----

_CONTRACT_NAMES = {name for name in vars(contract) if name.isupper() and not name.startswith("_")}
_BOUND_KEYWORDS = {"max_length", "min_length", "le", "lt", "ge", "gt"}
_PYDANTIC_AND_FASTAPI_PARAMS = {"Field", "Query", "Path", "Body", "Header", "Form"}
_HALF = 0.5
# Names whose comparison with 0.5 is the pole rule (a quality) or the score midpoint (a score).
_POLE_WORDS = ("quality", "score", "oof")
_POLE_NAMES = {"q", "quality", "score", "scores", "s"}
# A constant or default named with one of these words, whose value is the contract's number for that idea.
_NAMED_NUMBERS: dict[str, set[float]] = {
    "BATCH": {
        contract.MAX_SAMPLES_PER_REQUEST,
        contract.MAX_EVAL_ITEMS_PER_REQUEST,
        contract.MAX_POOL_TEXTS_PER_REQUEST,
        contract.MAX_SCORE_TEXTS,
    },
    "TRAITS": {contract.MAX_TRAITS, contract.MAX_DISCOVERED_TRAITS},
    "RETRAIN": {contract.DEFAULT_RETRAIN_BUFFER},
    "ANCHOR": {contract.ANCHORS_PER_POLE},
    "POINTS": {contract.MAX_PR_POINTS},
}
# Lengths of names, labels, keys and tags: a slice `[:n]` of such a string with one of them restates it.
_NAME_LENGTHS = {
    contract.MAX_LABEL_CHARS,
    contract.MAX_TRAIT_KEY,
    contract.MAX_TAG_CHARS,
    contract.MAX_NAMESPACE_CHARS,
    contract.MAX_DESCRIPTION_CHARS,
    contract.MAX_TEXT_CHARS,
}
_NAME_WORDS = ("name", "label", "key", "tag", "description")


def _number(node: ast.AST | None) -> float | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _words(node: ast.AST) -> set[str]:
    """The names and attribute names an expression reads, lower-cased."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id.lower())
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr.lower())
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            found.add(sub.value.lower())  # d["quality"]
    return found


def _defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, ast.expr]]:
    args = fn.args
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
    return [(a.arg, d) for a, d in pairs]


def _restated_numbers(source: str, where: str) -> list[str]:
    """Where `source` writes a contract number as a literal in a place a contract name belongs."""
    tree = ast.parse(source)
    hits: list[str] = []

    def hit(node: ast.AST, what: str) -> None:
        hits.append(f"{where}:{getattr(node, 'lineno', 0)}: {what}")

    def named(name: str, value: ast.AST | None, node: ast.AST) -> None:
        number = _number(value)
        for word, numbers in _NAMED_NUMBERS.items():
            if number is not None and word in name.upper() and number in numbers:
                hit(node, f"{name} = {number:g} restates a contract number")

    def decision(name: str, value: ast.AST | None, node: ast.AST) -> None:
        # An argument's or parameter's threshold (a form's own default, like an import mapping's, is not).
        named(name, value, node)
        if "threshold" in name.lower() and _number(value) == _HALF:
            hit(node, f"{name} = 0.5: DEFAULT_DECISION_THRESHOLD")

    for node in ast.walk(tree):
        # Field(max_length=100), Query(le=250): the bound of a request field.
        if isinstance(node, ast.Call):
            func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            for kw in node.keywords:
                number = _number(kw.value)
                if (
                    func in _PYDANTIC_AND_FASTAPI_PARAMS
                    and kw.arg in _BOUND_KEYWORDS
                    and number not in (None, 0, 1)
                ):
                    hit(node, f"{func}({kw.arg}={number:g})")
                if kw.arg is not None:
                    decision(kw.arg, kw.value, node)
            # thresholds.get("threshold", 0.5)
            if func == "get" and len(node.args) == 2 and _words(node.args[0]) & {"threshold"}:
                decision("threshold", node.args[1], node)
        # A module's or class's own constant named as the contract names one (discovery's MAX_TRAITS = 3).
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in _CONTRACT_NAMES:
                    hit(node, f"{target.id} is core.contract's name: import it")
                elif isinstance(target, ast.Name):
                    named(target.id, node.value, node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for name, default in _defaults(node):
                decision(name, default, node)
        # quality >= 0.5, quality == 0.5, score < 0.5: the pole rule (pole_of) or the midpoint
        # (nearer_pole_is_positive).
        elif isinstance(node, ast.Compare) and isinstance(
            node.ops[0], ast.GtE | ast.Gt | ast.Lt | ast.LtE | ast.Eq | ast.NotEq
        ):
            sides = [node.left, *node.comparators]
            others = [side for side in sides if _number(side) != _HALF]
            if len(others) < len(sides):
                words = set().union(*(_words(side) for side in others))
                if words & _POLE_NAMES or any(w in word for word in words for w in _POLE_WORDS):
                    hit(node, f"{ast.unparse(node)}: pole_of / nearer_pole_is_positive")
        # name[:100]: a label's, key's or tag's length.
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            upper = _number(node.slice.upper)
            if upper in _NAME_LENGTHS and any(w in word for word in _words(node.value) for w in _NAME_WORDS):
                hit(node, f"{ast.unparse(node)}: a contract length")
    return hits


def test_no_code_restates_a_contract_number() -> None:
    """Request bounds, the pole rule and the score midpoint, named per-request sizes and counts, and label
    lengths are core.contract's names wherever they are used (benchmarks and harness included)."""
    assert _everywhere(_restated_numbers) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x: str = Field(max_length=100)", 1),
        ("def f(limit: Annotated[int, Query(ge=1, le=250)] = 50): ...", 1),
        ("x: float = Field(ge=0.0, le=1.0)\ny: str = Field(min_length=1, max_length=MAX_LABEL_CHARS)", 0),
        ("MAX_TRAITS = 3", 1),
        ("BATCH = 500", 1),
        ("POOL_BATCH = 250", 0),
        ("positive = q >= 0.5", 1),
        ("neutral = q == 0.5", 1),
        ("mask = quality != 0.5", 1),
        ("flipped = 0.0 if row['quality'] >= 0.5 else 1.0", 1),
        ("colour = 'red' if r.score >= 0.5 else 'blue'", 1),
        ("heads = rng.random() < 0.5", 0),
        ("def f(threshold: float = 0.5): ...", 1),
        ("class Mapping:\n    threshold: float = 0.5", 0),
        ("report = client.import_samples(handle, rows, batch_size=500)", 1),
        ("t = found.get('threshold', 0.5)", 1),
        ("name = spec.name[:100]", 1),
        ("shown = response.text[:200]", 0),
    ],
)
def test_the_number_guard_catches_what_it_should_and_nothing_else(source: str, expected: int) -> None:
    hits = _restated_numbers(source, "example")
    assert len(hits) == expected, hits


# -- value sets and states --------------------------------------------------------------------------------

_VALUE_SETS = {
    name: frozenset(values)
    for name, values in vars(contract).items()
    if name.isupper() and isinstance(values, tuple) and values and all(isinstance(v, str) for v in values)
}


def _literal_collections(tree: ast.AST) -> list[ast.List | ast.Tuple | ast.Set]:
    """Lists, tuples and sets of a module, except the arguments of `Literal[...]` (a type's own values)."""
    typed = {
        id(node.slice)
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).split(".")[-1] == "Literal"
    }
    return [n for n in ast.walk(tree) if isinstance(n, ast.List | ast.Tuple | ast.Set) and id(n) not in typed]


def _restated_sets(source: str, where: str) -> list[str]:
    """A list holding all of a contract value set (the pages' states, provenances, synthesis kinds) is a copy
    that drifts; a list of two or more model states is a rule of core.model_states.TRANSITIONS (use `can`)."""
    hits = []
    for node in _literal_collections(ast.parse(source)):
        strings = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        at = f"{where}:{node.lineno}"
        copies = [name for name, values in _VALUE_SETS.items() if len(values) > 1 and values <= strings]
        if copies:
            hits.append(f"{at}: a copy of {', '.join(copies)}")
        elif len(states := strings & set(contract.MODEL_STATES)) >= 2:
            hits.append(f"{at}: states {sorted(states)}")
    return hits


def test_no_code_keeps_its_own_copy_of_a_value_set_or_a_state_rule() -> None:
    assert _everywhere(_restated_sets) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('STATES = ["(all but archived)", "draft", "busy", "ready", "failed", "archived"]', 1),
        ('PROVENANCES = ["(any)", "authored", "synthesized", "discovered", "feedback", "imported"]', 1),
        ('kind = st.radio("Kind", ["from_traits", "diversify"])', 1),
        ('editable = state in ("draft", "failed")', 1),
        ('State = Literal["draft", "busy", "ready", "failed", "archived"]', 0),
        ('explore = mode in ("auto", "uncertain")', 0),
        ('done = status in ("succeeded", "failed")', 0),
    ],
)
def test_the_value_set_guard_catches_what_it_should_and_nothing_else(source: str, expected: int) -> None:
    hits = _restated_sets(source, "example")
    assert len(hits) == expected, hits


def test_the_workbench_shows_every_state() -> None:
    from app.ui.widgets import STATE_ICONS

    assert set(STATE_ICONS) == set(contract.MODEL_STATES)


def test_every_run_kind_has_its_module_and_nothing_else_is_dispatched() -> None:
    from service.runs.executor import KINDS

    assert set(KINDS) == set(RUN_KINDS)


# -- the state table ---------------------------------------------------------------------------------------


def test_the_transition_table_covers_every_operation_with_known_states() -> None:
    from core.contract import MODEL_STATES
    from core.model_states import OPERATIONS, TRANSITIONS, can

    assert tuple(TRANSITIONS) == OPERATIONS
    for operation, moves in TRANSITIONS.items():
        assert set(moves) | set(moves.values()) <= set(MODEL_STATES), operation
        # Nothing starts while a run is in flight; a label's write is no run (only a training refuses it).
        assert "busy" not in moves or operation == "label", operation
    # docs/api.md "States": edits and runs from scratch only in an untrained model; archived takes nothing
    # but a repeated delete; a run makes its model busy.
    assert {s for s in MODEL_STATES if can("edit", s)} == {"draft", "failed"}
    assert all(not can(op, "archived") for op in OPERATIONS if op != "delete")
    runs: tuple[Operation, ...] = ("train", "retune", "retrain", "discover", "synthesize", "evaluate")
    assert all(set(TRANSITIONS[op].values()) == {"busy"} for op in runs)
    assert set(TRANSITIONS["reopen"].values()) == {"draft"}
    assert not can("edit", "a state from a newer service")
    assert can("label", "busy", "evaluate") and not can("label", "busy", "retrain")


@pytest.mark.parametrize(
    ("kind", "started_from", "succeeded", "has_version", "ends"),
    [
        ("train", "draft", True, True, "ready"),  # a first training, or a reopened draft's next version
        ("train", "draft", False, False, "failed"),  # a first training fails
        ("train", "draft", False, True, "draft"),  # a reopened draft's training fails: its version serves
        ("train", "failed", False, False, "failed"),
        ("train", "ready", False, True, "ready"),  # a retune fails
        ("retrain", "ready", False, True, "ready"),
        ("backfill", "ready", True, True, "ready"),
        ("discover", "draft", True, False, "draft"),
        ("synthesize", "failed", False, False, "failed"),  # a failed model stays failed until a training
        ("evaluate", "ready", True, True, "ready"),
        ("evaluate", "draft", False, True, "draft"),  # a reopened draft's evaluation
    ],
)
def test_where_a_run_leaves_its_model(
    kind: str, started_from: ModelState, succeeded: bool, has_version: bool, ends: ModelState
) -> None:
    from core.model_states import state_after_run

    assert state_after_run(kind, started_from, succeeded=succeeded, has_version=has_version) == ends
