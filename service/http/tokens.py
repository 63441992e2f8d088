"""Who a bearer credential is: an API key, or (with an identity provider configured) a person's ID token.

One place for both, so the guard (before the body is read) and the routes it does not cover answer alike:
401 `unauthorized` for anything not valid, in the one envelope.
"""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError, OperationalError

from service.context import Context
from service.errors import ApiError, is_storage_full
from service.http.oidc import OidcVerifier, ProviderUnavailable, TokenRejected, looks_like_jwt
from service.http.signins import is_new, refused, signed_in
from service.store.api_keys import Principal, authenticate
from service.store.db import transaction
from service.store.people import (
    NoAnnotatorName,
    find_person,
    identity_of,
    needs_record,
    person_principal,
    record_person,
)
from service.store.schema import utcnow
from service.store.sessions import SIGNED_OUT, SessionRules, admit, check, issued_at, only_seen_due

NO_KEY = "Send an API key as 'Authorization: Bearer <key>'."
BAD_KEY = "The API key is not valid."
CHALLENGE = {"WWW-Authenticate": "Bearer"}
#: The one route a signed-in person who belongs to no namespace may call: it says who they are.
MEMBERLESS_PATHS = frozenset({"/v1/keys/current", "/v1/keys/current/sign-out"})


def unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, headers=CHALLENGE)


def identify(ctx: Context, verifier: OidcVerifier | None, credential: str, source: str = "") -> Principal:
    """The caller `credential` names; ApiError 401 (invalid), 403 (a token without a usable name) or 503
    (the identity provider cannot be reached to check a token). `source`: the client's address, which the
    audit log records for sign-ins and refused attempts."""
    if verifier is not None and looks_like_jwt(credential):
        return _person(ctx, verifier, credential, source)
    with ctx.reads() as session:
        found = authenticate(session, credential)
    if found is None:
        raise unauthorized(BAD_KEY)
    return found


def _person(ctx: Context, verifier: OidcVerifier, token: str, source: str) -> Principal:
    settings = ctx.settings
    rules = SessionRules(settings.session_idle_s, settings.session_max_s)
    try:
        claims = verifier.verify(token)
    except TokenRejected as exc:
        refused(ctx, verifier.refusals, source, str(exc), None)
        raise unauthorized(str(exc)) from None
    except ProviderUnavailable as exc:
        raise ApiError(503, "identity_provider_unavailable", str(exc), retryable=True) from None
    who = identity_of(verifier.issuer, claims, settings.oidc_emails_verified)
    issued, now = issued_at(claims["iat"]), utcnow()
    seen_only: Principal | None = None  # admitted already: only the minute's last-seen is due
    with ctx.reads() as session:
        row = find_person(session, who)
        if row is not None:
            why, write = check(row, issued, now, rules)
            if why is not None:
                refused(ctx, verifier.refusals, source, why, who)
                raise unauthorized(why)
            if not needs_record(session, row, who) and not is_new(row, issued):
                if not write:
                    return person_principal(session, row, who)
                if only_seen_due(row, now, rules):
                    seen_only = person_principal(session, row, who)
    # A sign-in (a first, or a newer token), a new email or name, a membership to bind, or the minute's
    # last-seen: written once (a concurrent first request may win an insert: the second attempt then finds
    # its row).
    for attempt in (1, 2):
        try:
            with transaction(ctx.sessions) as session:
                row = record_person(session, who)
                why = admit(row, issued, now, rules)
                principal = None if why else person_principal(session, row, who)
                if principal is not None and is_new(row, issued):
                    signed_in(session, row, principal, issued, source)
            break
        except NoAnnotatorName as exc:
            refused(ctx, verifier.refusals, source, str(exc), who)
            raise ApiError(403, "forbidden", str(exc)) from None
        except IntegrityError:
            if attempt == 2:
                raise
        except OperationalError as exc:
            # A full disk fails writes, not a signed-in person's reads: the last-seen stamp waits for space.
            if seen_only is None or not is_storage_full(exc):
                raise
            return seen_only
    if principal is None:
        refused(ctx, verifier.refusals, source, why or SIGNED_OUT, who)
        raise unauthorized(why or SIGNED_OUT)
    return principal


def memberless(who: Principal, path: str) -> ApiError | None:
    """A signed-in person with no role in any namespace (never added, or removed): 403 on all but
    `GET /keys/current`, so the workbench can say who they are and whom to ask."""
    if who.is_person and not who.roles and path not in MEMBERLESS_PATHS:
        return ApiError(
            403,
            "forbidden",
            f"You are signed in as {who.annotator}, who belongs to no namespace here: ask an owner of your "
            "team's namespace to add you.",
        )
    return None
