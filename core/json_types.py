"""JSON objects whose values the code does not fix: a snapshot, a version's metrics and parameters, a build's
manifest, a request or response body read or built whole, a JSON column. Where a shape is known it has a type
of its own (a pydantic model, a TypedDict, a dataclass); this is what is left.

Its values are `Any`, not pydantic's `JsonValue`: what JSON holds is known only where each field is read, and
the reader says it there (``float(metrics["roc_auc"])``). This is the one boundary where core and the service
leave a type open, said once here.
"""

from __future__ import annotations

from typing import Any, TypeAlias

# A plain alias, not a `type` statement: pydantic inlines it in the OpenAPI schemas, where a TypeAliasType
# would become a named schema of its own.
JsonObject: TypeAlias = dict[str, Any]  # noqa: UP040
