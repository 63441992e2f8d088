"""The demo models in `sample_data/`: read them from disk, or create them in the service on first start.

Each model is a folder `sample_data/<slug>/` with `model.json` and `samples.csv` (see sample_data/README.md);
`sample_data/manifest.json` lists the slugs and what first start does with each (draft, train, train_and_tag).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from core.json_types import JsonObject

if TYPE_CHECKING:
    from core.client import Client

SAMPLE_DATA_DIR = Path(__file__).resolve().parents[1] / "sample_data"
MANIFEST_FILE = "manifest.json"
DEMO_ROLES = ("draft", "train", "train_and_tag")
TRAIT_FIELDS = ("name", "positive_label", "negative_label", "description")
CSV_HEADER = ["trait", "text", "quality"]

Role = Literal["draft", "train", "train_and_tag"]
#: progress(message, fraction of all demo models done in [0, 1])
DemoProgress = Callable[[str, float], None]


class DemoDataError(ValueError):
    """A file under sample_data/ is missing or malformed."""


class DemoLoadError(RuntimeError):
    """The service did not accept a demo model's samples."""


@dataclass(frozen=True)
class DemoModel:
    slug: str
    name: str
    description: str
    readme_markdown: str
    traits: list[dict[str, str]]  # name, positive_label, negative_label, description
    samples: list[JsonObject] = field(default_factory=list)  # trait (a trait name), text, quality


@dataclass(frozen=True)
class ManifestEntry:
    slug: str
    on_first_start: Role
    tag: str | None = None


def _dir(data_dir: Path | None) -> Path:
    return Path(data_dir) if data_dir is not None else SAMPLE_DATA_DIR


def read_manifest(data_dir: Path | None = None) -> list[ManifestEntry]:
    path = _dir(data_dir) / MANIFEST_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        raw = doc["models"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DemoDataError(f"{path}: cannot read the manifest ({exc})") from exc
    entries: list[ManifestEntry] = []
    for item in raw:
        role = item.get("on_first_start")
        if role not in DEMO_ROLES:
            raise DemoDataError(
                f"{path}: {item.get('slug')!r} has on_first_start {role!r}; expected one of {DEMO_ROLES}"
            )
        tag = item.get("tag")
        if role == "train_and_tag" and not tag:
            raise DemoDataError(f"{path}: {item.get('slug')!r} is train_and_tag but names no tag")
        entries.append(ManifestEntry(slug=str(item["slug"]), on_first_start=role, tag=tag))
    return entries


def demo_slugs(data_dir: Path | None = None) -> list[str]:
    """Slugs in manifest order."""
    return [entry.slug for entry in read_manifest(data_dir)]


def read_demo_model(slug: str, data_dir: Path | None = None) -> DemoModel:
    """Parse `<slug>/model.json` and `<slug>/samples.csv`; no service needed."""
    folder = _dir(data_dir) / slug
    try:
        doc = json.loads((folder / "model.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DemoDataError(f"{folder}/model.json: {exc}") from exc
    try:
        traits = [{k: str(t.get(k, "")) for k in TRAIT_FIELDS} for t in doc["traits"]]
        model = DemoModel(
            slug=slug,
            name=str(doc["name"]),
            description=str(doc.get("description", "")),
            readme_markdown=str(doc.get("readme_markdown", "")),
            traits=traits,
            samples=_read_samples(folder / "samples.csv"),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise DemoDataError(f"{folder}/model.json: missing or malformed field {exc}") from exc
    names = {t["name"] for t in traits}
    unknown = sorted({s["trait"] for s in model.samples} - names)
    if unknown:
        raise DemoDataError(f"{folder}/samples.csv names traits not in model.json: {unknown}")
    return model


def _read_samples(path: Path) -> list[JsonObject]:
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames != CSV_HEADER:
                raise DemoDataError(f"{path}: header must be {','.join(CSV_HEADER)}, got {reader.fieldnames}")
            # Line numbers count the header as line 1, as a spreadsheet shows them.
            return [
                {"trait": row["trait"], "text": row["text"], "quality": _quality(row["quality"], path, n)}
                for n, row in enumerate(reader, start=2)
            ]
    except OSError as exc:
        raise DemoDataError(f"{path}: {exc}") from exc


def _quality(value: str, path: Path, line: int) -> float:
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise DemoDataError(f"{path}:{line}: quality {value!r} is not a number") from exc


def load_demo_models(
    client: Client,
    namespace: str,
    *,
    data_dir: Path | None = None,
    train: bool = True,
    progress: DemoProgress | None = None,
    trained_embedder: str | None = None,
) -> list[str]:
    """Create every manifest model missing from `namespace`; return the handles created.

    A model whose handle already exists is left untouched (even if an earlier attempt stopped half-way),
    so calling this on every start is cheap and never duplicates anything. With `train=False` every new
    model stays a draft, whatever the manifest says. `trained_embedder`: the embedder of the models this call
    trains (None: the service's default for new models); the drafts always get the default.

    Every model is created and its training queued first, then the trainings are awaited with no deadline:
    a queued run waits its turn behind whatever holds the service's worker (the user's own training on a
    one-worker service), and a model that waits must not stop the next one from being created.
    """
    from core.client.errors import NotFoundError

    entries = read_manifest(data_dir)
    created: list[str] = []
    queued: list[tuple[ManifestEntry, str, str | None]] = []  # (entry, handle, run id)

    def report(message: str, done: float) -> None:
        if progress is not None:
            progress(message, min(max(done / max(len(entries), 1), 0.0), 1.0))

    for i, entry in enumerate(entries):
        demo = read_demo_model(entry.slug, data_dir)
        handle = f"{namespace}.{demo.name}"
        try:
            client.get_model(handle)
            report(f"{handle} already exists", i + 1)
            continue
        except NotFoundError:
            pass
        report(f"creating {handle}", i)
        trains = train and entry.on_first_start != "draft"
        client.create_model(
            handle,
            description=demo.description,
            readme_markdown=demo.readme_markdown,
            embedder=trained_embedder if trains else None,
        )
        created.append(handle)
        added = client.add_traits(handle, [dict(t) for t in demo.traits])
        key_of = {t.name: t.key for t in added}
        report(f"importing {len(demo.samples)} samples into {handle}", i + 0.25)
        result = client.import_samples(
            handle,
            [{"trait": key_of[s["trait"]], "text": s["text"], "quality": s["quality"]} for s in demo.samples],
            strict=False,  # refusals are said below, as a DemoLoadError
        )
        if result.errors:
            first = result.errors[0]
            raise DemoLoadError(
                f"{handle}: {len(result.errors)} of {len(demo.samples)} samples were not stored "
                f"(first: row {first.index}: {first.message})"
            )
        if trains:
            queued.append((entry, handle, client.train(handle, effort="low").run_id))
            report(f"training {handle}", i + 0.5)
        else:
            report(f"{handle} ready", i + 1)
    for entry, handle, run_id in queued:
        i = entries.index(entry)
        report(f"training {handle}", i + 0.5)
        client.wait(handle, run_id, timeout=math.inf)  # ends when the run does; an interrupt stops it
        if entry.on_first_start == "train_and_tag" and entry.tag:
            client.tag_version(handle, entry.tag)
        report(f"{handle} ready", i + 1)
    return created
