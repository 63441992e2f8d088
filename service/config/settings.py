"""Service settings from environment variables (pydantic-settings), overridable from the CLI."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url

from core.contract import (
    AUTO_EMBEDDER,
    DEFAULT_CLAIM_LEASE_S,
    DEFAULT_CLAIMS_PER_PERSON,
    DEFAULT_HEAVY_PER_CALLER,
    DEFAULT_IMPORT_BURST,
    DEFAULT_IMPORT_RATE_PER_S,
    DEFAULT_LABEL_QUOTA_CHARS,
    DEFAULT_LABEL_QUOTA_ROWS,
    DEFAULT_NAMESPACE_QUOTA_CHARS,
    DEFAULT_RETRAIN_BUFFER,
    DEFAULT_RETRAINS_PER_HOUR,
    DEFAULT_SCORE_BURST,
    DEFAULT_SCORE_CALLER_COST,
    DEFAULT_SCORE_CHARS_BURST,
    DEFAULT_SCORE_CHARS_PER_S,
    DEFAULT_SCORE_RATE_PER_S,
    DEFAULT_SCORE_REQUEST_CHARS,
    DEFAULT_WRITE_BURST,
    DEFAULT_WRITE_RATE_PER_S,
    MAX_GENERATOR_MODEL_CHARS,
)

# A cursor secret shared by a fleet must be random: these are the words example and placeholder values are
# made of (deploy/.env.example's is "change-me-…"), and a short one can be guessed.
PLACEHOLDER_MARKERS = ("change", "replace", "placeholder", "example", "secret", "…", "...")
MIN_CURSOR_SECRET_CHARS = 32


class Settings(BaseSettings):
    """Every setting once: its environment variable (`SCORING_` + the field's name, unless an alias says
    otherwise), its default and why. `from_env` fills in what depends on others (the data directory's
    SQLite file, the database password, the persisted cursor secret) and checks the whole."""

    model_config = SettingsConfigDict(
        env_prefix="SCORING_", env_ignore_empty=True, frozen=True, populate_by_name=True, extra="ignore"
    )

    data_dir: Path = Field(
        Path("./.data"), description="The database (on SQLite), queue, secrets and caches."
    )
    database_url: str = Field(
        "",
        description="SQLAlchemy URL (`postgresql+psycopg2://…` for PostgreSQL); empty: `scoring.sqlite` in "
        "the data dir.",
    )
    database_password: SecretStr | None = Field(
        None,
        description="Set into the database URL, percent-encoded (so `@ / : # ? %` cannot break it); a "
        "password written into the URL itself must be encoded by hand.",
    )
    queue_url: str | None = Field(
        None,
        description="The Huey queue: none = in the database (a SQLite file beside it, or tables on "
        "PostgreSQL); redis://host:port/db = Redis. Runs live in the database either way; the queue only "
        "delivers ids.",
    )
    embedder: str = Field(
        AUTO_EMBEDDER,
        description="The embedder of a new model whose create request names none (a model keeps its own): "
        "`auto` (each training keeps the embedder that serves the model best), a name of "
        "[embedders.md](embedders.md) or a full embedder id.",
    )
    retrain_buffer: int = Field(
        DEFAULT_RETRAIN_BUFFER, description="Score feedback labels a model buffers before retraining."
    )
    claim_lease_s: float = Field(
        DEFAULT_CLAIM_LEASE_S,
        gt=0,
        description="How long a suggestion handed out with `claim` stays its person's before others may "
        "get it (a closed tab's texts come back after this).",
    )
    claims_per_person: int = Field(
        DEFAULT_CLAIMS_PER_PERSON,
        ge=1,
        description="Live claims one person may hold on one trait of a model (a claiming suggestion "
        "hands out no more), so a few people asking for the most cannot hold a team's whole pool.",
    )
    write_rate_per_s: float = Field(
        DEFAULT_WRITE_RATE_PER_S,
        ge=0,
        description="Writes (every POST, PUT, PATCH, DELETE but scoring) a second per key or person and "
        "namespace, after a burst of `write_burst`; past it 429 `rate_limited`. 0: not limited.",
    )
    write_burst: int = Field(DEFAULT_WRITE_BURST, ge=1, description="Writes at once before the rate applies.")
    import_rate_per_s: float = Field(
        DEFAULT_IMPORT_RATE_PER_S,
        ge=0,
        description="Import requests (samples, pool texts, evaluation items) a second per key or person and "
        "namespace, after a burst of `import_burst`, whatever their rows; past it 429 `rate_limited`. "
        "0: not limited.",
    )
    import_burst: int = Field(DEFAULT_IMPORT_BURST, ge=1, description="Import requests at once.")
    score_rate_per_s: float = Field(
        DEFAULT_SCORE_RATE_PER_S,
        ge=0,
        description="Scoring requests a second per key or person and namespace, after a burst of "
        "`score_burst`; past it 429 `rate_limited`. Enforced only while another caller has scoring in "
        "flight: a caller alone is never refused. 0: not limited.",
    )
    score_burst: int = Field(DEFAULT_SCORE_BURST, ge=1, description="Scoring requests at once.")
    score_chars_per_s: float = Field(
        DEFAULT_SCORE_CHARS_PER_S,
        ge=0,
        description="Characters of text a key or person may have scored a second, in all its namespaces, "
        "after a budget of `score_chars_burst`; past it 429 `rate_limited`. 0 (the default): not limited. "
        "An owner's budget for shared deployments that cap what each caller scores: it applies even to a "
        "caller alone, so it is off by default; the fair share (`score_fair_share`) already divides the "
        "cores between callers by what their texts cost and gives a caller alone the whole machine.",
    )
    score_chars_burst: int = Field(
        DEFAULT_SCORE_CHARS_BURST, ge=1, description="Characters of text a key or person may score at once."
    )
    score_request_chars: int = Field(
        DEFAULT_SCORE_REQUEST_CHARS,
        ge=0,
        description="Characters of text one score request may carry in all; past it 413 `payload_too_large`. "
        "0: not limited.",
    )
    score_fair_share: bool = Field(
        True,
        description="Score requests take turns by cost: each piece of a request (about a window of tokens) "
        "waits for its caller's turn, `scoring_threads` pieces at once, callers served in proportion "
        "to their texts' cost (16 tokens a text plus its tokens after the window cut). Work-conserving: a "
        "caller alone is never held back. Off: every piece goes to the embedder at once.",
    )
    score_caller_cost: int = Field(
        DEFAULT_SCORE_CALLER_COST,
        ge=0,
        description="Scoring one caller may have in flight (in the fair share's tokens) while another "
        "caller scores too; a further request is refused 429 `rate_limited` (retryable). A caller alone is "
        "never refused, whatever it sends. 0: no bound.",
    )
    heavy_per_caller: int = Field(
        DEFAULT_HEAVY_PER_CALLER,
        ge=0,
        description="Suggestion, pool and listing requests one caller may have in flight at once while "
        "another caller has such requests too; a further one is refused 429 `rate_limited` (retryable). "
        "A caller alone is never refused. 0: no bound.",
    )
    api_processes: int = Field(
        1,
        ge=1,
        description="API processes serving this database without a Redis queue: each keeps the scoring "
        "limit in its memory and allows its share (the rate and burst / this), so the fleet allows the "
        "configured rate in all. With a Redis queue the limit is counted on Redis and this is not used.",
    )
    retrains_per_hour: int = Field(
        DEFAULT_RETRAINS_PER_HOUR,
        ge=1,
        description="Automatic retrainings a model starts in an hour; past it labels wait in the buffer.",
    )
    label_quota_rows: int = Field(
        DEFAULT_LABEL_QUOTA_ROWS,
        ge=0,
        description="Labels (votes, feedback labels, unsure marks) one person who is not an owner of the "
        "namespace keeps on one model; a request past it is refused with 429 `quota_exceeded` and stores "
        "nothing. 0: no quota.",
    )
    label_quota_chars: int = Field(
        DEFAULT_LABEL_QUOTA_CHARS,
        ge=0,
        description="Characters of text in those labels; past it 413 `quota_exceeded`, nothing stored. "
        "0: no quota.",
    )
    namespace_quota_chars: int = Field(
        DEFAULT_NAMESPACE_QUOTA_CHARS,
        ge=0,
        description="Characters of text a namespace keeps in all its models (samples, feedback labels, pool "
        "texts, evaluation items, unsure marks and comments), whoever writes them; past it 413 "
        "`quota_exceeded`, nothing stored. 0: no quota. It bounds what the machine must serve: embedding "
        "cuts each text to its embedder's window and works in pieces, but a training, an evaluation or a "
        "discovery holds all of a model's texts at once (a byte a character, up to four outside Latin-1): "
        "the default keeps that under ~0.5-2 GB in one worker (docs/benchmarks/memory.md). Raise it with "
        "the workers' memory.",
    )
    quota_measure_interval_s: float = Field(
        300.0,
        gt=0,
        description="How often a namespace's stored text is measured again (between measurements each write "
        "adds what it stores, and deletions count at the next one).",
    )
    cursor_secret: bytes = Field(
        b"",
        description="Signs pagination cursors; empty: a random one kept in the data dir. A fleet's processes "
        "must share one (random, at least 32 characters): a placeholder-looking (`change-me…`) or shorter "
        "one stops the process at start, on PostgreSQL always, on SQLite when `serve` runs no worker.",
    )
    # A run is taken from its worker only once the worker is gone (service/runs/locks.py): its run lock free
    # and, on PostgreSQL (where a dropped connection frees the lock of a process that may live on), its
    # heartbeat older than the timeout too. A late heartbeat alone never re-queues a run. A queued run waiting
    # this long with no message in the queue is enqueued again (its message died with a worker).
    heartbeat_timeout_s: float = Field(
        15.0,
        description="On PostgreSQL a running run whose run lock is free is dead once its heartbeat is this "
        "old (longer than the interval); a queued run this old without a message is enqueued again.",
    )
    heartbeat_interval_s: float = Field(2.0, description="How often a running run beats.")
    recovery_interval_s: float = Field(5.0, description="How often every process sweeps up dead runs.")
    max_attempts: int = Field(3, description="Claims of one run before it fails with `worker_lost`.")
    shutdown_grace_s: float = Field(
        30.0,
        description="On SIGTERM the API gives requests in flight this long to finish (score requests waiting "
        "for a turn answer 503 `shutting_down` at once, those scoring at their next piece; any request "
        "still running at the end is answered 503 `shutting_down`), and a worker finishes its runs this "
        "long, then hands them back; the process exits within this and 10 s.",
    )
    run_worker: bool = Field(
        True, description="Start the in-process worker with the app (off for `serve --no-worker`, `worker`)."
    )
    scoring_threads: int = Field(
        0,
        description="Texts a scoring request encodes at once (one core each); 0 = one per core. With N API "
        "processes on one machine, cores / N keeps them from oversubscribing.",
    )
    lock_timeout_s: float = Field(
        30.0, description="How long a write waits for SQLite's lock before 503 `database_busy`."
    )
    shard_texts: int = Field(
        5_000,
        description="A training of at least twice this many texts embeds them in shards of this many that "
        "every worker claims; 0 = never shard.",
    )
    perspective_model: str | None = Field(
        None,
        description="The model `/v1alpha1/comments:analyze` answers when a request names none "
        "([perspective.md](perspective.md)).",
    )
    public_url: str | None = Field(
        None,
        validation_alias="SCORING_API_PUBLIC_URL",
        description="The externally visible base URL (behind a proxy): the Perspective discovery document's "
        "`rootUrl`; unset: the request's scheme and host.",
    )
    trusted_proxies: str = Field(
        "",
        description="The reverse proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` name the client "
        "(comma-separated IPs or networks, `*` for any; uvicorn's `forwarded_allow_ips`). Empty: a client's "
        "address is the socket's, whatever a header says, so the audit log's sources and the refused "
        "sign-ins' cap per address cannot be forged. Behind nginx: its address (docs/deployment.md).",
    )
    oidc_issuer: str | None = Field(
        None,
        description="The team's OpenID Connect identity provider (its `iss`, e.g. https://id.example.com): "
        "with it, `Authorization: Bearer <ID token>` is accepted beside API keys (docs/api.md, People).",
    )
    oidc_audience: str | None = Field(
        None, description="The `aud` an ID token must carry: the workbench's client id at the provider."
    )
    oidc_leeway_s: int = Field(60, description="Clock skew allowed on an ID token's `exp` and `iat`.")
    oidc_emails_verified: bool = Field(
        False,
        description="The provider verifies every email it sends: a token without `email_verified` counts "
        "as verified (docs/deployment.md, Security model). Off: only `email_verified: true` binds a member.",
    )
    session_idle_s: int = Field(
        8 * 3600, ge=0, description="A person's sign-in ends after this long without a request; 0: never."
    )
    session_max_s: int = Field(
        12 * 3600, ge=0, description="An ID token is refused this long after it was issued; 0: at its `exp`."
    )
    generator_url: str | None = Field(
        None,
        description="An OpenAI-compatible server's base URL (vLLM, Ollama, llama.cpp's server, a hosted API; "
        "e.g. http://127.0.0.1:8000/v1): synthesis asks it for texts instead of picking them from the pool. "
        "None: no generator (the `openai` package is then never imported).",
    )
    generator_model: str | None = Field(
        None,
        max_length=MAX_GENERATOR_MODEL_CHARS,
        description="The model the generator is asked for; stored on the samples it writes.",
    )
    generator_key: SecretStr | None = Field(
        None, description="The generator's API key, if it needs one (never logged nor answered)."
    )
    generator_timeout_s: float = Field(
        60.0, gt=0, description="How long one request to the generator may take."
    )

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:  # Any: each field's own type, validated by pydantic
        """Settings from SCORING_* variables; non-None keyword overrides win."""
        given = cls(**{k: v for k, v in overrides.items() if v is not None})
        data_dir = given.data_dir.resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
        url = given.database_url or f"sqlite:///{data_dir / 'scoring.sqlite'}"
        if given.database_password is not None:
            url = with_password(url, given.database_password.get_secret_value())
        settings = given.model_copy(
            update={
                "data_dir": data_dir,
                "database_url": url,
                "database_password": None,  # now in the URL
                "cursor_secret": given.cursor_secret or _persisted_secret(data_dir),
            }
        )
        settings.check()
        return settings

    def check(self) -> None:
        if self.heartbeat_interval_s >= self.heartbeat_timeout_s:
            raise ValueError("the heartbeat interval must be shorter than the heartbeat timeout")
        if self.queue_url is not None and not self.queue_url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"queue URL {self.queue_url!r}: only Redis URLs (redis://, rediss://, unix://)")
        if self.public_url is not None and not self.public_url.startswith(("http://", "https://")):
            raise ValueError(f"SCORING_API_PUBLIC_URL {self.public_url!r}: an absolute http(s):// URL")
        if (self.oidc_issuer is None) != (self.oidc_audience is None):
            raise ValueError("SCORING_OIDC_ISSUER and SCORING_OIDC_AUDIENCE go together: set both or neither")
        if self.oidc_issuer is not None and not self.oidc_issuer.startswith(("http://", "https://")):
            raise ValueError(f"SCORING_OIDC_ISSUER {self.oidc_issuer!r}: an absolute http(s):// URL")
        if (self.generator_url is None) != (self.generator_model is None):
            raise ValueError(
                "SCORING_GENERATOR_URL and SCORING_GENERATOR_MODEL go together: set both or neither"
            )
        if self.generator_url is not None and not self.generator_url.startswith(("http://", "https://")):
            raise ValueError(f"SCORING_GENERATOR_URL {self.generator_url!r}: an absolute http(s):// URL")
        if self.shard_texts < 0:
            raise ValueError("shard_texts must be 0 (never shard) or more")
        if self.scoring_threads < 0:
            raise ValueError("scoring_threads must be 0 (one per core) or more")
        # One process on SQLite may keep any secret; several processes (PostgreSQL, or API processes without
        # their own worker) sign cursors that each other must accept, so the secret is a shared credential.
        problem = weak_secret(self.cursor_secret.decode(errors="replace"))
        if problem and (not self.is_sqlite or not self.run_worker):
            raise ValueError(
                f"SCORING_CURSOR_SECRET {problem}. Every API process of a PostgreSQL database or of a "
                "fleet signs pagination cursors with it, so it must be random and the same everywhere; "
                "make one with `python -c 'import secrets; print(secrets.token_hex(32))'`"
            )

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def weak_secret(secret: str) -> str | None:
    """Why `secret` is unfit to sign a fleet's cursors, or None."""
    lowered = secret.lower()
    marker = next((m for m in PLACEHOLDER_MARKERS if m in lowered), None)
    if marker is not None:
        return f"looks like a placeholder (it contains {marker!r})"
    if len(secret) < MIN_CURSOR_SECRET_CHARS:
        return f"is {len(secret)} characters long; use at least {MIN_CURSOR_SECRET_CHARS} random ones"
    return None


def with_password(url: str, password: str) -> str:
    """`url` with `password` set, percent-encoded, so `@ / : # ? %` in it cannot break the URL."""
    return make_url(url).set(password=password).render_as_string(hide_password=False)


def _persisted_secret(data_dir: Path) -> bytes:
    """A random cursor secret kept in the data dir so cursors survive restarts."""
    path = data_dir / "cursor_secret"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_text(secrets.token_hex(32))
        os.replace(tmp, path)
    return path.read_text().strip().encode()
