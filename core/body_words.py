"""A version's body (the embedder it was trained on) said in words, one way for the engine and the workbench.

Takes names, not ids (the registry's short names: the service's version resource carries them, the engine
looks them up), so the client's models need no embedder code to say it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def body_words(
    chosen: str, figures: Mapping[str, float | None] | None = None, left_out: Sequence[str] = ()
) -> str:
    """E.g. "trained on mpnet-base: out-of-fold 0.91 against 0.87 on e5-small-qint8".

    `figures`: each compared body's out-of-fold ROC-AUC by name, the chosen one's included (None: training
    compared no bodies; a None figure: the samples gave no folds); `left_out`: the bodies not tried because
    most samples are not in a language they read.
    """
    text = f"trained on {chosen}"
    mine = (figures or {}).get(chosen)
    if mine is not None:
        others = [
            f"{'–' if a is None else f'{a:.2f}'} on {b}" for b, a in (figures or {}).items() if b != chosen
        ]
        text += f": out-of-fold {mine:.2f}"
        if others:
            text += " against " + ", ".join(others)
    if left_out:
        they = "it reads" if len(left_out) == 1 else "they read"
        text += f" ({', '.join(left_out)} not tried: most samples are not in a language {they})"
    return text
