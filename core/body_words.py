"""A version's body (the embedder it was trained on) said in words, one way for the engine and the workbench.

Takes names, not ids (the registry's short names: the service's version resource carries them, the engine
looks them up), so the client's models need no embedder code to say it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def body_words(
    chosen: str,
    figures: Mapping[str, float | None] | None = None,
    left_out: Sequence[str] = (),
    *,
    not_compared: Sequence[str] = (),
    because: str | None = None,
    compared_on: int | None = None,
) -> str:
    """E.g. "trained on mpnet-base: out-of-fold 0.91 against 0.87 on e5-small-qint8 (measured on 400
    samples)", or "trained on e5-small-qint8 (mpnet-base not compared: short texts: a median of 5 words,
    under 8)".

    `figures`: each compared body's out-of-fold ROC-AUC by name, the chosen one's included (None, or the
    chosen one's alone: training compared no bodies; a None figure: the samples gave no folds); `left_out`:
    the bodies not tried because most samples are not in a language they read; `not_compared`: the bodies
    offered but not compared, `because` says why (the service's words); `compared_on`: how many samples the
    figures were measured on (said only when bodies were compared: a comparison on a subset reads
    differently from one on all).
    """
    text = f"trained on {chosen}"
    mine = (figures or {}).get(chosen)
    others = [f"{'–' if a is None else f'{a:.2f}'} on {b}" for b, a in (figures or {}).items() if b != chosen]
    notes: list[str] = []
    if mine is not None and others:  # a lone figure chose nothing: the version's metrics say it
        text += f": out-of-fold {mine:.2f} against " + ", ".join(others)
        if compared_on:
            notes.append(f"measured on {compared_on:,} sample{'' if compared_on == 1 else 's'}")
    if not_compared or because:
        names = ", ".join(not_compared) or "bodies"
        notes.append(f"{names} not compared" + (f": {because}" if because else ""))
    if left_out:
        they = "it reads" if len(left_out) == 1 else "they read"
        notes.append(f"{', '.join(left_out)} not tried: most samples are not in a language {they}")
    if notes:
        text += f" ({'; '.join(notes)})"
    return text
