"""What an import of labelled rows says, without Streamlit: the rows it will not store and why, texts a file
labels both ways, and the one line an import's outcome is told in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from app.samples.mapping import Mapped
from core.client import Duplicate, Trait
from core.engine.votes import opposed
from core.tables import Refusal


def refusals_frame(refusals: list[Refusal], extra: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    """Refused rows as a table, a reason beside each line, in file order."""
    rows = [{"line": r.line, "reason": r.reason} for r in refusals] + (extra or [])
    return pd.DataFrame(rows, columns=["line", "reason"]).sort_values("line", kind="stable")


def trait_lookup(traits: list[Trait]) -> dict[str, str]:
    """A trait's key or name (lowercased) -> its key: how a file may name a model's trait."""
    return {**{t.name.strip().lower(): t.key for t in traits}, **{t.key.lower(): t.key for t in traits}}


def contradictions(mapped: Mapped) -> list[dict[str, Any]]:
    """Texts the file labels on both poles (rows of one text and trait, one label each): the file's lines and
    labels of each. Training counts such a text as contested (core/engine/votes.py) and the Samples page's
    Disagreements tab settles it; several raters' votes are not listed here (they are meant to differ)."""
    rows: dict[tuple[str, str], list[int]] = {}
    for i, sample in enumerate(mapped.samples):
        if sample.get("annotator") is None:
            rows.setdefault((str(sample["trait"]), str(sample["text"]).strip()), []).append(i)
    found = []
    for (trait, text), at in rows.items():
        if opposed(float(mapped.samples[i]["quality"]) for i in at):  # training's rule, the same answer
            found.append(
                {
                    "lines": ", ".join(str(mapped.lines[i]) for i in at),
                    "labels": ", ".join(f"{mapped.labels[i]:g}" for i in at),
                    "trait": trait,
                    "text": text if len(text) <= 120 else text[:119] + "…",
                }
            )
    return found


def earlier_rows(samples: Sequence[Mapping[str, Any]], duplicates: Sequence[int]) -> dict[int, int]:
    """{position: position of the earlier row it repeats} for the `duplicates` (rows that stored nothing) that
    repeat a row earlier in the same file, compared as the service compares samples (trait, trimmed text,
    quality, annotator); the other duplicates were stored before the import."""
    first: dict[tuple[str, str, float, str | None], int] = {}
    keys = []
    for i, row in enumerate(samples):
        who = row.get("annotator")
        text = str(row["text"]).strip()
        key = (str(row["trait"]), text, float(row["quality"]), None if who is None else str(who))
        keys.append(key)
        first.setdefault(key, i)
    return {i: first[keys[i]] for i in duplicates if first[keys[i]] < i}


def unstored_rows(mapped: Mapped, duplicates: Sequence[Duplicate]) -> tuple[list[Refusal], list[Refusal]]:
    """The rows an import stored nothing for, with why: (identical to a sample stored before the import,
    repeating an earlier row of the same file), so a repeat in the file is never called "stored already"."""
    earlier = earlier_rows(mapped.samples, [d.index for d in duplicates])
    before: list[Refusal] = []
    in_file: list[Refusal] = []
    for d in duplicates:
        if d.index in earlier:
            reason = f"repeats line {mapped.lines[earlier[d.index]]} of the file: stored once"
            in_file.append(Refusal(mapped.lines[d.index], reason))
        else:
            before.append(
                Refusal(mapped.lines[d.index], f"identical to sample #{d.id}, stored already: nothing stored")
            )
    return before, in_file


def import_outcome(
    total: int,
    stored: int,
    repeats: list[Refusal],
    mapped: Mapped,
    rejected: list[Refusal],
    in_file: Sequence[Refusal] = (),
) -> str:
    """What an import did with each of the file's `total` rows (votes), in a line: stored, identical to a
    stored sample, a repeat of an earlier row of the file, left out by a rule the analyst chose (each rule
    counted), rejected; they add up."""
    parts = [f"Stored {stored} of {total} rows."]
    if repeats:
        n = len(repeats)
        parts.append(f"{n:,} {'was' if n == 1 else 'were'} identical to samples stored already (listed).")
    if in_file:
        n = len(in_file)
        parts.append(f"{n:,} repeated a row earlier in the file, stored once (listed).")
    if mapped.left_out:
        parts.append(f"{mapped.left_out:,} row(s) between the quantiles left out, as the rule says.")
    if mapped.dropped:
        parts.append(f"{len(mapped.dropped):,} neutral row(s) left out, as asked.")
    if rejected:
        parts.append(f"{len(rejected):,} row(s) rejected:")
    return " ".join(parts)


def held_out_note(n: int) -> str | None:
    """Stored samples whose texts are in the evaluation set, in plain words (None when there are none)."""
    if not n:
        return None
    if n == 1:
        return "1 of these texts is in the evaluation set: it is stored, but no training takes it in."
    return f"{n:,} of these texts are in the evaluation set: they are stored, but no training takes them in."
