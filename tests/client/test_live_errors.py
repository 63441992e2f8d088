"""Error mapping with the real service's answers: status, code, request id, run id."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

import pytest

from core.client import (
    AuthenticationError,
    BadRequestError,
    Client,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    UnexpectedRedirectError,
    ValidationError,
)
from tests.support.client import NAMESPACE, OTHER_NAMESPACE, FaultInjector, Service, make_draft
from tests.support.loopback import serving


def test_401_for_unknown_and_missing_keys(service: Service) -> None:
    with (
        service.client("sk_000000000000_notarealkeynotarealkey") as bad,
        pytest.raises(AuthenticationError) as err,
    ):
        bad.get_model(f"{NAMESPACE}.anything")
    assert (err.value.status, err.value.code) == (401, "unauthorized")
    with service.client("") as anonymous:
        assert anonymous.health().status == "ok"  # health needs no key
        with pytest.raises(AuthenticationError):
            next(anonymous.list_models())


def test_403_scope_and_namespace(service: Service) -> None:
    with service.client("scorer") as scorer, pytest.raises(PermissionDeniedError) as err:
        scorer.create_model(service.handle("byscorer"))
    assert (err.value.status, err.value.code) == (403, "forbidden")
    with service.client("outsider") as outsider, pytest.raises(PermissionDeniedError):
        next(outsider.list_models(namespace=NAMESPACE))
    with service.client("outsider") as outsider:
        assert outsider.create_model(f"{OTHER_NAMESPACE}.mine").namespace == OTHER_NAMESPACE


def test_404_unknown_and_unreadable_look_the_same(client: Client, service: Service) -> None:
    handle = service.handle("private")
    client.create_model(handle)
    with pytest.raises(NotFoundError) as missing:
        client.get_model(f"{NAMESPACE}.does-not-exist")
    with service.client("outsider") as outsider, pytest.raises(NotFoundError) as hidden:
        outsider.get_model(handle)
    assert missing.value.code == hidden.value.code == "model_not_found"
    with pytest.raises(NotFoundError) as trait:
        client.update_trait(handle, "nope", name="x")
    assert trait.value.code == "trait_not_found"


def test_409_code_retryable_run_id(client: Client, service: Service, idle_service: Service) -> None:
    handle = service.handle("taken")
    client.create_model(handle)
    with pytest.raises(ConflictError) as taken:
        client.create_model(handle)
    assert (taken.value.code, taken.value.retryable, taken.value.run_id) == ("handle_taken", False, None)

    with idle_service.client() as idle:
        busy = make_draft(idle, idle_service.handle("busy"))
        run = idle.train(busy)
        with pytest.raises(ConflictError) as err:
            idle.delete_model(busy)
        assert (err.value.code, err.value.retryable, err.value.run_id) == ("model_busy", True, run.run_id)


def test_422_details_and_codes(client: Client, service: Service) -> None:
    with pytest.raises(ValidationError) as bad_handle:
        client.create_model("Not A Handle")
    assert bad_handle.value.status == 422 and bad_handle.value.details
    handle = service.handle("v422")
    client.create_model(handle)
    with pytest.raises(ValidationError) as state:
        client.update_model(handle, state="ready")
    assert state.value.code == "state_not_patchable"
    with pytest.raises(ValidationError) as unknown:
        client.update_model(handle, colour="blue")
    assert unknown.value.code == "unknown_field"
    with pytest.raises(ValidationError) as no_traits:
        client.train(handle)
    assert no_traits.value.code == "no_traits"


def test_400_invalid_cursor(client: Client) -> None:
    with pytest.raises(BadRequestError) as err:
        client.list_models_page(namespace=NAMESPACE, cursor="forged")
    assert (err.value.status, err.value.code) == (400, "invalid_cursor")


def test_request_id_is_the_one_sent(service: Service, faults: FaultInjector) -> None:
    with service.client(transport=faults) as c, pytest.raises(NotFoundError) as err:
        c.get_model(f"{NAMESPACE}.ghost")
    (sent,) = faults.seen
    assert err.value.request_id == sent.headers["X-Request-Id"]
    assert err.value.request_id.startswith("req_") and err.value.request_id in str(err.value)


def test_409_codes_from_model_states(client: Client, service: Service) -> None:
    draft = make_draft(client, service.handle("untrained"))
    with pytest.raises(ConflictError) as no_version:
        client.score(draft, "hello")
    assert no_version.value.code == "no_active_version"
    with pytest.raises(ConflictError) as no_tag:
        client.tag_version(draft, "prod")
    assert no_tag.value.code == "no_active_version"

    zdr = make_draft(client, service.handle("zdr"))
    client.update_model(zdr, zero_data_retention=True)
    assert client.get_model(zdr).sample_count == 0  # turning it on purged the samples
    client.add_samples(
        zdr,
        [
            {"trait": "formality", "text": t, "quality": q}
            for t, q in (("Dear Sir, kindly respond.", 1.0), ("hey lol", 0.0))
        ],
    )
    client.wait(zdr, client.train(zdr, effort="low").run_id, timeout=60)
    with pytest.raises(ConflictError) as zdr_err:
        client.score(zdr, "Dear Sir", feedback={"formality": 1.0})
    assert zdr_err.value.code == "zero_data_retention"

    client.delete_model(draft)
    with pytest.raises(ConflictError) as archived:
        client.update_model(draft, description="too late")
    assert archived.value.code == "model_archived"


@contextmanager
def redirecting_server() -> Iterator[str]:
    """A loopback HTTP server that answers every request with a 307, as a misconfigured proxy would."""

    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            self.send_response(307)
            self.send_header("Location", "http://127.0.0.1:9/elsewhere")
            self.send_header("X-Request-Id", "req_proxy")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with serving(Redirect) as url:
        yield url


def test_empty_names_refused_and_a_redirect_is_never_a_result(client: Client, service: Service) -> None:
    draft = make_draft(client, service.handle("emptytag"))
    for blank in ("", "  "):
        with pytest.raises(ValueError, match="tag name is empty"):
            client.tag_version(draft, blank)
        with pytest.raises(ValueError, match="tag name is empty"):
            client.untag_version(draft, blank)
    with pytest.raises(ValueError, match="is empty"):
        client.get_model("")
    # The service answers a trailing slash with 404 (no redirect); a proxy in front of it may still redirect.
    # A real loopback HTTP server plays that proxy: the client raises instead of reading a 307 as the answer.
    with pytest.raises(NotFoundError):
        client.request("POST", f"/models/{draft}/versions/")
    with (
        redirecting_server() as url,
        Client(url, "sk_test", retries=0) as proxied,
        pytest.raises(UnexpectedRedirectError) as err,
    ):
        proxied.request("POST", f"/models/{draft}/versions/")
    assert "instead of a result" in err.value.message and err.value.request_id
