"""The Google API Discovery document of `commentanalyzer v1alpha1`, as this server answers it.

Google's published clients (google-api-python-client's `discovery.build`, Node's `googleapis.discoverAPI`)
fetch this document first and build `comments.analyze` / `comments.suggestscore` from it, so it must
describe exactly the paths, methods and bodies of `service/routes/perspective.py`. Written from Perspective's
public API reference and Google's Discovery format reference (docs/perspective.md).
"""

from __future__ import annotations

from core.json_types import JsonObject

API = "commentanalyzer"
VERSION = "v1alpha1"


def _string(description: str, **extra: object) -> JsonObject:
    return {"type": "string", "description": description, **extra}


def _map(ref: str, description: str) -> JsonObject:
    return {"type": "object", "description": description, "additionalProperties": {"$ref": ref}}


_TEXT_ENTRY = {
    "id": "TextEntry",
    "type": "object",
    "description": "A piece of text to analyze.",
    "properties": {
        "text": _string("The text: 1 to 20,000 characters."),
        "type": _string(
            "Only PLAIN_TEXT is accepted here.",
            enum=["TEXT_TYPE_UNSPECIFIED", "PLAIN_TEXT", "HTML"],
        ),
    },
}
_CONTEXT = {
    "id": "Context",
    "type": "object",
    "description": "Text around the comment. Accepted and not used by this server.",
    "properties": {
        "entries": {"type": "array", "items": {"$ref": "TextEntry"}},
        "articleAndParentComment": {"$ref": "ArticleAndParentComment"},
    },
}
_ARTICLE = {
    "id": "ArticleAndParentComment",
    "type": "object",
    "description": "The article and the comment replied to. Accepted and not used by this server.",
    "properties": {"article": {"$ref": "TextEntry"}, "parentComment": {"$ref": "TextEntry"}},
}
_SCORE = {
    "id": "Score",
    "type": "object",
    "description": "A score: a calibrated probability.",
    "properties": {
        "value": {"type": "number", "format": "float", "description": "0 to 1."},
        "type": _string("Always PROBABILITY.", enum=["SCORE_TYPE_UNSPECIFIED", "PROBABILITY"]),
    },
}
_SPAN_SCORE = {
    "id": "SpanScore",
    "type": "object",
    "description": "The score of one sentence of the comment, scored on its own.",
    "properties": {
        "begin": {
            "type": "integer",
            "format": "int32",
            "description": "Start of the sentence in comment.text, in UTF-16 code units (as JavaScript "
            "indexes strings); `end` is exclusive.",
        },
        "end": {"type": "integer", "format": "int32", "description": "End (exclusive), UTF-16 code units."},
        "score": {"$ref": "Score"},
    },
}
_ATTRIBUTE_SCORES = {
    "id": "AttributeScores",
    "type": "object",
    "description": "One attribute's scores.",
    "properties": {
        "summaryScore": {"$ref": "Score"},
        "spanScores": {"type": "array", "items": {"$ref": "SpanScore"}},
    },
}
_ATTRIBUTE_PARAMETERS = {
    "id": "AttributeParameters",
    "type": "object",
    "description": "Options of one requested attribute.",
    "properties": {
        "scoreType": _string("Only PROBABILITY.", enum=["SCORE_TYPE_UNSPECIFIED", "PROBABILITY"]),
        "scoreThreshold": {
            "type": "number",
            "format": "float",
            "description": "Scores below this (0 to 1) are left out of the response.",
        },
    },
}
_MODEL = _string("Addition of this server: the handle of the model that answers (else the server's default).")
_ANALYZE_REQUEST = {
    "id": "AnalyzeCommentRequest",
    "type": "object",
    "description": "Scores of a comment for the requested attributes (traits of one model).",
    "properties": {
        "comment": {"$ref": "TextEntry"},
        "context": {"$ref": "Context"},
        "requestedAttributes": _map(
            "AttributeParameters", "Attribute (a trait; `NAME@3`, `NAME@tag` pin a version) to options."
        ),
        "spanAnnotations": {"type": "boolean", "description": "Add a score per sentence."},
        "languages": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Echoed; a language the model's embedder does not read is refused "
            "(LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE).",
        },
        "doNotStore": {"type": "boolean", "description": "Do not cache the comment's embedding."},
        "clientToken": _string("Echoed in the response."),
        "sessionId": _string("Accepted and ignored."),
        "communityId": _string("Accepted and ignored."),
        "model": _MODEL,
    },
}
_ANALYZE_RESPONSE = {
    "id": "AnalyzeCommentResponse",
    "type": "object",
    "description": "The comment's scores.",
    "properties": {
        "attributeScores": _map("AttributeScores", "Attribute name, as requested, to its scores."),
        "languages": {"type": "array", "items": {"type": "string"}},
        "detectedLanguages": {"type": "array", "items": {"type": "string"}},
        "clientToken": _string("The request's clientToken."),
    },
}
_SUGGEST_REQUEST = {
    "id": "SuggestCommentScoreRequest",
    "type": "object",
    "description": "Scores the caller suggests for a comment: feedback labels for the model.",
    "properties": {
        "comment": {"$ref": "TextEntry"},
        "context": {"$ref": "Context"},
        "attributeScores": _map("AttributeScores", "Attribute name to the suggested summaryScore."),
        "languages": {"type": "array", "items": {"type": "string"}},
        "communityId": _string("Accepted and ignored."),
        "clientToken": _string("Echoed in the response."),
        "sessionId": _string("Accepted and ignored."),
        "model": _MODEL,
    },
}
_SUGGEST_RESPONSE = {
    "id": "SuggestCommentScoreResponse",
    "type": "object",
    "description": "The suggestion was recorded.",
    "properties": {"clientToken": _string("The request's clientToken.")},
}
_SCHEMAS = [
    _TEXT_ENTRY,
    _CONTEXT,
    _ARTICLE,
    _SCORE,
    _SPAN_SCORE,
    _ATTRIBUTE_SCORES,
    _ATTRIBUTE_PARAMETERS,
    _ANALYZE_REQUEST,
    _ANALYZE_RESPONSE,
    _SUGGEST_REQUEST,
    _SUGGEST_RESPONSE,
]


def _method(name: str, request: str, response: str, description: str) -> JsonObject:
    return {
        "id": f"{API}.comments.{name}",
        "path": f"{VERSION}/comments:{name}",
        "flatPath": f"{VERSION}/comments:{name}",
        "httpMethod": "POST",
        "description": description,
        "parameters": {},
        "parameterOrder": [],
        "request": {"$ref": request},
        "response": {"$ref": response},
    }


def discovery_document(root_url: str) -> JsonObject:
    """The document, with `rootUrl` the server's externally visible base (ending in `/`)."""
    root = root_url if root_url.endswith("/") else root_url + "/"
    return {
        "kind": "discovery#restDescription",
        "discoveryVersion": "v1",
        "id": f"{API}:{VERSION}",
        "name": API,
        "version": VERSION,
        "title": "Perspective Comment Analyzer API (Scoring Workbench)",
        "description": "Perspective's AnalyzeComment and SuggestCommentScore, answered by your own model.",
        "documentationLink": "docs/perspective.md",
        "protocol": "rest",
        "rootUrl": root,
        "servicePath": "",
        "baseUrl": root,
        "batchPath": "batch",
        "parameters": {
            "key": {
                "type": "string",
                "location": "query",
                "description": "API key (or send `Authorization: Bearer <key>`).",
            },
            "alt": {
                "type": "string",
                "location": "query",
                "default": "json",
                "enum": ["json"],
                "description": "Response format: JSON only.",
            },
        },
        "schemas": {schema["id"]: schema for schema in _SCHEMAS},
        "resources": {
            "comments": {
                "methods": {
                    "analyze": _method(
                        "analyze",
                        "AnalyzeCommentRequest",
                        "AnalyzeCommentResponse",
                        "Scores a comment for the requested attributes.",
                    ),
                    "suggestscore": _method(
                        "suggestscore",
                        "SuggestCommentScoreRequest",
                        "SuggestCommentScoreResponse",
                        "Records suggested scores for a comment as feedback labels (an authoring key).",
                    ),
                }
            }
        },
    }
