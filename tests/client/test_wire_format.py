"""One wire format: the client's response models and the service's OpenAPI document agree.

openai-python derives its types from its OpenAPI spec; this client is written by hand, so this test holds
it to the spec instead. For every response the client parses, each field the client declares must exist in
the service's schema for it, with a type the client can parse whatever the schema allows, and a default
wherever the schema lets the field be absent (or null where the client turns null into its default). Where
the client claims to cover a schema (`complete`), every property of the schema must be in the client too.
The other way round stays open: the client ignores fields it does not know, because a remote service may be
newer than it (docs/api.md: clients must ignore unknown response fields).
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
from pydantic import BaseModel

from core.client import models as m
from core.client import results as r
from core.client import team as t
from core.client.models import gold as g

Schema = Mapping[str, Any]


@dataclass(frozen=True)
class Pair:
    """A client response model and the OpenAPI schema it parses."""

    client: type[BaseModel]
    schema: str
    #: The client claims every property of the schema (a new one must be added to the client too).
    complete: bool = True
    #: Client fields this schema does not carry, each for a reason stated where the pair is listed.
    off_wire: frozenset[str] = field(default_factory=frozenset)
    #: Properties of the schema the client reads elsewhere (READS), so `complete` does not ask for them here.
    read_elsewhere: frozenset[str] = field(default_factory=frozenset)


RUN_REF_OWN = frozenset({"status_code", "zero_shot", "note"})  # the client's, never the service's
PAIRS = [
    Pair(r.Health, "Health"),
    Pair(r.EmbedderGraph, "EmbedderGraph"),
    Pair(t.TeamProgress, "TeamProgressOut"),
    Pair(t.PersonProgress, "PersonTraitOut"),
    Pair(t.TraitProgress, "TraitProgressOut"),
    Pair(t.VotesPage, "VotesPage"),
    Pair(t.VoteRecord, "VoteRecord"),
    Pair(t.UnsurePage, "UnsurePage"),
    Pair(t.UnsureMark, "UnsureOut"),
    Pair(t.CommentPage, "CommentPage"),
    Pair(t.TextComment, "CommentOut"),
    Pair(m.DeleteResult, "NoteDeleted"),
    Pair(m.KeyInfo, "KeyInfo"),
    Pair(m.Page[m.Model], "ModelPage"),
    Pair(m.Model, "ModelOut"),
    Pair(m.LastOperation, "LastOperation"),
    # `id`: a sample's or a pool text's delete has it, a model's or a trait's not.
    Pair(m.DeleteResult, "Deleted", off_wire=frozenset({"id"})),
    Pair(m.DeleteResult, "SampleDeleted"),
    Pair(m.Trait, "TraitOut"),
    Pair(m.Scale, "ScaleOut"),
    Pair(m.TraitPreview, "TraitPreviewOut"),
    Pair(m.Page[m.Sample], "SamplePage"),
    Pair(m.Sample, "SampleOut"),
    # `status_code` is the HTTP status (202, or 200 for the no-op train), not a body field.
    # `zero_shot` and `note`: the client's own words on a training of traits without samples.
    Pair(m.RunRef, "RunStarted", off_wire=RUN_REF_OWN),
    Pair(m.RunRef, "EvaluationStarted", complete=False, off_wire=RUN_REF_OWN),
    Pair(m.Page[m.Version], "VersionPage"),
    Pair(m.Version, "VersionOut"),
    Pair(m.VersionEmbedder, "VersionEmbedder"),
    Pair(m.EmbedderCandidate, "EmbedderCandidate"),
    Pair(m.EmbedderName, "EmbedderName"),
    Pair(m.TagResult, "Tagged"),
    Pair(m.TagDeleteResult, "Untagged"),
    Pair(m.HistoryEvent, "HistoryEvent"),
    Pair(r.EvaluationItemsAdded, "EvalAdded"),
    Pair(r.EvaluationSet, "EvalSetOut"),
    Pair(r.PoleCounts, "EvalTraitCounts"),
    Pair(r.EvaluationSetCleared, "EvalDeleted"),
    Pair(r.Evaluation, "EvaluationOut"),
    Pair(r.PrCurve, "PrCurveOut"),
    Pair(r.TraitPrCurve, "PrTrait"),
    Pair(r.PrPoint, "PrPoint"),
    Pair(r.Threshold, "ThresholdOut"),
    Pair(r.EvaluationComparison, "EvalCompareOut"),
    Pair(r.ComparedVersion, "ComparedRun"),
    Pair(r.Disagreement, "Disagreement"),
    # `index` is each result's, in the list form; the envelope's fields join each result (score_many).
    Pair(m.ScoreResult, "ScoreOut", off_wire=frozenset({"index"}), read_elsewhere=frozenset({"results"})),
    Pair(
        m.ScoreResult,
        "ScoreResult",
        complete=False,
        off_wire=frozenset({"handle", "version_no", "version_tags", "feedback_buffered"}),
    ),
    Pair(m.TraitScore, "DecidedTraitScore"),
    # Compare's scores have no decision: a trait's threshold is not applied there (docs/api.md).
    Pair(m.TraitScore, "TraitScore", off_wire=frozenset({"threshold", "decision"})),
    Pair(m.CompareResult, "CompareOut"),
    Pair(m.CompareSide, "CompareSide"),
    Pair(m.TraitDelta, "TraitDelta"),
    Pair(m.PoolPage, "PoolPage"),
    Pair(m.PoolText, "PoolTextOut"),
    Pair(m.Suggestions, "SuggestOut"),
    Pair(m.ClaimReleased, "ClaimReleased"),
    Pair(m.PoolLabel, "Labelled"),
    Pair(m.BulkLabelled, "BulkLabelled"),
    Pair(m.Assigned, "Assigned"),
    Pair(m.Assignments, "AssignmentsOut"),
    Pair(m.PersonWork, "PersonWork"),
    Pair(m.Target, "TargetOut"),
    Pair(m.Reassigned, "Reassigned"),
    Pair(m.Unassigned, "Unassigned"),
    Pair(m.Suggestion, "Suggestion"),
    Pair(r.AnalyzeCommentResult, "AnalyzeOut"),
    Pair(r.AttributeScore, "AttributeScore"),
    Pair(r.SpanScore, "SpanScore"),
    Pair(r.PerspectiveScore, "Score"),
    Pair(r.SuggestCommentScoreResult, "SuggestScoreOut"),
    Pair(m.FeedbackPage, "FeedbackPage"),
    Pair(m.FeedbackLabel, "FeedbackLabelOut"),
    Pair(m.FeedbackWithdrawn, "FeedbackWithdrawn"),
    Pair(m.AuditPage, "AuditPage"),
    Pair(m.AuditEvent, "AuditEventOut"),
    Pair(m.Member, "MemberOut"),
    Pair(m.MemberRemoved, "MemberRemoved"),
    Pair(r.Agreement, "AgreementOut"),
    Pair(r.TraitAgreement, "TraitAgreementOut"),
    Pair(r.AnnotatorVotes, "AnnotatorVotes"),
    Pair(r.PairAgreement, "PairAgreement"),
    Pair(r.DisagreedText, "DisagreedText"),
    Pair(r.CastVote, "VoteOut"),
    Pair(g.GoldAdded, "GoldAdded"),
    Pair(g.GoldItem, "GoldItemOut"),
    Pair(g.GoldSet, "GoldSetOut"),
    Pair(g.GoldDeleted, "GoldDeleted"),
    Pair(g.GoldPerson, "GoldPerson"),
    Pair(g.GoldAccuracy, "GoldAccuracyOut"),
]

#: Responses the client reads a field of without a model of their own: (schema, property, how it is read,
#: whether it reads it as `body[...]`, which fails when it is absent).
READS: list[tuple[str, str, Any, bool]] = [
    ("TraitsOut", "traits", list[m.Trait], False),
    ("MemberPage", "items", list[m.Member], False),
    ("SampleIds", "ids", list[int], False),
    ("SampleIds", "in_evaluation_set", int, False),
    ("SampleIds", "duplicates", list[int], False),
    ("PoolAdded", "ids", list[int], False),
    ("PoolAdded", "in_evaluation_set", int, False),
    ("PoolAdded", "duplicates", list[int], False),
    ("PoolDeleted", "deleted", int, False),
    ("HistoryOut", "events", list[m.HistoryEvent], True),
    ("ThresholdsOut", "thresholds", dict[str, r.Threshold], True),
    ("ThresholdDeleted", "deleted", bool, True),
    ("ScoreOut", "results", list[m.ScoreResult] | None, False),
    # core/client/errors.py: the error envelope, and Google's on the Perspective routes.
    ("ErrorEnvelope", "error", dict[str, Any], False),
    ("ErrorBody", "code", str, False),
    ("ErrorBody", "message", str, False),
    ("ErrorBody", "request_id", str | None, False),
    ("ErrorBody", "retryable", bool, False),
    ("ErrorBody", "details", list[Any], False),
    ("GoogleErrorBody", "code", int, False),
    ("GoogleErrorBody", "message", str, False),
    ("GoogleErrorBody", "status", str, False),
]

#: Response models that parse nothing the OpenAPI document describes, and why.
NOT_FROM_THE_SPEC: dict[type[BaseModel], str] = {
    m._Response: "the base of every response model",
    r.DiscoveryDocument: "Google's Discovery document for Perspective clients, outside the OpenAPI document",
    # Values of `traits` in EvaluationOut and EvalCompareOut, which the document leaves open objects.
    r.TraitEvaluation: "inside EvaluationOut.traits, an open object in the OpenAPI document",
    r.TraitComparison: "inside EvalCompareOut.traits, an open object in the OpenAPI document",
    r.Interval: "inside TraitEvaluation",
    r.HumanCeiling: "inside TraitEvaluation and TraitComparison",
    r.ReliabilityBin: "inside TraitEvaluation and TraitComparison",
    r.MetricDifference: "inside TraitComparison",
    m.RowError: "the client's own import report",
    m.Duplicate: "the client's own import report",
    m.ImportReport: "the client's own import report",
    m.PoolImportReport: "the client's own import report",
    m.Page: "generic: its concrete pages are listed",
    r.SampleFlag: "client.flags' rows, computed in the client's process (core.engine.flags)",
    r.FlagVote: "inside SampleFlag",
}


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from service.config.settings import Settings
    from service.process.api import create_app

    data_dir: Path = tmp_path_factory.mktemp("wire")
    return create_app(Settings.from_env(data_dir=data_dir, embedder="hashing")).openapi()


# -- what a schema allows, and what a client annotation parses ---------------------------------------------


def _alternatives(schema: Schema) -> list[Schema]:
    """The shapes a schema allows, its anyOf/oneOf flattened."""
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return [alt for option in schema[key] for alt in _alternatives(option)]
    if len(schema.get("allOf", ())) == 1:
        return _alternatives(schema["allOf"][0])
    return [schema]


def _options(annotation: Any) -> list[Any]:
    """The members of a union (`X | None`, `Optional[X]`), Annotated unwrapped."""
    if get_origin(annotation) is Annotated:
        return _options(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        return [o for member in get_args(annotation) for o in _options(member)]
    return [annotation]


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


class Checker:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.schemas: dict[str, Schema] = spec["components"]["schemas"]
        self.problems: list[str] = []
        self.met: set[tuple[type[BaseModel], str]] = set()  # (client model, schema) pairs met on the way

    def accepts(self, annotation: Any, schema: Schema, where: str, null_is_default: bool = False) -> None:
        """A problem for each shape of `schema` that a field annotated `annotation` cannot parse."""
        for alt in _alternatives(schema):
            if alt.get("type") == "null" and null_is_default:
                continue  # _Response turns a null into the field's default
            if not any(self._option_accepts(o, alt, where) for o in _options(annotation)):
                self.problems.append(f"{where}: the client's {annotation!r} cannot parse {dict(alt)}")

    def _option_accepts(self, option: Any, alt: Schema, where: str) -> bool:
        origin = get_origin(option) or option
        if option is Any:
            return True
        if "$ref" in alt:
            name = alt["$ref"].rsplit("/", 1)[-1]
            if _is_model(option):
                self.met.add((option, name))
                return True
            return origin in (dict, Mapping)
        kind = alt.get("type")
        if kind is None:  # any JSON value
            return False
        if kind == "null":
            return option is type(None)
        if kind == "string":
            return option is str or (option is datetime and alt.get("format") == "date-time")
        if kind == "integer":
            return option in (int, float)
        if kind == "number":
            return option is float
        if kind == "boolean":
            return option is bool
        if kind == "array":
            if origin not in (list, Sequence):
                return False
            item = (get_args(option) or (Any,))[0]
            self.accepts(item, alt.get("items", {}), f"{where}[]")
            return True
        if kind == "object":
            if origin in (dict, Mapping):
                values = alt.get("additionalProperties")
                if isinstance(values, dict) and values:
                    value = (get_args(option) or (str, Any))[1]
                    self.accepts(value, values, f"{where}{{}}")
                return True
            # A model parses any object only when none of its fields is required (it allows extra ones).
            return _is_model(option) and not any(f.is_required() for f in option.model_fields.values())
        return False

    def pair(self, pair: Pair) -> None:
        schema = self.schemas.get(pair.schema)
        if schema is None:
            self.problems.append(f"{pair.schema}: no such schema in the OpenAPI document")
            return
        props: Mapping[str, Schema] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        wire_names = set()
        for name, info in pair.client.model_fields.items():
            wire = info.alias or name
            wire_names.add(wire)
            where = f"{pair.client.__name__}.{name} ~ {pair.schema}.{wire}"
            if wire in pair.off_wire:
                if wire in props:
                    self.problems.append(f"{where}: listed as off the wire, but the schema has it")
                continue
            if wire not in props:
                self.problems.append(f"{where}: the schema has no such property")
                continue
            if info.is_required() and wire not in required:
                self.problems.append(f"{where}: the client requires it, the schema may leave it out")
            default = None if info.is_required() else info.get_default(call_default_factory=True)
            null_is_default = default is not None  # _Response turns a null into a non-null default
            self.accepts(info.annotation, props[wire], where, null_is_default)
        if pair.complete:
            for prop in sorted(set(props) - wire_names - pair.read_elsewhere):
                self.problems.append(f"{pair.client.__name__} ~ {pair.schema}: the client lacks {prop!r}")


def _response_models() -> Iterator[type[BaseModel]]:
    for module in (m, r):
        for name, value in vars(module).items():
            # pydantic also puts each parametrized generic (`Page[PoolText]`) in its module
            mine = _is_model(value) and value.__module__ == module.__name__ and "[" not in name
            if mine and issubclass(value, m._Response):
                yield value


# -- the tests ---------------------------------------------------------------------------------------------


def test_the_client_parses_what_the_service_documents(spec: dict[str, Any]) -> None:
    check = Checker(spec)
    for pair in PAIRS:
        check.pair(pair)
    for schema, prop, annotation, indexed in READS:
        props = check.schemas[schema].get("properties", {})
        where = f"{schema}.{prop} (read by the client)"
        if prop not in props:
            check.problems.append(f"{where}: the schema has no such property")
            continue
        if indexed and prop not in check.schemas[schema].get("required", ()):
            check.problems.append(f"{where}: read as body[{prop!r}], but the schema may leave it out")
        check.accepts(annotation, props[prop], where)
    assert check.problems == []
    # A nested model met a schema: that pair is listed, and so checked field by field above.
    listed = {(p.client, p.schema) for p in PAIRS}
    assert sorted(f"{c.__name__} ~ {s}" for c, s in check.met - listed) == []


def test_every_response_model_of_the_client_is_held_to_the_spec() -> None:
    read = [get_args(a)[-1] for _, _, a, _ in READS if get_origin(a) in (list, dict)]
    listed = {p.client for p in PAIRS} | {c for c in read if _is_model(c)}
    unlisted = [c.__name__ for c in _response_models() if c not in listed and c not in NOT_FROM_THE_SPEC]
    assert unlisted == []


@pytest.mark.parametrize(
    ("client_field", "spec_property", "problem"),
    [
        # A type the client cannot parse, a field the schema may leave out, a property the client lacks.
        ("x: int", {"type": "string"}, "cannot parse"),
        ("x: str", {"anyOf": [{"type": "string"}, {"type": "null"}]}, "cannot parse"),
        ("x: datetime | None = None", {"type": "string"}, "cannot parse"),
        ("x: int = 0", {"type": "integer"}, None),
        ("x: int = 0", {"anyOf": [{"type": "integer"}, {"type": "null"}]}, None),  # null means the default
        ("x: float", {"type": "integer"}, None),
        ("x: list[str] = []", {"type": "array", "items": {"type": "integer"}}, "cannot parse"),
        ("x: datetime | None = None", {"type": "string", "format": "date-time"}, None),
    ],
)
def test_the_checker_finds_disagreements(
    client_field: str, spec_property: Schema, problem: str | None
) -> None:
    namespace: dict[str, Any] = {"Any": Any, "datetime": datetime, "m": m}
    exec(f"class Probe(m._Response):\n    {client_field}\n", namespace)
    probe = namespace["Probe"]
    probe.model_rebuild(_types_namespace=namespace)
    check = Checker(
        {"components": {"schemas": {"P": {"properties": {"x": spec_property}, "required": ["x"]}}}}
    )
    check.pair(Pair(probe, "P"))
    if problem is None:
        assert check.problems == []
    else:
        assert len(check.problems) == 1 and problem in check.problems[0], check.problems
    # The same field where the schema may leave it out, next to a property the client lacks.
    loose = Checker({"components": {"schemas": {"P": {"properties": {"x": spec_property, "y": {}}}}}})
    loose.pair(Pair(probe, "P"))
    assert any("lacks 'y'" in p for p in loose.problems)
    assert any("may leave it out" in p for p in loose.problems) == ("=" not in client_field)


def test_every_bound_in_the_document_is_json_schema(spec: dict[str, Any]) -> None:
    """A bound pydantic leaves as `ge`/`le` (an optional field whose validator runs first) is unknown to JSON
    Schema: a client, or schemathesis, would send values the service refuses."""
    found: list[str] = []

    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            found.extend(f"{path}.{k}" for k in ("ge", "le", "gt", "lt") if k in node and "type" in node)
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(spec["components"]["schemas"], "schemas")
    assert not found, found
