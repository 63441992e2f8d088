"""The interactive API docs (`/v1/docs`), served whole by the service: no CDN, so they work offline.

FastAPI's own page loads Swagger UI's JavaScript, CSS and favicon from a CDN, and without internet it stays
blank. The same files ship in the `fastapi-offline` package (Swagger UI 5, which renders OpenAPI 3.1; the
`swagger-ui-bundle` package is still at 4.x, which does not): the service serves them under
`/v1/docs/assets/` and its page points there. The page and its assets need no key (service/http/guard.py).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request

DOCS_PATH = "/v1/docs"
ASSETS_PATH = f"{DOCS_PATH}/assets"
ASSETS = Path(str(files("fastapi_offline") / "static"))
SWAGGER_JS, SWAGGER_CSS, FAVICON = "swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"
# Swagger UI's default validatorUrl sends the document's URL to an outside validator for a badge.
SWAGGER_PARAMETERS = {"validatorUrl": None}


def install(app: FastAPI) -> None:
    """Serve the docs page at `DOCS_PATH` and Swagger UI's files under `ASSETS_PATH`. The app must be built
    with `docs_url=None` (FastAPI's own page would load them from a CDN)."""
    assert app.docs_url is None and app.openapi_url is not None
    openapi_url = app.openapi_url
    app.mount(ASSETS_PATH, StaticFiles(directory=ASSETS), name="docs-assets")

    async def docs_page(request: Request) -> HTMLResponse:
        root = str(request.scope.get("root_path", "")).rstrip("/")  # behind a proxy's path prefix
        return get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} - API docs",
            swagger_js_url=f"{root}{ASSETS_PATH}/{SWAGGER_JS}",
            swagger_css_url=f"{root}{ASSETS_PATH}/{SWAGGER_CSS}",
            swagger_favicon_url=f"{root}{ASSETS_PATH}/{FAVICON}",
            swagger_ui_parameters=SWAGGER_PARAMETERS,
        )

    app.add_route(DOCS_PATH, docs_page, include_in_schema=False)


# -- what *Try it out* fills in ---------------------------------------------------------------------------

_FORMAL = "Dear Sir or Madam, I am writing to request a copy of the signed agreement."
_CASUAL = "hey, u coming tonight? bring snacks lol"
_TRAIT = {
    "name": "Formality",
    "positive_label": "formal",
    "negative_label": "casual",
    "description": "How formal the register of a support reply is.",
}
_COMMENT = {"text": "Thank you for the quick reply, that solved it."}

#: A realistic body per request schema (by its component's name), shown in the API docs' *Try it out*.
#: Without one, Swagger UI fills every text field from its pattern: random characters.
REQUEST_EXAMPLES: dict[str, object] = {
    "ModelCreate": {"handle": "acme.tone", "description": "Tone of support replies"},
    "ModelPatch": {"description": "Tone of support replies, trained on the 2026 tickets"},
    "TraitsIn": {
        "traits": [
            _TRAIT,
            {
                "name": "Politeness",
                "positive_label": "polite",
                "negative_label": "rude",
                "scale": {"points": 5, "names": ["rude", "curt", "neutral", "courteous", "polite"]},
            },
        ]
    },
    "TraitPatch": {"description": "How formal the register of a support reply is, greeting to sign-off."},
    "TraitPreviewIn": {"trait": _TRAIT, "texts": [_FORMAL, _CASUAL]},
    "SamplesIn": {
        "samples": [
            {"trait": "formality", "text": _FORMAL, "quality": 1.0},
            {"trait": "formality", "text": _CASUAL, "quality": 0.0},
        ]
    },
    "SamplePatch": {"quality": 0.25},
    "TrainIn": {"effort": "low"},
    "DiscoverIn": {"effort": "low"},
    "SynthesizeIn": {"synth_type": "from_traits", "effort": "low"},
    "TagIn": {"version": "v1"},
    "EvalItemsIn": {
        "items": [
            {
                "trait": "formality",
                "text": "We kindly ask you to confirm receipt of this letter.",
                "quality": 1.0,
            },
            {"trait": "formality", "text": "k thx, see ya", "quality": 0.0},
        ]
    },
    "ScoreIn": {"content": _FORMAL},
    "CompareIn": {"a": _FORMAL, "b": _CASUAL},
    "PoolIn": {
        "texts": ["Could you resend the invoice, please?", "nah we good, thanks"],
        "metadata": [{"channel": "email", "ticket": 4471}, {"channel": "chat", "ticket": 4472}],
    },
    "SuggestIn": {"trait": "formality", "k": 10},
    "service__schemas__pool__LabelIn": {"trait": "formality", "quality": 1.0},
    "ThresholdIn": {"target": "precision", "value": 0.9},
    "UnsureIn": {"trait": "formality", "text": "Thanks a bunch, Sir."},
    "CommentIn": {"trait": "formality", "text": "Thanks a bunch, Sir.", "body": "Formal words, casual tone?"},
    "MemberIn": {"role": "annotator"},
    "SettleIn": {"trait": "formality", "text": "Thanks a bunch, Sir.", "quality": 0.0},
    "ReviewIn": {"decision": "reject", "items": [{"kind": "sample", "id": 1}], "comment": "Not formal"},
    "MyLabelPatch": {"quality": 0.0},
    "CorrectIn": {"quality": 0.0, "comment": "Casual: see the guidelines."},
    "GuidelinesIn": {
        "markdown": "# Formality\n\nFormal: a letter's register (greeting, full sentences, sign-off).",
        "note": "Sign-offs count as formal",
    },
    "GuidelinesReadIn": {"version_no": 2},
    "RestoreIn": {"undo": "undo_0123456789abcdef0123456789abcdef"},
    "AssignIn": {"annotator": "pat@example.com", "filter": {"q": "invoice"}, "count": 50},
    "ReassignIn": {"to": "sam@example.com"},
    "TargetIn": {"count": 40, "period": "day"},
    "BulkLabelIn": {"trait": "formality", "quality": 0.0, "ids": [12, 15, 19]},
    "GoldIn": {
        "items": [
            {"trait": "formality", "text": "Please find the signed contract enclosed.", "quality": 1.0},
            {"trait": "formality", "text": "lol ok whatever", "quality": 0.0},
        ]
    },
    "GoldPromoteIn": {"trait": "formality", "count": 20},
    "AnalyzeIn": {"comment": _COMMENT, "requestedAttributes": {"FORMALITY": {}}},
    "SuggestScoreIn": {
        "comment": _COMMENT,
        "attributeScores": {"FORMALITY": {"summaryScore": {"value": 0.8}}},
    },
}
TEXT_EXAMPLE = _FORMAL  # the score route's text/plain body


def add_examples(schema: dict[str, Any]) -> None:  # Any: the OpenAPI document's JSON, walked by hand
    """Give each request body of the document its example (`REQUEST_EXAMPLES`), on the body's media type,
    where Swagger UI's *Try it out* takes it from."""
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            for media, content in (body or {}).get("content", {}).items():
                if media == "text/plain":
                    content["example"] = TEXT_EXAMPLE
                    continue
                found = _component(content.get("schema", {}))
                if found in REQUEST_EXAMPLES:
                    content["example"] = REQUEST_EXAMPLES[found]


def _component(schema: dict[str, Any]) -> str | None:  # Any: as add_examples
    """The component a body's schema names (`$ref`, or the one `$ref` of an optional body's `anyOf`)."""
    refs = [schema.get("$ref")] + [s.get("$ref") for s in schema.get("anyOf", []) if isinstance(s, dict)]
    named = [str(r).rsplit("/", 1)[-1] for r in refs if r]
    return named[0] if len(named) == 1 else None
