"""Versions: list pages, vN/tag addressing, tag rules (and handles: whole strings, ASCII digits), snapshot
scoping, auto-prune policy."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select, update

from service.store.db import transaction
from service.store.schema import Model, Tag, Version
from tests.support.service import Svc, check, error_code, make_model, train_ready


def nos(svc: Svc, handle: str) -> list[int]:
    page = check(
        svc.client.get(f"/v1/models/{handle}/versions", params={"limit": 250}, headers=svc.author), 200
    )
    return [v["version_no"] for v in page["items"]]


def test_tags_addressing_and_snapshot(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.ver")
    assert error_code(c.post("/v1/models/acme.ver/versions/prod", headers=h), 409) == "no_active_version"
    train_ready(c, h, "acme.ver")
    assert check(c.post("/v1/models/acme.ver/versions/prod", headers=h), 200) == {
        "handle": "acme.ver",
        "tag": "prod",
        "version_no": 1,
    }
    for bad in ("v3", "v10", "-x", "a" * 65, "has space"):
        assert error_code(c.post(f"/v1/models/acme.ver/versions/{bad}", headers=h), 422) == "invalid_tag"
    train_ready(c, h, "acme.ver", reoptimize_params=True)
    # The tag still points at v1; the active version is v2 without tags.
    model = check(c.get("/v1/models/acme.ver", headers=h), 200)
    assert model["version_no"] == 2 and model["version_tags"] == []
    by_tag = check(c.get("/v1/models/acme.ver/versions/prod", headers=h), 200)
    assert by_tag["version_no"] == 1 and by_tag["tags"] == ["prod"]
    assert by_tag == check(c.get("/v1/models/acme.ver/versions/v1", headers=h), 200)
    assert "formality" in str(by_tag["snapshot"]) and isinstance(by_tag["snapshot"], dict)
    # Re-using a tag moves the pointer to the active version.
    assert check(c.post("/v1/models/acme.ver/versions/prod", headers=h), 200)["version_no"] == 2
    check(c.post("/v1/models/acme.ver/versions/stable.1", headers=h), 200)
    assert check(c.get("/v1/models/acme.ver", headers=h), 200)["version_tags"] == ["prod", "stable.1"]
    # Every response lists a version's tags in the same (code point) order, whatever the database's collation.
    check(c.post("/v1/models/acme.ver/versions/Zeta", headers=h), 200)
    in_order = ["Zeta", "prod", "stable.1"]
    assert check(c.get("/v1/models/acme.ver", headers=h), 200)["version_tags"] == in_order
    assert (
        check(c.get("/v1/models", params={"namespace": "acme"}, headers=h), 200)["items"][0]["version_tags"]
        == in_order
    )
    assert check(c.get("/v1/models/acme.ver/versions/v2", headers=h), 200)["tags"] == in_order
    scored = check(c.post("/v1/models/acme.ver/score", json={"content": "Kind regards"}, headers=h), 200)
    assert scored["version_tags"] == in_order
    check(c.delete("/v1/models/acme.ver/versions/Zeta", headers=h), 200)
    assert error_code(c.get("/v1/models/acme.ver/versions/v9", headers=h), 404) == "version_not_found"
    assert error_code(c.get("/v1/models/acme.ver/versions/nope", headers=h), 404) == "version_not_found"
    # Scoring keys: the snapshot is absent (not null); lists never carry it.
    scored = check(c.get("/v1/models/acme.ver/versions/prod", headers=svc.scorer), 200)
    assert "snapshot" not in scored and scored["version_no"] == 2
    assert all(
        "snapshot" not in v for v in check(c.get("/v1/models/acme.ver/versions", headers=h), 200)["items"]
    )
    # Untag.
    assert check(c.delete("/v1/models/acme.ver/versions/prod", headers=h), 200) == {
        "handle": "acme.ver",
        "tag": "prod",
        "deleted": True,
    }
    assert check(c.delete("/v1/models/acme.ver/versions/prod", headers=h), 200)["deleted"] is False
    assert error_code(c.get("/v1/models/acme.ver/versions/prod", headers=h), 404) == "version_not_found"
    assert error_code(c.post("/v1/models/acme.ver/versions/prod", headers=svc.scorer), 403) == "forbidden"


def test_a_tag_can_name_any_version(svc: Svc) -> None:
    """Addition: `{"version": ref}` tags that version instead of the active one."""
    c, h = svc.client, svc.author
    make_model(c, h, "acme.anyver")
    train_ready(c, h, "acme.anyver")
    train_ready(c, h, "acme.anyver", reoptimize_params=True)  # v2 active
    url = "/v1/models/acme.anyver/versions"
    assert check(c.post(f"{url}/good", json={"version": "v1"}, headers=h), 200)["version_no"] == 1
    assert check(c.get(f"{url}/good", headers=h), 200)["version_no"] == 1
    assert check(c.get("/v1/models/acme.anyver", headers=h), 200)["version_tags"] == []  # v2 has none
    assert check(c.post(f"{url}/also", json={"version": "good"}, headers=h), 200)["version_no"] == 1  # by tag
    assert check(c.post(f"{url}/good", json={"version": "v2"}, headers=h), 200)["version_no"] == 2  # moved
    events = check(c.get("/v1/models/acme.anyver/history", headers=h), 200)["events"]
    kinds = [(e["kind"], e["tag"], e["version_no"]) for e in events]
    assert ("tagged", "good", 2) in kinds and ("tagged", "good", 1) in kinds
    assert check(c.post(f"{url}/active", json={}, headers=h), 200)["version_no"] == 2  # no version: active
    for body, status, code in (
        ({"version": "v9"}, 404, "version_not_found"),
        ({"version": "nope"}, 404, "version_not_found"),
        ({"version": "v" + "9" * 40}, 404, "version_not_found"),
        ({"version": 1}, 422, "validation_error"),  # a reference is a string, as in the path
        ({"version": "x" * 65}, 422, "validation_error"),
        ({"version": "v1", "extra": 1}, 422, "unknown_field"),
    ):
        assert error_code(c.post(f"{url}/bad", json=body, headers=h), status) == code, body
    assert error_code(c.get(f"{url}/bad", headers=h), 404) == "version_not_found"  # nothing stored half


def test_version_pages(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.many")
    train_ready(c, h, "acme.many")
    for _ in range(4):
        train_ready(c, h, "acme.many", reoptimize_params=True)
    walked: list[int] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = check(c.get("/v1/models/acme.many/versions", params=params, headers=h), 200)
        walked += [v["version_no"] for v in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert walked == [5, 4, 3, 2, 1]
    assert error_code(c.get("/v1/models/acme.many/versions", params={"limit": 251}, headers=h), 422) == (
        "validation_error"
    )
    assert error_code(
        c.get("/v1/models/acme.many/versions", params={"cursor": "abc.def"}, headers=h), 400
    ) == ("invalid_cursor")


def test_auto_prune_policy(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.prune")
    check(
        c.patch(
            "/v1/models/acme.prune",
            json={"auto_prune": {"keep_unnamed": 0, "keep_first_of_month": False}},
            headers=h,
        ),
        200,
    )
    train_ready(c, h, "acme.prune")
    check(c.post("/v1/models/acme.prune/versions/prod", headers=h), 200)
    train_ready(c, h, "acme.prune", reoptimize_params=True)
    assert nos(svc, "acme.prune") == [2, 1]  # v1 is tagged, v2 active
    train_ready(c, h, "acme.prune", reoptimize_params=True)
    assert nos(svc, "acme.prune") == [3, 1]  # v2 was unnamed and not active
    assert error_code(c.get("/v1/models/acme.prune/versions/v2", headers=h), 404) == "version_not_found"

    # First of each month is kept: v4 moved into an earlier month survives.
    check(
        c.patch(
            "/v1/models/acme.prune",
            json={"auto_prune": {"keep_unnamed": 0, "keep_first_of_month": True}},
            headers=h,
        ),
        200,
    )
    train_ready(c, h, "acme.prune", reoptimize_params=True)
    assert nos(svc, "acme.prune") == [4, 1]
    with svc.ctx.sessions() as s, s.begin():
        s.execute(
            update(Version).where(Version.version_no == 4).values(created_at=datetime(2020, 5, 9, tzinfo=UTC))
        )
    train_ready(c, h, "acme.prune", reoptimize_params=True)
    assert nos(svc, "acme.prune") == [5, 4, 1]
    train_ready(c, h, "acme.prune", reoptimize_params=True)
    assert nos(svc, "acme.prune") == [6, 4, 1]

    # null clears the override: defaults keep 100 unnamed versions.
    assert (
        check(c.patch("/v1/models/acme.prune", json={"auto_prune": None}, headers=h), 200)["auto_prune"]
        is None
    )
    train_ready(c, h, "acme.prune", reoptimize_params=True)
    assert nos(svc, "acme.prune") == [7, 6, 4, 1]


def test_handles_tags_and_version_refs_match_whole_strings_with_ascii_digits(svc: Svc) -> None:
    c, h = svc.client, svc.author
    for handle in ("acme.tone\n", "acme.tone\r\n", "acme.t\u0661", "acme.tone ", "../acme.tone"):
        assert error_code(c.post("/v1/models", json={"handle": handle}, headers=h), 422) == "validation_error"
    make_model(c, h, "acme.tone")
    train_ready(c, h, "acme.tone")
    for tag in ("prod%0A", "V1", "v2", "V12", ".x", "-x", "pr%C3%B6d", "x" * 65):
        resp = c.post(f"/v1/models/acme.tone/versions/{tag}", headers=h)
        assert error_code(resp, 422) == "invalid_tag", tag
    # `../` in a path never reaches a route with the dots: the path no longer names one.
    assert error_code(c.post("/v1/models/acme.tone/versions/..%2F..", headers=h), 404) == "not_found"
    check(c.post("/v1/models/acme.tone/versions/prod", headers=h), 200)
    assert check(c.get("/v1/models/acme.tone/versions/v1", headers=h), 200)["version_no"] == 1
    for ref in ("v\u0661", "v1%0A", "prod%0A", "V1", "v\uff11"):
        assert (
            error_code(c.get(f"/v1/models/acme.tone/versions/{ref}", headers=h), 404) == "version_not_found"
        )
        resp = c.post("/v1/models/acme.tone/score", json={"content": "hello", "version": ref}, headers=h)
        assert error_code(resp, 404) == "version_not_found", ref
    assert error_code(c.get("/v1/models/acme.tone%0A", headers=h), 404) == "model_not_found"
    with transaction(svc.ctx.reads) as s:
        assert s.scalars(select(Model.handle)).all() == ["acme.tone"]
        assert s.scalars(select(Tag.name)).all() == ["prod"]
