"""Rating scales: how a trait's owner has people label it (its two poles, or a scale of points), and the one
rule turning a person's label into a quality.

Point k of an N-point scale is quality (k-1)/(N-1) (`core.contract.scale_quality`): every count, soft label,
training and ceiling works on qualities as for poles, and each stored label keeps the point its quality lies
on (`service.store.samples.label_point`), which the agreement's ordinal alpha and the pages read.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.contract import scale_point, scale_quality
from core.json_types import JsonObject
from service.errors import ApiError
from service.schemas.traits import ScaleIn, ScaleOut
from service.store.samples import scale_points
from service.store.schema import Trait


def stored_scale(scale: ScaleIn, negative_label: str, positive_label: str) -> JsonObject:
    """The scale as `Trait.scale` keeps it; unnamed points read as the poles' labels at the ends and their
    numbers between."""
    names = scale.names or [negative_label, *map(str, range(2, scale.points)), positive_label]
    return {"points": scale.points, "names": list(names), "unsure": scale.unsure}


def scale_out(trait: Trait) -> ScaleOut | None:
    return ScaleOut.model_validate(trait.scale) if scale_points(trait.scale) is not None else None


def label_quality(trait: Trait, quality: float | None, point: int | None, loc: Sequence[str]) -> float:
    """The quality of a person's label of `trait`, a `quality` for a pole trait and a `point` for a scaled
    one: 422 for the other kind, a point off the scale, or a point and a quality that disagree."""
    points = scale_points(trait.scale)
    where = [*loc[:-1], "point"]
    if point is not None and points is None:
        raise _refused(
            "not_a_scale",
            f"Trait {trait.key!r} is labelled by its poles, not on a scale: send a quality, not a point.",
            where,
        )
    if points is None:
        assert quality is not None  # the schema asks for one of the two
        return quality
    if point is None:  # a pole's quality would pass for the end points unnoticed: a person names a point
        raise _refused(
            "point_required",
            f"Trait {trait.key!r} is rated on a {points}-point scale: send a point 1-{points}, "
            "not a quality.",
            where,
        )
    if not 1 <= point <= points:
        raise _refused(
            "point_out_of_scale",
            f"Trait {trait.key!r} is rated on a {points}-point scale: point {point} is not one of "
            f"1-{points}.",
            where,
        )
    given = scale_quality(point, points)
    if quality is not None and scale_point(quality, points) != point:
        raise _refused(
            "point_quality_mismatch",
            f"Point {point} of trait {trait.key!r} is quality {given:g}, not {quality:g}: send one of "
            "the two.",
            where,
        )
    return given


def _refused(code: str, message: str, loc: Sequence[str]) -> ApiError:
    return ApiError(422, code, message, details=[{"loc": list(loc), "msg": message, "type": code}])
