"""A version's embedder (the one it was trained on) said in words, one way for the engine and the workbench.

Takes names, not ids (the registry's short names: the service's version resource carries them, the engine
looks them up), so the client's models need no embedder code to say it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: The registry's short name of the blend of both embedders (core.contract.BLEND_EMBEDDER), said as what it
#: is.
BLEND = "blend"
BOTH = "both embedders"
#: Why `auto` trained a version on e5-small alone where it would train on both embedders: mpnet-base's int8
#: graph was not built yet (a first training waits for no build). The Training page offers both embedders
#: once the graph is built, by these words.
GRAPH_NOT_BUILT = "mpnet-base's int8 graph was not built on this machine yet"
#: An out-of-fold ROC-AUC whose standard error is over this rests on too few labels to read closely: at 8
#: labels a pole it is about 0.10, at 32 about 0.046, at 256 about 0.014 (benchmarks/embedder_choice.py, its
#: out-of-fold figures against the test's). The Training page's per-trait warning reads the same bound.
FEW_LABELS_SE = 0.05


def embedder_words(
    chosen: str,
    figures: Mapping[str, float | None] | None = None,
    left_out: Sequence[str] = (),
    *,
    not_compared: Sequence[str] = (),
    because: str | None = None,
    compared_on: int | None = None,
    tie: float | None = None,
    se: float | None = None,
) -> str:
    """E.g. "trained on mpnet-base: out-of-fold 0.91 against 0.87 on e5-small-qint8 (measured on 400
    samples)", "trained on both embedders (e5-small-qint8 and mpnet-base, the mean of their scores):
    out-of-fold 0.93; alone 0.90 on e5-small-qint8, 0.91 on mpnet-base", or "trained on e5-small-qint8
    (mpnet-base not compared: short texts: a median of 5 words, under 8)".

    `figures`: each compared embedder's out-of-fold ROC-AUC by name, the chosen one's included (None, or the
    chosen one's alone: training compared no embedders; a None figure: the samples gave no folds); for the
    blend, its own and each embedder's alone; `left_out`: the embedders not tried because most samples are not
    in a language they read; `not_compared`: the embedders offered but not compared, `because` says why (the
    service's words); `compared_on`: how many samples the figures were measured on (said only when embedders
    were compared: a comparison on a subset reads differently from one on all); `tie`: the lead a larger
    embedder needed to be kept (its rule is said when one led by less); `se`: the chosen figure's standard
    error (said when it is over FEW_LABELS_SE: few labels).
    """
    mine = (figures or {}).get(chosen)
    others = {b: a for b, a in (figures or {}).items() if b != chosen}
    said = [f"{'–' if a is None else f'{a:.2f}'} on {b}" for b, a in others.items()]
    notes: list[str] = []
    if chosen == BLEND:
        text = f"trained on {BOTH}"
        if others:
            text += f" ({' and '.join(others)}, the mean of their scores)"
        if mine is not None:
            text += f": out-of-fold {mine:.2f}" + (f"; alone {', '.join(said)}" if said else "")
    else:
        text = f"trained on {chosen}"
        if mine is not None and said:  # a lone figure chose nothing: the version's metrics say it
            text += f": out-of-fold {mine:.2f} against " + ", ".join(said)
            if compared_on:
                notes.append(f"measured on {compared_on:,} sample{'' if compared_on == 1 else 's'}")
            led = {b: a - mine for b, a in others.items() if a is not None and a > mine}
            if led and tie is not None:
                embedder, lead = max(led.items(), key=lambda kv: kv[1])
                notes.append(f"{embedder} led by {lead:.3f}, under the {tie:g} a switch needs")
    if se is not None and se > FEW_LABELS_SE and mine is not None:
        notes.append(f"few labels: the out-of-fold figure is ± {se:.2f}, a rough guide")
    if list(not_compared) == [BLEND]:  # `auto` kept e5-small alone
        notes.append(f"not on {BOTH}" + (f": {because}" if because else ""))
    elif not_compared or because:
        names = ", ".join(not_compared) or "embedders"
        notes.append(f"{names} not compared" + (f": {because}" if because else ""))
    if left_out:
        they = "it reads" if len(left_out) == 1 else "they read"
        notes.append(f"{', '.join(left_out)} not tried: most samples are not in a language {they}")
    if notes:
        text += f" ({'; '.join(notes)})"
    return text
