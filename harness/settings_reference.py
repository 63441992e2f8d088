"""docs/settings.md, rendered from the settings classes: the service's `Settings`, `core`'s and the
workbench's. `python -m harness.settings_reference` rewrites it; tests/project/test_settings_reference.py
fails while the committed file differs (a setting added, changed or described anew without rendering it).

Here, not in a layer: the page spans the service and the workbench, which import neither each other."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from app.config import WorkbenchSettings
from core.config import CoreSettings, env_name
from service.config.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "settings.md"

HEAD = """\
# Settings

<!-- Rendered by `python -m harness.settings_reference` from the settings classes; edit their Field
descriptions, then render it again (tests/project/test_settings_reference.py checks it is current). -->

Every `SCORING_*` variable the code reads, with its default and what it does. Only three modules read the
environment, one a layer (docs/contributing.md, "Where things are"): the service's `Settings`
(`service/config/settings.py`), `core/config.py` (the client, the local service, the embedders) and
`app/config.py` (the workbench, which also reads `core`'s). An empty value counts as unset. The variables only
the tests and the harness read (`SCORING_TEST_DATABASES`, `SCORING_TEST_SEED`, `SCORING_DATASETS`, …) are in
docs/contributing.md.
"""

SECTIONS: list[tuple[str, str, type[BaseModel], type[BaseModel] | None]] = [
    (
        "The service",
        "What `python -m service` (`serve`, `worker` and the other commands) reads; the command line's "
        "options (`python -m service serve --help`: `--data-dir`, `--database-url`, `--embedder`, "
        "`--queue-url`, `--scoring-threads`, `--no-worker`) override their variables.",
        Settings,
        None,
    ),
    (
        "The client, the local service and the embedders",
        "What `core` reads: a `Client` made without a URL or key, `core.start_local_service`, and the "
        "embedders in any process (the service's too).",
        CoreSettings,
        None,
    ),
    (
        "The workbench",
        "What the workbench (`make run`, `streamlit run app/main.py`) reads besides `core`'s variables "
        "above (`SCORING_API_URL` and `SCORING_API_KEY`: a remote service; `SCORING_DATA_DIR`: the embedded "
        "one's).",
        WorkbenchSettings,
        CoreSettings,
    ),
]


def variable(name: str, field: FieldInfo) -> str:
    """The field's environment variable: its alias when it has one, else `SCORING_` + its name."""
    alias = field.validation_alias
    return alias if isinstance(alias, str) else env_name(name)


def default(field: FieldInfo) -> str:
    value = field.default
    if value is None or isinstance(value, SecretStr):
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, bytes):
        value = value.decode()
    return f"`{value}`" if str(value) else "empty"


def rows(model: type[BaseModel], inherited: type[BaseModel] | None) -> list[str]:
    skip = set(inherited.model_fields) if inherited else set()
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        if not field.description:
            raise ValueError(f"{model.__name__}.{name} has no description: settings.md needs its meaning")
        meaning = " ".join(field.description.split()).replace("|", "\\|")
        lines.append(f"| `{variable(name, field)}` | {default(field)} | {meaning} |")
    return lines


def render() -> str:
    parts = [HEAD.rstrip()]
    for title, intro, model, inherited in SECTIONS:
        lines = textwrap.wrap(intro, 110, break_on_hyphens=False)
        parts.append("\n".join([f"## {title}", "", *lines, "", *rows(model, inherited)]))
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
