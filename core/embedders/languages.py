"""Which languages each embedder reads, as ISO 639-1 codes (docs/embedders.md, "Languages").

The Perspective route refuses a request's `languages` that the answering version's embedder does not read
(docs/perspective.md), as Perspective refuses a language an attribute does not support.
"""

from __future__ import annotations

import threading

#: all-MiniLM-L6-v2 was trained on English sentence pairs only (its model card), with an English WordPiece
#: vocabulary: other languages embed, but as strings of sub-word pieces it never learnt to compare.
ENGLISH = frozenset({"en"})

#: multilingual-e5-small "supports 100 languages from xlm-roberta" (its model card): XLM-R's CC-100
#: languages, here as ISO 639-1 codes (romanised and second-script variants folded into their language).
_XLMR_CODES = (
    "af am ar as az be bg bn br bs ca cs cy da de el en eo es et eu fa fi fr fy ga gd gl gu ha he hi "
    "hr hu hy id is it ja jv ka kk km kn ko ku ky la lo lt lv mg mk ml mn mr ms my ne nl no om or pa "
    "pl ps pt ro ru sa sd si sk sl so sq sr su sv sw ta te th tl tr ug uk ur uz vi xh yi zh"
)
XLMR_LANGUAGES = frozenset(_XLMR_CODES.split())

# By id prefix, so every build of the same weights (another recipe, a truncation) reads the same languages.
# all-mpnet-base-v2: English sentence pairs and an English (lower-cased WordPiece) vocabulary, as MiniLM.
# The blend of e5-small and mpnet-base reads what both read: English.
_BY_PREFIX = (
    ("minilm-l6-v2", ENGLISH),
    ("mpnet-base", ENGLISH),
    ("e5-small", XLMR_LANGUAGES),
    ("blend:", ENGLISH),
)


def languages_read(embedder_id: str) -> frozenset[str] | None:
    """The languages the embedder with this id reads; None when it has no such limit (the hashing
    embedder compares character n-grams of any script) or is not known here."""
    for prefix, languages in _BY_PREFIX:
        if embedder_id.startswith(prefix):
            return languages
    return None


_RENAMED = {"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "fil": "tl", "nb": "no", "nn": "no"}


def language_code(tag: str) -> str:
    """A request's language tag as its ISO 639-1 code: "en-US" → "en", "zh-Hant" → "zh", "PT" → "pt"; the
    older codes Google still accepts (iw, in, ji, jw) and fil, nb, nn as the codes above name them."""
    code = tag.strip().replace("_", "-").split("-")[0].lower()
    return _RENAMED.get(code, code)


_detector_lock = threading.Lock()


def detect_languages(text: str) -> list[str]:
    """ISO 639-1 codes langdetect finds with probability ≥ 0.2, most likely first; [] when it cannot tell."""
    from langdetect import DetectorFactory, detect_langs
    from langdetect.lang_detect_exception import LangDetectException

    with _detector_lock:  # the first call loads the profiles into a module-level factory
        DetectorFactory.seed = 0  # deterministic answers
        try:
            found = detect_langs(text)
        except LangDetectException:  # no letters (digits, emoji only)
            return []
    return [lang.lang.split("-")[0] for lang in found if lang.prob >= 0.2]


def main_language(text: str) -> str | None:
    """The language `text` is most likely in (`detect_languages`), None when that cannot be told."""
    found = detect_languages(text)
    return found[0] if found else None
