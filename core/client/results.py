"""Typed answers of the service's additions: health, evaluation sets, evaluations, PR curves, thresholds,
evaluation comparisons, the pool iterator's items and the Perspective-compatible surface (docs/api.md).

Like every response model they accept unknown fields and leave optional what docs/api.md does not promise,
so a newer or remote service never breaks parsing. Perspective's own answers keep Perspective's camelCase
names as aliases; the attributes are snake_case.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import Field

from core.client.models.base import _Response
from core.contract import FLAG_KINDS
from core.json_types import JsonObject

if TYPE_CHECKING:
    import pandas as pd

# -- service -----------------------------------------------------------------------------------------


class EmbedderGraph(_Response):
    """An embedder's int8 graph on the service's machine: `state` is "built", "building" or "not built"."""

    embedder: str
    name: str = ""
    state: str = "built"


class Health(_Response):
    """`GET /health`: `status` is "ok" when the service answers; `version` is its package version;
    `embedders` (absent from services before it) each embedder's int8 graph and whether it is built yet."""

    status: str
    version: str | None = None
    embedders: list[EmbedderGraph] = Field(default_factory=list)

    @property
    def building(self) -> list[str]:
        """The short names of the embedders whose graph is being built now."""
        return [g.name or g.embedder for g in self.embedders if g.state == "building"]


# -- evaluation sets ---------------------------------------------------------------------------------


class PoleCounts(_Response):
    """Items of one trait on each pole, and the neutral ones (quality 0.5) on neither."""

    positive: int = 0
    negative: int = 0
    neutral: int = 0


class EvaluationItemsAdded(_Response):
    """`add_evaluation_items`: items new to the set (over every batch) and the set's size after; the indexes
    (in the whole input) of the items that added nothing, identical to one in the set or earlier in the input.
    """

    added: int = 0
    total: int = 0
    duplicates: list[int] = Field(default_factory=list)
    #: The indexes of the items left out as texts of gold items (absent from older services).
    gold_texts: list[int] = Field(default_factory=list)
    #: Texts of the input that are in the model's pool (left out of labelling from now on) and among its
    #: samples (never trained on from now on), summed over the batches (0 from older services).
    in_pool: int = 0
    in_samples: int = 0


class EvaluationSet(_Response):
    """`GET …/evaluation-set`: the set's size and its items per trait."""

    handle: str | None = None
    total: int = 0
    traits: dict[str, PoleCounts] = Field(default_factory=dict)


class EvaluationSetCleared(_Response):
    handle: str | None = None
    deleted: int = 0


class Interval(_Response):
    """A metric with its 95% interval."""

    value: float
    ci_low: float | None = None
    ci_high: float | None = None


class HumanCeiling(Interval):
    """How well one annotator's vote predicts the mean of the others' (Pearson r, leave one annotator out),
    over `pairs` (annotator, text) pairs on `texts` texts from `annotators` annotators."""

    pairs: int = 0
    texts: int = 0
    annotators: int = 0


class ReliabilityBin(_Response):
    bin_low: float | None = None
    mean_score: float | None = None
    mean_quality: float | None = None
    count: int = 0


class TraitEvaluation(_Response):
    """One trait's metrics on the set; `roc_auc` is None when its items are all on one side. Its `neutral`
    items (quality 0.5, on neither pole) are left out of ROC-AUC, accuracy and F1."""

    items: int = 0
    positive: int = 0
    negative: int = 0
    neutral: int = 0
    threshold: float | None = None
    roc_auc: Interval | None = None
    accuracy: Interval | None = None
    f1: Interval | None = None
    calibration_error: Interval | None = None
    reliability: list[ReliabilityBin] = Field(default_factory=list)
    votes: int | None = None  # the items (votes) behind `items` texts; absent from older services
    # Texts that several annotators voted on (docs/api.md, "Human ceiling"); None without any.
    human_ceiling: HumanCeiling | None = None
    model_agreement: Interval | None = None
    share_of_ceiling: Interval | None = None
    # Texts of the trait the version trained on, left out of these metrics; None: the version has no record
    # of what it trained on (or an older service).
    excluded_trained: int | None = None

    def metric(self, name: str) -> Interval | None:
        """A metric by name (`roc_auc`, `accuracy`, `f1`, `calibration_error`)."""
        value = getattr(self, name, None)
        return value if isinstance(value, Interval) else None


class Evaluation(_Response):
    """`GET …/versions/{v}/evaluation`: the latest stored evaluation of a version."""

    handle: str | None = None
    version_no: int | None = None
    run_id: str | None = None
    created_at: datetime | None = None
    items: int = 0
    traits: dict[str, TraitEvaluation] = Field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """One row per trait key: its items and each metric's value with its 95% interval."""
        import pandas as pd

        rows: dict[str, dict[str, float | int | None]] = {}
        for key, t in self.traits.items():
            row: dict[str, float | int | None] = {"items": t.items}
            for name in _METRICS:
                value = t.metric(name)
                row[name] = value.value if value else None
                row[f"{name}_low"] = value.ci_low if value else None
                row[f"{name}_high"] = value.ci_high if value else None
            rows[key] = row
        return pd.DataFrame.from_dict(rows, orient="index")

    def __repr__(self) -> str:
        auc = ", ".join(
            f"{key} ROC-AUC {t.roc_auc.value:.3f}" if t.roc_auc else f"{key} (no ROC-AUC)"
            for key, t in self.traits.items()
        )
        return f"Evaluation(v{self.version_no}, {self.items} items: {auc or 'no traits'})"

    def _repr_html_(self) -> str:
        html: str = self.to_frame().to_html(float_format="{:.3f}".format)
        return html


_METRICS = ("roc_auc", "accuracy", "f1", "calibration_error")


# -- thresholds --------------------------------------------------------------------------------------


class PrPoint(_Response):
    threshold: float
    precision: float
    recall: float


class TraitPrCurve(_Response):
    positive: int = 0
    negative: int = 0
    neutral: int = 0  # on neither pole: not on the curve
    points: list[PrPoint] = Field(default_factory=list)  # by rising threshold


class PrCurve(_Response):
    """`GET …/versions/{v}/pr-curve`: per trait, precision and recall at each threshold."""

    handle: str | None = None
    version_no: int | None = None
    run_id: str | None = None
    traits: dict[str, TraitPrCurve] = Field(default_factory=dict)


class Threshold(_Response):
    """A trait's stored decision threshold, chosen for `target` ("precision" or "recall") ≥ `value`."""

    trait: str | None = None
    threshold: float
    target: str | None = None
    value: float | None = None
    precision: float | None = None
    recall: float | None = None
    run_id: str | None = None
    items: int | None = None
    set_at: datetime | None = None


# -- evaluation comparison ---------------------------------------------------------------------------


class ComparedVersion(_Response):
    version_no: int
    run_id: str | None = None


class MetricDifference(_Response):
    """One metric of A and B, B − A with its 95% interval, the paired test's p-value and its verdict."""

    a: float | None = None
    b: float | None = None
    difference: float
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    significant: bool = False


class TraitComparison(_Response):
    items: int = 0
    positive: int = 0
    negative: int = 0
    neutral: int = 0  # on neither pole: left out of ROC-AUC, accuracy and F1
    threshold_a: float | None = None
    threshold_b: float | None = None
    roc_auc: MetricDifference | None = None
    accuracy: MetricDifference | None = None
    f1: MetricDifference | None = None
    calibration_error: MetricDifference | None = None
    reliability_a: list[ReliabilityBin] = Field(default_factory=list)
    reliability_b: list[ReliabilityBin] = Field(default_factory=list)
    # Each evaluation's human ceiling and the version's agreement with the annotators (None without votes).
    human_ceiling_a: HumanCeiling | None = None
    human_ceiling_b: HumanCeiling | None = None
    model_agreement_a: Interval | None = None
    model_agreement_b: Interval | None = None
    share_of_ceiling_a: Interval | None = None
    share_of_ceiling_b: Interval | None = None
    # Each evaluation's `excluded_trained`: the compared items are those neither version trained on.
    excluded_trained_a: int | None = None
    excluded_trained_b: int | None = None

    def metric(self, name: str) -> MetricDifference | None:
        """A metric by name (`roc_auc`, `accuracy`, `f1`, `calibration_error`)."""
        value = getattr(self, name, None)
        return value if isinstance(value, MetricDifference) else None


class Disagreement(_Response):
    item_id: int | None = None
    trait: str
    text: str = ""
    quality: float
    score_a: float
    score_b: float
    difference: float


class EvaluationComparison(_Response):
    """`GET …/evaluation/compare`: versions A and B on the items both scored."""

    handle: str | None = None
    a: ComparedVersion
    b: ComparedVersion
    items: int = 0
    traits: dict[str, TraitComparison] = Field(default_factory=dict)
    disagreements: list[Disagreement] = Field(default_factory=list)  # largest |B − A| first

    def to_frame(self) -> pd.DataFrame:
        """One row per trait key and metric: A, B, B − A with its 95% interval, the p-value and whether the
        difference is significant (a metric neither version has, e.g. ROC-AUC with one pole, is left out)."""
        import pandas as pd

        rows = [
            {
                "trait": key,
                "metric": name,
                **difference.model_dump(include=set(MetricDifference.model_fields)),
            }
            for key, t in self.traits.items()
            for name in _METRICS
            if (difference := getattr(t, name)) is not None
        ]
        columns = ["trait", "metric", *MetricDifference.model_fields]
        return pd.DataFrame(rows, columns=columns).set_index(["trait", "metric"])

    def __repr__(self) -> str:
        return (
            f"EvaluationComparison(v{self.a.version_no} vs v{self.b.version_no}, {self.items} items, "
            f"{len(self.traits)} traits, {len(self.disagreements)} disagreements)"
        )

    def _repr_html_(self) -> str:
        html: str = self.to_frame().to_html(float_format="{:.3f}".format)
        return html


# -- Perspective-compatible surface (docs/perspective.md) ---------------------------------------------


class PerspectiveScore(_Response):
    value: float
    type: str | None = None  # "PROBABILITY"


class SpanScore(_Response):
    begin: int
    end: int
    score: PerspectiveScore


class AttributeScore(_Response):
    # Absent when a `scoreThreshold` left out the summary but kept a span above it (docs/perspective.md).
    summary_score: PerspectiveScore | None = Field(default=None, alias="summaryScore")
    span_scores: list[SpanScore] = Field(default_factory=list, alias="spanScores")


class AnalyzeCommentResult(_Response):
    """Perspective's AnalyzeComment response: `attribute_scores` by requested attribute name."""

    attribute_scores: dict[str, AttributeScore] = Field(default_factory=dict, alias="attributeScores")
    languages: list[str] = Field(default_factory=list)
    detected_languages: list[str] | None = Field(default=None, alias="detectedLanguages")
    client_token: str | None = Field(default=None, alias="clientToken")


class SuggestCommentScoreResult(_Response):
    """Perspective's SuggestCommentScore response (the request's `clientToken` echoed, if it had one)."""

    client_token: str | None = Field(default=None, alias="clientToken")


class DiscoveryDocument(_Response):
    """The Discovery document (`$discovery/rest?version=v1alpha1`); its many other fields stay as given
    (`model_extra`, or `model_dump(by_alias=True)` for the whole document)."""

    name: str
    version: str
    root_url: str | None = Field(default=None, alias="rootUrl")
    service_path: str | None = Field(default=None, alias="servicePath")
    resources: JsonObject = Field(default_factory=dict)
    schemas: JsonObject = Field(default_factory=dict)

    @property
    def methods(self) -> list[str]:
        """The comment methods the document describes (`analyze`, `suggestscore`)."""
        comments = self.resources.get("comments")
        methods = comments.get("methods") if isinstance(comments, dict) else None
        return sorted(methods) if isinstance(methods, dict) else []


# -- annotators' agreement (docs/api.md, "Agreement") -------------------------------------------------


class AnnotatorVotes(_Response):
    annotator: str
    votes: int = 0


class PairAgreement(_Response):
    """Two annotators on the texts both voted on: how many, and on how many their votes share a pole."""

    a: str
    b: str
    texts: int = 0
    same_pole: int = 0
    agreement: float | None = None


class CastVote(_Response):
    annotator: str | None = None
    quality: float
    sample_id: int | None = None  # None for a buffered feedback label
    adjudicated: bool = False


class DisagreedText(_Response):
    text: str
    votes: list[CastVote] = Field(default_factory=list)
    quality: float | None = None  # the counted quality (the adjudicated vote's, else the mean)
    contested: bool = False  # votes on both poles and not adjudicated
    adjudicated: bool = False
    metadata: JsonObject | None = None  # the extra columns kept beside the text


class TraitAgreement(_Response):
    texts_with_votes: int = 0
    annotators: list[AnnotatorVotes] = Field(default_factory=list)
    krippendorff_alpha_interval: float | None = None
    krippendorff_alpha_nominal: float | None = None
    krippendorff_alpha_ordinal: float | None = None  # a trait rated on a scale; None for a pole trait
    pairwise: list[PairAgreement] = Field(default_factory=list)
    disagreed: list[DisagreedText] = Field(default_factory=list)  # most disagreed first


class Agreement(_Response):
    """`GET …/agreement`: per trait key, how far the annotators agree. `stored_at` is set when the numbers
    were kept at a zero-data-retention purge (then `disagreed` is empty)."""

    handle: str | None = None
    traits: dict[str, TraitAgreement] = Field(default_factory=dict)
    stored_at: datetime | None = None


# -- flags (computed here, from the stored samples) --------------------------------------------------


class FlagVote(_Response):
    annotator: str | None = None
    quality: float
    sample_id: int | None = None


class SampleFlag(_Response):
    """One flag on a (trait, text): `flag` is `likely mislabelled`, `contested` or `outlier`; `id` is the
    sample id of the text's first row, `oof_score` its held-out score (None: neutral, or too few samples)."""

    id: int | None = None
    trait: str
    flag: str
    text: str
    quality: float
    oof_score: float | None = None
    why: str = ""
    votes: list[FlagVote] = Field(default_factory=list)
    spread: float = 0.0


class SampleFlags(list[SampleFlag]):
    """`flags`' answer: the flags, likely mislabelled first, with `.to_frame()` (a row per flag)."""

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        columns = ["id", "trait", "flag", "text", "quality", "oof_score", "spread", "why"]
        return pd.DataFrame([f.model_dump(include=set(columns)) for f in self], columns=columns)

    def __repr__(self) -> str:
        counts = ", ".join(f"{n} {kind}" for kind in FLAG_KINDS if (n := sum(f.flag == kind for f in self)))
        return f"SampleFlags({len(self)} flags{': ' + counts if counts else ''})"

    def _repr_html_(self) -> str:
        html: str = self.to_frame().to_html(max_rows=20)
        return html
