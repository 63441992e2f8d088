"""From any file of labelled texts to samples: the analyst picks the columns and how a label maps to
quality. Plain Python (no Streamlit), so the Import tab and the tests run the same rules.

`core.tables.read_table` reads the file as it is, keeping each row's line in the file. `map_rows` turns rows
into samples with a `Mapping`:

- `as_is`: the label is already a quality in [0, 1];
- `scale`: the label is on a scale from `low` to `high`, mapped linearly to 0..1 (its middle is 0.5, the
  boundary between the poles), so graded labels stay graded;
- `threshold`: a label at or above `threshold` is the positive pole (1), below it the negative (0); with
  `neutral_at_threshold` a label exactly at it is neutral (0.5), the default for a symmetric scale
  (`threshold_neutral_default`: its middle, 0 on -4..+4, means neither pole);
- `quantiles`: the top `share` of labels is positive, the bottom `share` negative, the middle is left out
  (per trait, so each trait's own spread decides; `share` 0.25 = quartiles).

`higher_is_positive=False` turns the scale round (for a label where a high value is the negative pole).
Rows that cannot be used become `Refusal`s with the reason; rows the quantile rule leaves out are counted:
with one label column, samples + refused + left out (+ dropped) are the table's rows. An optional id column is
kept as each sample's `source_id`, so an export joins back to the file. A quality that lands on the neutral
middle (`core.contract.pole_of`) is kept, counted, and left out only when the analyst asks (`drop_neutral`),
each such row listed in `dropped` with why. `rules_summary` says all of it in a line.

The pickers' defaults are read from the data (`guess_mapping`): the text is the column of the longest strings,
the label a numeric column named like one, and a label outside 0-1 is taken as a scale (a symmetric one when
it has both signs: -3 to +3.6 reads as -4..+4, middle 0), not "as is". A scale read from labels that do not
reach its ends is a guess: `scale_candidates` gives the others they could be on (-2.8..2.8: -3..+3 or -4..+4).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NamedTuple

import numpy as np

from app.ui.inert import escape_md
from core.contract import (
    ANNOTATOR_RE,
    MAX_ANNOTATOR_CHARS,
    MAX_SOURCE_ID_CHARS,
    NEUTRAL_QUALITY,
    id_column,
    pole_of,
    source_id_text,
)
from core.tables import Refusal, Table, numeric_share, row_metadata, text_column
from core.tables import blank as _blank
from core.tables import number as _number

RULES = ("as_is", "scale", "threshold", "quantiles")
Rule = Literal["as_is", "scale", "threshold", "quantiles"]


@dataclass(frozen=True)
class Mapping:
    text: str  # the column holding the text
    label: str  # the column holding the label
    trait_column: str | None = None  # a column naming each row's trait (key or name) …
    trait: str | None = None  # … or one trait for every row
    rule: Rule = "as_is"
    low: float = 0.0  # scale: the label that means quality 0 (with higher_is_positive) …
    high: float = 1.0  # … and the one that means quality 1
    threshold: float = 0.5
    neutral_at_threshold: bool = False  # threshold: a label exactly at it is neutral (0.5), not positive
    share: float = 0.25  # quantiles: the top and bottom share kept
    higher_is_positive: bool = True
    drop_neutral: bool = False  # leave out the rows whose quality is neutral (listed in `Mapped.dropped`)
    source_url: str | None = None  # an optional column of source links
    # Several raters: (label column, its rater-id column or None) each; every label cell is a
    # vote of its own, `label` is then not read. Without a rater column the label column's name is the rater.
    raters: tuple[tuple[str, str | None], ...] = ()
    source_id: str | None = None  # an optional column of the rows' own ids, kept as each sample's source_id
    keep: tuple[str, ...] = ()  # extra columns kept beside each text as its metadata
    # Word labels and the number each stands for (SUBJ → 1, OBJ → 0), read before the rule; a word not
    # listed is refused as "not a number".
    words: tuple[tuple[str, float], ...] = ()


@dataclass
class Mapped:
    samples: list[dict[str, Any]] = field(
        default_factory=list
    )  # {"trait", "text", "quality"[, "source_url", "source_id", "annotator", "metadata"]}
    lines: list[int] = field(default_factory=list)  # the file line of each sample
    labels: list[float] = field(default_factory=list)  # the file's label of each sample, before the mapping
    refused: list[Refusal] = field(default_factory=list)
    left_out: int = 0  # rows in the middle band of the quantile rule
    dropped: list[Refusal] = field(default_factory=list)  # neutral rows left out as the analyst asked

    def neutral(self) -> int:
        """Rows (votes) whose quality is neutral: those kept and those left out as asked."""
        kept = sum(pole_of(s["quality"]) == "neutral" for s in self.samples)
        return kept + len(self.dropped)

    def counts(self) -> list[dict[str, Any]]:
        """Per trait: how many samples fall on each pole or on neither (`pole_of`), and how many of them are
        graded (a quality strictly between 0 and 1)."""
        tally: dict[str, Counter[str]] = {}
        for s in self.samples:
            q = s["quality"]
            counter = tally.setdefault(s["trait"], Counter())
            counter[pole_of(q)] += 1
            counter["graded"] += int(0.0 < q < 1.0)
        return [
            {
                "trait": t,
                "negative": c["negative"],
                "neutral": c["neutral"],
                "positive": c["positive"],
                "graded": c["graded"],
            }
            for t, c in tally.items()
        ]

    def votes(self) -> dict[str, Any]:
        """What several raters' labels make, before anything is stored: texts, votes per text, raters."""
        per_text = Counter((s["trait"], s["text"].strip()) for s in self.samples)
        raters = Counter(str(s.get("annotator")) for s in self.samples if s.get("annotator"))
        counts = sorted(per_text.values())
        return {
            "texts": len(per_text),
            "votes": len(self.samples),
            "raters": len(raters),
            "votes_per_text": (counts[0], counts[len(counts) // 2], counts[-1]) if counts else (0, 0, 0),
            "by_rater": raters.most_common(),
        }

    def texts_with_votes(self, limit: int) -> list[dict[str, Any]]:
        """The first `limit` texts, each with its votes ("rater: quality") and their mean."""
        grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for s in self.samples:
            grouped.setdefault((s["trait"], s["text"].strip()), []).append(s)
        rows = []
        for (trait, text), votes in list(grouped.items())[:limit]:
            mean = sum(v["quality"] for v in votes) / len(votes)
            shown = ", ".join(f"{v.get('annotator')}: {v['quality']:g}" for v in votes)
            rows.append({"trait": trait, "text": text, "votes": len(votes), "mean quality": round(mean, 3),
                         "by rater": shown})  # fmt: skip
        return rows


def guess_column(columns: list[str], *names: str) -> str | None:
    """The first column whose name is one of `names` (case-insensitive)."""
    lowered = {c.strip().lower(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), None)


LABEL_NAMES = ("quality", "score", "rating", "label", "stars", "grade")


@dataclass(frozen=True)
class Guess:
    """The pickers' defaults for a file, read from its data."""

    text: str
    label: str
    trait_column: str | None
    source_url: str | None
    source_id: str | None = None


def guess_mapping(table: Table) -> Guess:
    """Which column is the text, the label, the trait and the source link.

    The text: `core.tables.text_column` (the column named `text`, else the one of the longest strings). The
    label: a mostly numeric column named like a label (exactly first, then one that is not of a numbered
    series such as `Score1..Score5`), else the last numeric one not an id. The id: a column named like one
    (`core.contract.ID_COLUMNS`), else one whose values look like ids (`id_like`)."""
    columns = table.columns
    numeric = [c for c in columns if numeric_share(table, c) >= 0.9]
    text = text_column(table) or columns[0]
    candidates = [c for c in numeric if c != text] or [c for c in columns if c != text] or columns

    def rank(column: str) -> int:
        name = column.strip().lower()
        named = any(n in name for n in LABEL_NAMES)
        if name in LABEL_NAMES:
            return 0
        if named:
            return 2 if name[-1:].isdigit() else 1  # "Score3" is one rater of a series
        return 4 if name == "id" or name.endswith(("_id", " id")) else 3

    label = min(reversed(candidates), key=rank)  # among equals, the last column
    ids = [c for c in columns if c not in (text, label)]  # never the text or the label
    trait, url = guess_column(columns, "trait"), guess_column(columns, "source_url", "url")
    return Guess(text, label, trait, url, id_column(ids) or id_like(table, ids))


_ID_VALUE = re.compile(r"^[A-Za-z_-]{0,12}\d+[A-Za-z0-9_-]{0,24}$")  # 17, a12, 347-b, t3_xyz: no spaces, dots


def id_like(table: Table, columns: list[str]) -> str | None:
    """The first of `columns` whose values all look like ids (a word with a number, no space or decimal
    point) and are all different: a headerless file's first column of ids is proposed as the id column."""
    for column in columns:
        values = [str(row.get(column) or "").strip() for row in table.rows]
        if values and all(_ID_VALUE.match(v) for v in values) and len(set(values)) == len(values):
            return column
    return None


_SERIES = re.compile(r"^(.*?)[ _-]?(\d+)$")  # "Score3" -> ("Score", "3"), "TurkId 3" -> ("TurkId", "3")


def guess_raters(table: Table) -> list[tuple[str, str | None]]:
    """A file's raters, when it has them: a numbered series of mostly numeric columns (`Score1..Score5`),
    each with the column of the same number that holds ids (`TurkId1..TurkId5`), or none."""
    numeric = {c for c in table.columns if numeric_share(table, c) >= 0.5}  # a few bad cells: still ratings
    series: dict[str, list[tuple[str, str]]] = {}
    for c in table.columns:
        if (m := _SERIES.match(c.strip())) and m.group(1):
            series.setdefault(m.group(1).lower(), []).append((m.group(2), c))
    labels = max(
        ([*cols] for cols in series.values() if len(cols) > 1 and all(c in numeric for _, c in cols)),
        key=len,
        default=[],
    )
    ids = {
        number: c
        for cols in series.values()
        if len(cols) > 1 and not any(c in numeric for _, c in cols)
        for number, c in cols
    }
    return [(c, ids.get(number)) for number, c in labels]


@dataclass(frozen=True)
class LabelScale:
    """What a label column's numbers look like, for the rule's defaults."""

    rule: Rule
    low: float  # the scale's ends (0 and 1 for a label already in 0-1)
    high: float

    @property
    def middle(self) -> float:
        return (self.low + self.high) / 2


def label_span(table: Table, *columns: str) -> tuple[float, float] | None:
    """The lowest and the highest label of `columns` (several raters' columns together); None: no numbers."""
    values = [v for c in columns for v in (_number(row.get(c)) for row in table.rows) if v is not None]
    return (min(values), max(values)) if values else None


def guess_scale(table: Table, *columns: str) -> LabelScale:
    """A label in 0-1 is a quality as is; any other numbers are a scale, its ends rounded out to whole
    numbers, and symmetric around 0 when the labels have both signs (-3..+3.6 is the scale -4..+4): the
    smallest such scale that holds them. Several columns (raters) share one scale."""
    span = label_span(table, *columns)
    if span is None or (span[0] >= 0.0 and span[1] <= 1.0):
        return LabelScale("as_is", 0.0, 1.0)
    low, high = math.floor(span[0]), math.ceil(span[1])
    if low < 0 < high:
        low, high = -max(-low, high), max(-low, high)
    if high == low:
        high = low + 1
    return LabelScale("scale", float(low), float(high))


def points_note(points: int | None, low: float, high: float) -> str | None:
    """What a file's rating scale `low`..`high` makes of a target trait rated on `points` points (None: a
    pole trait, nothing to say): whole ratings land on its points, and are kept as them, only when the two
    scales have as many steps."""
    if points is None:
        return None
    if float(low).is_integer() and float(high).is_integer() and high - low + 1 == points:
        return (
            f"Whole ratings {low:g}..{high:g} land on the trait's {points} points: each is kept as its point."
        )
    return (
        f"The trait is rated on {points} points and this scale has {high - low + 1:g} steps: ratings are "
        "stored as qualities, on the trait's points only where they happen to fall on one."
    )


def threshold_neutral_default(scale: LabelScale) -> bool:
    """Whether the threshold rule leaves a label at the threshold neutral by default: on a symmetric scale
    (-4..+4) the threshold proposed is its middle, 0, which a rater gave meaning neither pole; taken as
    positive, every 0 would quietly train as positive."""
    return scale.rule == "scale" and scale.low < 0 < scale.high and scale.low == -scale.high


def scale_candidates(scale: LabelScale, span: tuple[float, float] | None) -> list[LabelScale]:
    """The scales labels spanning `span` may be on, `scale` (the smallest that holds them) first.

    Labels that reach both ends of `scale` name it: only it. Otherwise the scale is a guess (mean ratings
    of -2.8..2.8 fit -3..+3 but were as likely given on -4..+4), so the next one out is offered too: a
    symmetric scale one wider at both ends, any other one wider at each end the labels do not reach, never
    across 0 (ratings from 1.2 never had a scale from -1)."""
    if scale.rule != "scale" or span is None or span == (scale.low, scale.high):
        return [scale]
    low, high = scale.low, scale.high
    if low == -high:
        return [scale, LabelScale("scale", low - 1, high + 1)]
    below_zero = high <= 0.0  # else the labels are all 0 or more
    wider = LabelScale(
        "scale",
        low - 1 if span[0] > low and (below_zero or low >= 1.0) else low,
        high + 1 if span[1] < high and (high <= -1.0 or not below_zero) else high,
    )
    return [scale] if wider == scale else [scale, wider]


class _Vote(NamedTuple):
    """One label cell that maps: where it is, what it labels, its value and who gave it."""

    line: int
    trait: str
    text: str
    value: float
    url: Any
    annotator: str | None
    source_id: str | None
    meta: dict[str, Any] | None


def _annotator_name(column: str) -> str:
    """A label column's name as an annotator name (the rater when the file has no rater ids): the characters
    an annotator name may not hold become "_"."""
    name = re.sub(r"[^A-Za-z0-9._@-]", "_", column.strip())[:MAX_ANNOTATOR_CHARS]
    return name if name[:1].isalnum() else f"rater_{name}"[:MAX_ANNOTATOR_CHARS]


def map_rows(table: Table, mapping: Mapping, traits: dict[str, str] | None = None) -> Mapped:
    """Samples from `table`'s rows under `mapping`; every row not used is refused (with why) or left out.

    `traits` (a trait's key or name, lowercased -> its key): a row naming another trait is refused here,
    with the model's keys, and names become keys; None leaves the traits to the service. With several
    raters (`mapping.raters`) each label cell is a vote of its own with its rater's name."""
    columns = mapping.raters or ((mapping.label, None),)
    for label, rater in columns:
        if rater is not None and not any(not _blank(row.get(rater)) for row in table.rows):
            raise ValueError(
                f"The rater column {rater!r} (beside {label!r}) has no values: pick another one."
            )
    out = Mapped()
    kept: list[_Vote] = []
    for row, line in zip(table.rows, table.lines, strict=True):
        trait = row.get(mapping.trait_column) if mapping.trait_column else mapping.trait
        if traits is not None and not _blank(trait):
            key = traits.get(str(trait).strip().lower())
            if key is None:
                keys = ", ".join(sorted(set(traits.values())))
                out.refused.append(
                    Refusal(line, f"unknown trait {str(trait).strip()!r} (this model's: {keys})")
                )
                continue
            trait = key
        text = row.get(mapping.text)
        missing = [name for name, value in (("text", text), ("trait", trait)) if _blank(value)]
        if not mapping.raters and _blank(row.get(mapping.label)):
            missing.insert(1, "label")
        if missing:
            out.refused.append(Refusal(line, f"no {', '.join(missing)}"))
            continue
        url = row.get(mapping.source_url) if mapping.source_url else None
        source_id = source_id_text(row.get(mapping.source_id)) if mapping.source_id else None
        if source_id is not None and len(source_id) > MAX_SOURCE_ID_CHARS:
            why = f"id {source_id[:20]!r}… has {len(source_id):,} characters; at most {MAX_SOURCE_ID_CHARS}"
            out.refused.append(Refusal(line, why))
            continue
        if mapping.raters and all(_blank(row.get(label)) for label, _ in columns):
            out.refused.append(Refusal(line, "no label in any rater's column"))
            continue
        for label, rater in columns:
            cell = row.get(label)
            if mapping.raters and _blank(cell):
                continue  # this rater did not rate this text
            value = _number(cell)
            if value is None and mapping.words:
                value = dict(mapping.words).get(str(cell).strip())
            if value is None:
                where = f" ({label})" if mapping.raters else ""
                out.refused.append(Refusal(line, f"label {str(cell)!r}{where} is not a number"))
                continue
            annotator = None
            if mapping.raters:
                annotator = _annotator_name(label) if rater is None else str(row.get(rater) or "").strip()
                if not ANNOTATOR_RE.fullmatch(annotator):
                    why = (
                        f"no rater id in {rater}"
                        if not annotator
                        else f"rater id {annotator!r} is not a name"
                    )
                    out.refused.append(Refusal(line, f"{label}: {why}"))
                    continue
            meta = row_metadata(row, mapping.keep)
            kept.append(_Vote(line, str(trait).strip(), str(text), value, url, annotator, source_id, meta))
    qualities = _qualities(kept, mapping, out)
    for vote, quality in zip(kept, qualities, strict=True):
        if quality is None:
            continue
        if mapping.drop_neutral and pole_of(quality) == "neutral":
            why = f"neutral: label {vote.value:g} → quality {quality:g}, neither pole; left out as asked"
            out.dropped.append(Refusal(vote.line, why))
            continue
        sample: dict[str, Any] = {"trait": vote.trait, "text": vote.text, "quality": quality}
        if not _blank(vote.url):
            sample["source_url"] = str(vote.url).strip()
        if vote.annotator is not None:
            sample["annotator"] = vote.annotator
        if vote.source_id is not None:
            sample["source_id"] = vote.source_id
        if vote.meta is not None:
            sample["metadata"] = vote.meta
        out.samples.append(sample)
        out.lines.append(vote.line)
        out.labels.append(vote.value)
    return out


def scale_quality(value: float, mapping: Mapping) -> float:
    """A label's quality on `mapping`'s scale: linear from its low end (0) to its high end (1), or the other
    way round when a higher label is the negative pole."""
    q = (value - mapping.low) / (mapping.high - mapping.low)
    return round(q if mapping.higher_is_positive else 1.0 - q, 6)


def _qualities(kept: list[_Vote], mapping: Mapping, out: Mapped) -> list[float | None]:
    sign = 1.0 if mapping.higher_is_positive else -1.0
    if mapping.rule == "as_is":
        result: list[float | None] = []
        for line, _, _, value, *_ in kept:
            if not 0.0 <= value <= 1.0:
                out.refused.append(
                    Refusal(
                        line, f"label {value:g} is outside 0–1: map it from its scale or with a threshold"
                    )
                )
                result.append(None)
            else:
                result.append(value if mapping.higher_is_positive else 1.0 - value)
        return result
    if mapping.rule == "scale":
        if not mapping.high > mapping.low:
            raise ValueError("the scale's high end must be above its low end")
        scaled: list[float | None] = []
        for line, _, _, value, *_ in kept:
            if not mapping.low <= value <= mapping.high:
                out.refused.append(
                    Refusal(line, f"label {value:g} is outside the scale {mapping.low:g} to {mapping.high:g}")
                )
                scaled.append(None)
                continue
            scaled.append(scale_quality(value, mapping))
        return scaled
    if mapping.rule == "threshold":
        return [
            NEUTRAL_QUALITY
            if mapping.neutral_at_threshold and v.value == mapping.threshold
            else 1.0
            if sign * v.value >= sign * mapping.threshold
            else 0.0
            for v in kept
        ]
    if mapping.rule != "quantiles":
        raise ValueError(f"unknown rule {mapping.rule!r}: one of {', '.join(RULES)}")
    if not 0.0 < mapping.share <= 0.5:
        raise ValueError("the quantile share is above 0 and at most 0.5 (top and bottom halves)")
    result = [None] * len(kept)
    by_trait: dict[str, list[int]] = {}
    for i, vote in enumerate(kept):
        by_trait.setdefault(vote.trait, []).append(i)
    for rows in by_trait.values():
        values = np.asarray([sign * kept[i].value for i in rows])
        low, high = np.quantile(values, [mapping.share, 1.0 - mapping.share])
        for i, v in zip(rows, values, strict=True):
            # A label on both cut points (heavy ties) is ambiguous: left out rather than put on one pole.
            positive, negative = v >= high, v <= low
            if positive != negative:
                result[i] = 1.0 if positive else 0.0
            else:
                out.left_out += 1
    return result


def number_text(x: float) -> str:
    """A label as the analyst reads it: "−2.8" with a real minus sign."""
    return f"{x:g}".replace("-", "−")


def scale_text(low: float, high: float) -> str:
    """A scale's ends, "−4..+4" (a plus when its low end is negative), "1..5"."""
    plus = "+" if low < 0 < high else ""
    return f"{number_text(low)}..{plus}{number_text(high)}"


def which_scale(low: float, high: float, candidates: list[LabelScale]) -> int | None:
    """The candidate whose ends are `low` and `high`, or None (the analyst typed another scale)."""
    return next((i for i, c in enumerate(candidates) if (c.low, c.high) == (low, high)), None)


def rules_summary(mapping: Mapping, mapped: Mapped, unit: str = "row") -> str:
    """Every rule the mapping applies, in one line, with how many rows (`unit`: "row" or "vote") come out
    neutral: "−4..+4 → quality 0..1; middle 0 → 0.5, neutral; 17 rows neutral"."""

    def rows(n: int) -> str:
        return f"{n:,} {escape_md(unit)}{'' if n == 1 else 's'}"

    up = mapping.higher_is_positive
    pole = {q: f"{q:.1f} ({escape_md(pole_of(q))})" for q in (0.0, 1.0)}
    if mapping.rule in ("as_is", "scale"):
        low, high = (mapping.low, mapping.high) if mapping.rule == "scale" else (0.0, 1.0)
        middle = (low + high) / 2
        on_scale = replace(mapping, low=low, high=high)
        q_middle = scale_quality(middle, on_scale)
        if mapping.rule == "scale":
            rule = f"{scale_text(low, high)} → quality {'0..1' if up else '1..0'}; "
            rule += f"middle {number_text(middle)} → {q_middle:g}, {escape_md(pole_of(q_middle))}"
        else:
            rule = "label = quality (0..1)" if up else "quality = 1 − label (0..1)"
            rule += f"; {q_middle:g} is {escape_md(pole_of(q_middle))}"
    elif mapping.rule == "threshold":
        cut = number_text(mapping.threshold)
        if mapping.neutral_at_threshold:
            above, below = (">", "<") if up else ("<", ">")
            neither = f"{NEUTRAL_QUALITY:.1f} ({escape_md(pole_of(NEUTRAL_QUALITY))})"
            rule = f"{above} {cut} → {pole[1.0]}, {below} {cut} → {pole[0.0]}, {cut} → {neither}"
        else:
            at, other = ("≥", "below") if up else ("≤", "above")
            rule = f"{at} {cut} → {pole[1.0]}, {other} → {pole[0.0]}"
    else:
        share = f"{mapping.share * 100:g}%"
        top, bottom = ("top", "bottom") if up else ("bottom", "top")
        rule = (
            f"{top} {share} of each trait's labels → {pole[1.0]}, {bottom} {share} → {pole[0.0]}; "
            f"{rows(mapped.left_out)} between left out"
        )
    neutral = mapped.neutral()
    if not neutral:
        return f"{rule}; no {escape_md(unit)} neutral"
    if mapped.dropped:
        return f"{rule}; {rows(neutral)} neutral, left out as asked"
    return f"{rule}; {rows(neutral)} neutral"


MAX_WORDS = 12  # distinct word labels offered a number each; more is not a label column


def word_labels(table: Table, column: str) -> list[str]:
    """The label column's values that are not numbers (SUBJ, OBJ), in file order, when there are at most
    `MAX_WORDS` of them: each is given a number on the Import tab. Empty when the labels are numbers."""
    found: dict[str, None] = {}
    for row in table.rows:
        cell = row.get(column)
        if not _blank(cell) and _number(cell) is None:
            found[str(cell).strip()] = None
            if len(found) > MAX_WORDS:
                return []
    return list(found)
