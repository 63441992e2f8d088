"""Which languages each embedder reads, by the ids snapshots record (core/embedders/languages.py)."""

from __future__ import annotations

import langdetect.detector_factory as langdetect_factory

from core.embedders.e5 import E5_ID
from core.embedders.languages import language_code, languages_read
from core.embedders.minilm import MINILM_ID
from core.embedders.quantized import QINT8V2_ID


def test_minilm_reads_english_and_e5_the_xlmr_languages() -> None:
    for minilm in (MINILM_ID, QINT8V2_ID, f"{MINILM_ID}-t128"):
        assert languages_read(minilm) == frozenset({"en"})
    e5 = languages_read(E5_ID)
    assert e5 is not None and len(e5) == 93 and {"en", "es", "zh", "ja", "ar", "hi", "sw"} <= e5
    assert languages_read("hashing-v1-512") is None and languages_read("something-else@1") is None


def test_every_language_langdetect_reports_is_one_e5_reads() -> None:
    langdetect_factory.init_factory()
    reported = {language_code(lang) for lang in langdetect_factory._factory.get_lang_list()}
    e5 = languages_read(E5_ID)
    assert e5 is not None and len(reported) >= 50 and reported <= e5


def test_language_tags_read_by_their_primary_subtag() -> None:
    assert [language_code(t) for t in ("en-US", "EN", "zh-Hant", "pt_BR", "iw", "in", " fr ")] == [
        "en",
        "en",
        "zh",
        "pt",
        "he",
        "id",
        "fr",
    ]
