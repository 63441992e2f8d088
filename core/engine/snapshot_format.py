"""The snapshot format's name, version and chunk size: shared by the one-embedder snapshot (`snapshot.py`) and
the blend's (`blend.py`), which the one-embedder check calls back, so neither imports the other for them."""

FORMAT = "scoring-workbench/snapshot"
FORMAT_VERSION = 1
#: Texts longer than this many words are scored in chunks of this many words.
CHUNK_WORDS = 200
