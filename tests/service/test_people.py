"""People sign in through the team's identity provider (a real OpenID Connect provider on loopback): their ID
tokens are accepted beside API keys, carry the role their membership gives, and owners manage who is in a
namespace (API and CLI). docs/api.md, "People"."""

from __future__ import annotations

import base64
import json
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from core.contract import MAX_REFUSED_SIGN_INS_PER_SOURCE
from service.__main__ import main as service_main
from service.http.signins import RefusalCap
from service.store.audit import OPERATOR
from service.store.db import make_engine, make_session_factory, transaction
from service.store.people import set_member
from service.store.schema import Membership, Person
from tests.support.idp import CLIENT_ID, Idp, running_idp
from tests.support.service import Svc, auth, check, error_code, make_model, running

PEOPLE = "/v1/namespaces/{ns}/people"


@pytest.fixture(scope="module")
def idp() -> Iterator[Idp]:
    with running_idp() as provider:
        yield provider


@pytest.fixture
def team(tmp_path: Path, database_url: str, idp: Idp) -> Iterator[Svc]:
    """The service configured with the provider: the workbench's client id is the tokens' audience."""
    with running(tmp_path, database_url=database_url, oidc_issuer=idp.issuer, oidc_audience=CLIENT_ID) as svc:
        yield svc


def team_key_name(svc: Svc) -> str:
    return str(check(svc.client.get("/v1/keys/current", headers=svc.author), 200)["name"])


def person(idp: Idp, sub: str, **claims: object) -> dict[str, str]:
    """`sub` signed in, with a verified email `<sub>@example.com` unless `claims` say otherwise."""
    return auth(idp.token(sub, **{"email": f"{sub}@example.com", "email_verified": True, "name": sub.title(),
                                  **claims}))  # fmt: skip


def add(svc: Svc, ns: str, member: str, role: str, by: dict[str, str] | None = None) -> dict[str, object]:
    url = f"{PEOPLE.format(ns=ns)}/{member}"
    return check(svc.client.put(url, json={"role": role}, headers=by or svc.author), 200)


def test_a_member_s_token_is_accepted_and_carries_their_role(team: Svc, idp: Idp) -> None:
    add(team, "acme", "Bob@Example.com", "annotator")  # an email is stored lowercased
    add(team, "lab", "bob@example.com", "owner")
    bob = person(idp, "bob")
    me = check(team.client.get("/v1/keys/current", headers=bob), 200)
    assert me["kind"] == "person" and me["scope"] == "authoring"
    assert (me["name"], me["email"], me["display_name"]) == ("bob@example.com", "bob@example.com", "Bob")
    assert me["namespaces"] == ["acme", "lab"]
    assert me["roles"] == {"acme": "annotator", "lab": "owner"}
    # An annotator may not manage; an owner may: the role is the membership's, per namespace.
    make_model(team.client, team.author, "acme.shared", with_data=False)
    refused = team.client.patch("/v1/models/acme.shared", json={"description": "x"}, headers=bob)
    assert error_code(refused, 403) == "forbidden" and "annotator" in refused.json()["error"]["message"]
    check(team.client.post("/v1/models", json={"handle": "lab.bobs"}, headers=bob), 201)
    check(team.client.patch("/v1/models/lab.bobs", json={"description": "x"}, headers=bob), 200)
    # A model of a namespace they are not in does not exist for them.
    make_model(team.client, team.other, "other.hidden", with_data=False)
    error_code(team.client.get("/v1/models/other.hidden", headers=bob), 404)
    # A key's own answer says what it is too.
    key = check(team.client.get("/v1/keys/current", headers=team.author), 200)
    assert key["kind"] == "key" and key["roles"] == {"acme": "owner", "lab": "owner"}


def test_a_person_is_recorded_once_and_a_membership_may_name_their_subject(team: Svc, idp: Idp) -> None:
    add(team, "acme", "dana-sub", "reviewer")  # a subject: no email needed to add someone
    dana = person(idp, "dana-sub")
    for _ in range(3):
        me = check(team.client.get("/v1/keys/current", headers=dana), 200)
    assert me["roles"] == {"acme": "reviewer"} and me["name"] == "dana-sub@example.com"
    with team.ctx.reads() as s:
        assert s.scalar(select(func.count()).select_from(Person)) == 1
    listed = check(team.client.get(PEOPLE.format(ns="acme"), headers=team.author), 200)["items"]
    assert listed == [
        {
            "namespace": "acme",
            "member": "dana-sub",
            "role": "reviewer",
            "email": "dana-sub@example.com",
            "display_name": "Dana-Sub",
            "signed_in": True,
        }
    ]


def test_someone_with_no_membership_may_only_ask_who_they_are(team: Svc, idp: Idp) -> None:
    eve = person(idp, "eve")
    me = check(team.client.get("/v1/keys/current", headers=eve), 200)
    assert me["kind"] == "person" and me["namespaces"] == [] and me["roles"] == {}
    for method, path in (("GET", "/v1/models"), ("GET", "/v1/models/public.x"), ("POST", "/v1/models")):
        resp = team.client.request(method, path, json={"handle": "acme.x"}, headers=eve)
        assert error_code(resp, 403) == "forbidden" and "eve@example.com" in resp.json()["error"]["message"]


def _forge(token: str, **changes: object) -> str:
    """The token with its claims changed and its signature kept: a forgery."""
    head, body, sig = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims.update(changes)
    raw = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{head}.{raw}.{sig}"


def test_expired_forged_and_foreign_tokens_are_401_in_the_envelope(team: Svc, idp: Idp) -> None:
    add(team, "acme", "frank@example.com", "owner")
    good = person(idp, "frank")["Authorization"].removeprefix("Bearer ")
    check(team.client.get("/v1/keys/current", headers=auth(good)), 200)
    idp.set_user("frank", email="frank@example.com", exp=1_000_000_000)  # the provider signs it expired
    expired = idp.id_token("frank")
    person(idp, "frank")  # back to a fresh token's claims
    foreign = idp.id_token("frank", client_id="another-app")  # signed for another audience
    cases = {
        "expired": expired,
        "forged": _forge(good, email="owner@example.com", sub="someone-else"),
        "foreign": foreign,
        "unsigned": _forge(good).rsplit(".", 1)[0] + ".",
        "garbage": "a.b.c",
    }
    for name, token in cases.items():
        resp = team.client.get("/v1/keys/current", headers=auth(token))
        assert error_code(resp, 401) == "unauthorized", name
        assert resp.headers["WWW-Authenticate"] == "Bearer", name
    message = team.client.get("/v1/keys/current", headers=auth(expired)).json()["error"]["message"]
    assert "expired" in message
    # Checked before the body is read, as a key is: a broken body still gets 401.
    resp = team.client.post("/v1/models", content=b"{not json", headers=auth(expired))
    assert error_code(resp, 401) == "unauthorized"


def test_tokens_are_refused_where_no_provider_is_configured(svc: Svc, idp: Idp) -> None:
    token = person(idp, "gina")
    assert error_code(svc.client.get("/v1/keys/current", headers=token), 401) == "unauthorized"


def test_a_removed_person_is_refused_and_their_labels_stay(team: Svc, idp: Idp) -> None:
    add(team, "acme", "hal@example.com", "owner")
    hal = person(idp, "hal")
    make_model(team.client, hal, "acme.hals")  # hal's samples carry his email
    check(team.client.delete(f"{PEOPLE.format(ns='acme')}/hal@example.com", headers=team.author), 200)
    assert error_code(team.client.get("/v1/models/acme.hals", headers=hal), 403) == "forbidden"
    page = check(team.client.get("/v1/models/acme.hals/samples", headers=team.author), 200)
    assert page["items"] and {s["annotator"] for s in page["items"]} == {"hal@example.com"}
    # Still known (the labels name him), and no key may post as him.
    body = {
        "samples": [{"trait": "formality", "text": "As hal.", "quality": 1, "annotator": "hal@example.com"}]
    }
    resp = team.client.post("/v1/models/acme.hals/samples", json=body, headers=team.author)
    assert error_code(resp, 422) == "annotator_reserved"


def test_people_endpoints_are_for_owners_and_keep_an_owner(team: Svc, idp: Idp) -> None:
    ns = PEOPLE.format(ns="acme")
    add(team, "acme", "ivy@example.com", "owner")
    add(team, "acme", "jon@example.com", "reviewer")
    ivy, jon = person(idp, "ivy"), person(idp, "jon")
    # A reviewer may not manage people; an owner person may, as an owner key may.
    assert error_code(team.client.get(ns, headers=jon), 403) == "forbidden"
    resp = team.client.put(f"{ns}/kim@example.com", json={"role": "annotator"}, headers=jon)
    assert error_code(resp, 403) == "forbidden"
    check(team.client.put(f"{ns}/kim@example.com", json={"role": "annotator"}, headers=ivy), 200)
    # Every change of a role is in the namespace's audit log, with who made it (beside the sign-ins).
    log = check(team.client.get("/v1/namespaces/acme/audit", headers=ivy), 200)["items"]
    log = [e for e in log if e["kind"] == "role_changed"]
    assert [(e["kind"], e["actor"], e["handle"], e["detail"]) for e in log[:3]] == [
        (
            "role_changed",
            "ivy@example.com",
            None,
            {
                "member": "kim@example.com",
                "from": None,
                "to": "annotator",
                # A person's action names their account, not only the email it showed.
                "account": {"issuer": idp.issuer, "subject": "ivy", "email": "ivy@example.com"},
            },
        ),
        (
            "role_changed",
            team_key_name(team),
            None,
            {"member": "jon@example.com", "from": None, "to": "reviewer"},
        ),
        (
            "role_changed",
            team_key_name(team),
            None,
            {"member": "ivy@example.com", "from": None, "to": "owner"},
        ),
    ]
    assert error_code(team.client.get(ns, headers=team.scorer), 403) == "forbidden"
    assert error_code(team.client.get(PEOPLE.format(ns="lab"), headers=ivy), 403) == "forbidden"
    # Bad input: nothing stored.
    before = check(team.client.get(ns, headers=ivy), 200)
    for member, body, code in (
        ("kim@example.com", {"role": "boss"}, "validation_error"),
        ("kim@example.com", {"role": "owner", "extra": 1}, "unknown_field"),
        ("kim@example.com", {}, "validation_error"),
        ("bad member!", {"role": "owner"}, "validation_error"),
    ):
        assert error_code(team.client.put(f"{ns}/{member}", json=body, headers=ivy), 422) == code
    error_code(team.client.put("/v1/namespaces/Not_A_Ns/people/x@example.com", json={"role": "owner"},
                               headers=team.author), 422)  # fmt: skip
    assert error_code(team.client.delete(f"{ns}/nobody@example.com", headers=ivy), 404) == "member_not_found"
    assert check(team.client.get(ns, headers=ivy), 200) == before


def test_a_namespace_never_loses_its_last_owner(tmp_path: Path, database_url: str, idp: Idp) -> None:
    with running(tmp_path, database_url=database_url, oidc_issuer=idp.issuer, oidc_audience=CLIENT_ID) as t:
        # `team` has no key: its only owners are people.
        with transaction(t.ctx.sessions) as s:
            set_member(s, "team", "lee@example.com", "owner", OPERATOR)
        lee = person(idp, "lee")
        ns = PEOPLE.format(ns="team")
        resp = t.client.put(f"{ns}/lee@example.com", json={"role": "reviewer"}, headers=lee)
        assert error_code(resp, 409) == "last_owner"
        assert error_code(t.client.delete(f"{ns}/lee@example.com", headers=lee), 409) == "last_owner"
        # With a second owner, the first may step down (and then may no longer manage).
        add(t, "team", "max@example.com", "owner", by=lee)
        check(t.client.put(f"{ns}/lee@example.com", json={"role": "annotator"}, headers=lee), 200)
        assert error_code(t.client.get(ns, headers=lee), 403) == "forbidden"
        mx = person(idp, "max")
        assert error_code(t.client.delete(f"{ns}/max@example.com", headers=mx), 409) == "last_owner"
        roles = {m["member"]: m["role"] for m in check(t.client.get(ns, headers=mx), 200)["items"]}
        assert roles == {"lee@example.com": "annotator", "max@example.com": "owner"}


def test_the_people_command_adds_lists_and_removes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(*args: str) -> tuple[int, str, str]:
        try:
            code = service_main(["people", *args, "--data-dir", str(tmp_path)])
        except SystemExit as exit:  # argparse refuses a bad argument by exiting, as the command would
            code = int(exit.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    code, out, err = run("add", "--namespace", "acme", "--email", "Nia@Example.com", "--role", "owner")
    assert code == 0, err
    assert "nia@example.com" in out and "owner" in out
    assert run("add", "--namespace", "acme", "--email", "oz@example.com", "--role", "reviewer")[0] == 0
    code, out, _ = run("list", "--namespace", "acme")
    assert code == 0 and out.split("\n")[:2] == [
        "acme\tnia@example.com\towner",
        "acme\toz@example.com\treviewer",
    ]
    code, _, err = run("add", "--namespace", "acme", "--email", "oz@example.com", "--role", "boss")
    assert code == 2 and "boss" in err
    code, _, err = run("remove", "--namespace", "acme", "--email", "nia@example.com")
    assert code == 2 and "no owner" in err
    assert run("remove", "--namespace", "acme", "--email", "oz@example.com")[0] == 0
    code, _, err = run("remove", "--namespace", "acme", "--email", "oz@example.com")
    assert code == 2 and "not a member" in err
    engine = make_engine(f"sqlite:///{tmp_path / 'scoring.sqlite'}")
    with make_session_factory(engine)() as s:
        assert [(m.member, m.role) for m in s.scalars(select(Membership))] == [("nia@example.com", "owner")]
    engine.dispose()


# -- sign-ins and refused attempts in the audit log ----------------------------------------------------------


def service_stream(svc: Svc, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """The service-wide audit stream, newest first, as the operator reads it (`python -m service audit`)."""
    capsys.readouterr()
    args = ["audit", "--database-url", svc.ctx.settings.database_url, "--limit", "500"]
    assert service_main([*args, "--data-dir", str(svc.ctx.settings.data_dir)]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def audit_of(svc: Svc, ns: str, kind: str) -> list[dict[str, Any]]:
    items = check(svc.client.get(f"/v1/namespaces/{ns}/audit", headers=svc.author), 200)["items"]
    return [e for e in items if e["kind"] == kind]


def test_a_sign_in_is_recorded_once_per_token_in_each_namespace_of_the_person(
    team: Svc, idp: Idp, capsys: pytest.CaptureFixture[str]
) -> None:
    add(team, "acme", "carol@example.com", "annotator")
    add(team, "lab", "carol@example.com", "owner")
    now = int(time.time())
    first = person(idp, "carol", iat=now - 120)
    for _ in range(3):  # three requests of one token: one sign-in
        check(team.client.get("/v1/keys/current", headers=first), 200)
    check(team.client.get("/v1/models", headers=first), 200)
    [event] = audit_of(team, "acme", "signed_in")
    assert event["actor"] == "carol@example.com" and event["handle"] is None
    assert event["detail"]["account"] == {
        "issuer": idp.issuer,
        "subject": "carol",
        "email": "carol@example.com",
    }
    assert event["detail"]["source"] and event["detail"]["issued_at"].startswith(
        datetime.fromtimestamp(now - 120, UTC).isoformat()[:19]
    )
    assert len(audit_of(team, "lab", "signed_in")) == 1  # her other namespace's owners see it too
    second = person(idp, "carol", iat=now - 60)  # a new sign-in: a newer token
    check(team.client.get("/v1/keys/current", headers=second), 200)
    check(team.client.get("/v1/keys/current", headers=first), 200)  # the older one again: nothing new
    assert len(audit_of(team, "acme", "signed_in")) == 2 and len(audit_of(team, "lab", "signed_in")) == 2
    # Someone in no namespace signs in too: the service-wide stream has it.
    check(team.client.get("/v1/keys/current", headers=person(idp, "nomad")), 200)
    [alone] = [e for e in service_stream(team, capsys) if e["kind"] == "signed_in"]
    assert alone["actor"] == "nomad@example.com" and alone["namespace"] == "*"


def test_refused_sign_ins_are_recorded_in_the_service_stream(
    team: Svc, idp: Idp, capsys: pytest.CaptureFixture[str]
) -> None:
    """A forged, an expired and another client's token, a signed-out one and an account without a verified
    email: each is refused and recorded once, with its reason (the account when the token verified)."""
    add(team, "acme", "dan@example.com", "owner")
    good = person(idp, "dan")
    check(team.client.get("/v1/keys/current", headers=good), 200)
    token = good["Authorization"].removeprefix("Bearer ")
    idp.set_user("dan", email="dan@example.com", exp=1_000_000_000)
    expired = idp.id_token("dan")
    person(idp, "dan")  # back to a fresh token's claims
    foreign = idp.id_token("dan", client_id="another-app")
    unverified = person(idp, "ursula", email="ursula@example.com", email_verified=False)
    for bad in (auth(_forge(token, sub="mallory")), auth(expired), auth(foreign)):
        assert error_code(team.client.get("/v1/keys/current", headers=bad), 401) == "unauthorized"
    assert error_code(team.client.get("/v1/keys/current", headers=unverified), 403) == "forbidden"
    check(team.client.post("/v1/keys/current/sign-out", headers=good), 200)
    assert error_code(team.client.get("/v1/keys/current", headers=good), 401) == "unauthorized"
    refused = [e for e in service_stream(team, capsys) if e["kind"] == "sign_in_refused"][::-1]
    reasons = [e["detail"]["reason"] for e in refused]
    assert len(refused) == 5, reasons
    assert "signature" in reasons[0] and "expired" in reasons[1] and "not for this service" in reasons[2]
    assert [e["actor"] for e in refused] == ["unverified"] * 3 + ["ursula", "dan@example.com"]
    assert refused[4]["detail"]["account"]["subject"] == "dan" and "sign" in reasons[4].lower()
    assert all(e["detail"]["source"] for e in refused)
    assert audit_of(team, "acme", "sign_in_refused") == []  # no namespace's owner reads another's attempts


def test_a_flood_of_forged_tokens_records_a_few_a_minute(
    team: Svc, idp: Idp, capsys: pytest.CaptureFixture[str]
) -> None:
    token = person(idp, "erin")["Authorization"].removeprefix("Bearer ")
    for i in range(40):
        forged = auth(_forge(token, sub=f"attacker-{i}"))
        assert error_code(team.client.get("/v1/keys/current", headers=forged), 401) == "unauthorized"
    recorded = [e for e in service_stream(team, capsys) if e["kind"] == "sign_in_refused"]
    # One source: at most its share a minute (two minutes, should the test straddle one).
    assert MAX_REFUSED_SIGN_INS_PER_SOURCE <= len(recorded) <= 2 * MAX_REFUSED_SIGN_INS_PER_SOURCE


ATTEMPTS = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.floats(0, 40)), max_size=80)


@given(ATTEMPTS)
@settings(max_examples=60, deadline=None)
def test_the_cap_records_at_most_its_share_a_minute_and_counts_every_other(
    attempts: list[tuple[str, float]],
) -> None:
    cap, now = RefusalCap(per_source=3, total=5), 0.0
    per_minute: Counter[tuple[int, str]] = Counter()
    reported = 0
    for source, step in attempts:
        now += step
        before = cap.admit(source, now)
        if before is not None:
            per_minute[int(now // 60), source] += 1
            reported += before + 1
    for minute in {m for m, _ in per_minute}:
        mine = {s: n for (m, s), n in per_minute.items() if m == minute}
        assert max(mine.values()) <= 3 and sum(mine.values()) <= 5
    # Every attempt is either recorded, reported by a later recorded one, or still counted.
    assert reported + sum(cap._unrecorded.values()) == len(attempts)


def test_a_renamed_account_is_still_reported_as_who_it_is_here(team: Svc, idp: Idp) -> None:
    """The provider's account of `rena` later carries another person's address: GET /keys/current reports the
    identity stored here (the name her labels carry), never the address a later token shows."""
    add(team, "acme", "rena@example.com", "annotator")
    first = check(team.client.get("/v1/keys/current", headers=person(idp, "rena")), 200)
    assert (first["name"], first["email"], first["actions"]) == (
        "rena@example.com",
        "rena@example.com",
        ["label"],
    )
    renamed = person(idp, "rena", email="someone.else@example.com")
    me = check(team.client.get("/v1/keys/current", headers=renamed), 200)
    assert (me["name"], me["email"]) == ("rena@example.com", "rena@example.com")
