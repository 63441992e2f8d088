"""The Alembic revision builds exactly the schema the ORM declares, and re-running it is a no-op."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.util import CommandError
from sqlalchemy import inspect, text
from sqlalchemy.schema import CreateIndex

from harness.pgcluster import database_url_fixture, selected_backends
from service.store.db import alembic_config, make_engine, migrate
from service.store.schema import Base
from tests.support.service import Svc, check, make_model, running, train_ready

# An empty database (no prepare step), so the migration itself is what builds the schema.
pg_or_sqlite_empty = database_url_fixture(
    backends=selected_backends(default=("sqlite",)), name="pg_or_sqlite_empty"
)


# SQLite's reflection cannot read an expression index: compared below from its SQL instead.
@pytest.mark.filterwarnings("ignore:.*expression-based index:UserWarning")
@pytest.mark.filterwarnings("ignore:.*expression-based index:sqlalchemy.exc.SAWarning")
def test_migration_matches_metadata(pg_or_sqlite_empty: str) -> None:
    engine = make_engine(pg_or_sqlite_empty)
    assert migrate(engine) is True
    assert migrate(engine) is False  # idempotent on start: at head, alembic's upgrade is skipped
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert diff == []
        if engine.dialect.name == "sqlite":
            indexes = "SELECT name, sql FROM sqlite_master WHERE type = 'index'"
            built: dict[str, str] = {name: sql for name, sql in conn.exec_driver_sql(indexes)}
            for table in Base.metadata.sorted_tables:
                for index in table.indexes:
                    declared = str(CreateIndex(index).compile(dialect=engine.dialect))
                    assert " ".join(built[str(index.name)].split()) == " ".join(declared.split())
        if engine.dialect.name == "sqlite":
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    assert set(inspect(engine).get_table_names()) >= {
        "models",
        "traits",
        "samples",
        "versions",
        "tags",
        "runs",
        "api_keys",
        "feedback_labels",
        "alembic_version",
    }
    engine.dispose()


def test_a_service_starts_on_an_up_to_date_database_without_the_upgrade(
    tmp_path: Path, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A start reads the recorded revision and, at head, leaves alembic alone; a revision the code does not
    know (a database migrated by a newer release) still stops the start."""
    with (
        caplog.at_level(logging.INFO, logger="service.db"),
        running(tmp_path, database_url=database_url) as s,
    ):
        check(s.client.get("/v1/health"), 200)
        engine = s.ctx.engine
        assert [r.message for r in caplog.records if r.message.startswith("migrating")] == []
        assert migrate(engine) is False
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = '9999_from_a_newer_release'"))
        with pytest.raises(CommandError, match="9999_from_a_newer_release"):
            migrate(engine)


def test_a_trained_model_keeps_the_embedder_it_was_trained_with_when_the_default_changes(svc: Svc) -> None:
    """Migration 0006: NULL meant "the service's default"; a trained model's NULL becomes the id its active
    version names, so a new default never changes the embedder an existing model retrains with."""
    c, h = svc.client, svc.author
    make_model(c, h, "acme.old-trained")
    train_ready(c, h, "acme.old-trained")
    make_model(c, h, "acme.old-draft")
    trained_with = check(c.get("/v1/models/acme.old-trained/versions/v1", headers=h), 200)["metrics"][
        "embedder"
    ]
    engine = svc.ctx.engine
    with engine.begin() as conn:  # as a model made before per-model embedders: NULL, at revision 0005
        conn.execute(text("UPDATE models SET embedder = NULL WHERE handle LIKE 'acme.old-%'"))
    command.stamp(alembic_config(engine), "0005_thresholds")
    migrate(engine)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT handle, embedder FROM models WHERE handle LIKE 'acme.old-%'")).all()
        pinned = {handle: embedder for handle, embedder in rows}
    assert pinned == {"acme.old-trained": trained_with, "acme.old-draft": None}


@pytest.mark.filterwarnings("ignore:.*expression-based index:sqlalchemy.exc.SAWarning")
def test_source_id_comes_and_goes_with_its_revision(pg_or_sqlite_empty: str) -> None:
    """0012 adds the samples' nullable `source_id` over 0010's schema, and its downgrade takes it away."""
    engine = make_engine(pg_or_sqlite_empty)

    def columns() -> dict[str, bool]:
        return {c["name"]: c["nullable"] for c in inspect(engine).get_columns("samples")}

    def to(revision: str, *, down: bool = False) -> None:
        cfg = alembic_config(engine)
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            (command.downgrade if down else command.upgrade)(cfg, revision)

    to("0010_content_key_indexes")
    assert "source_id" not in columns()
    migrate(engine)
    assert columns()["source_id"] is True
    to("0010_content_key_indexes", down=True)
    assert "source_id" not in columns()
    migrate(engine)
    assert columns()["source_id"] is True
    engine.dispose()


def test_the_upgrade_recounts_each_trait_s_poles_with_a_neutral_middle(svc: Svc) -> None:
    """Migration 0011: counts kept before it put quality 0.5 on the positive pole (10 at 1, 10 at 0 and 4 at
    0.5 said positive 14); the upgrade recounts every trait: 10 positive, 10 negative, 4 neutral."""
    c, h = svc.client, svc.author
    make_model(c, h, "acme.old-counts", with_data=False)
    trait = {"name": "Sentiment", "positive_label": "positive", "negative_label": "negative"}
    check(c.post("/v1/models/acme.old-counts/traits", json={"traits": [trait]}, headers=h), 201)
    rows = [(f"good {i}", 1.0) for i in range(10)] + [(f"bad {i}", 0.0) for i in range(10)]
    rows += [(f"so-so {i}", 0.5) for i in range(4)]
    samples = [{"trait": "sentiment", "text": t, "quality": q} for t, q in rows]
    check(c.post("/v1/models/acme.old-counts/samples", json={"samples": samples}, headers=h), 201)
    engine = svc.ctx.engine
    with engine.begin() as conn:  # as 0010 left them
        conn.execute(text("UPDATE traits SET positive_samples = 14, neutral_samples = 0"))
    cfg = alembic_config(engine)
    command.stamp(cfg, "0010_content_key_indexes")
    command.upgrade(cfg, "0011_neutral_counts")  # the recount alone: the later revisions are applied
    command.stamp(cfg, "head")
    traits = check(c.get("/v1/models/acme.old-counts/traits", headers=h), 200)["traits"]
    fields = ("sample_count", "positive_samples", "negative_samples", "neutral_samples")
    assert [tuple(t[f] for f in fields) for t in traits] == [(24, 10, 10, 4)]


def test_the_upgrade_recounts_poles_with_the_neutral_tolerance(svc: Svc) -> None:
    """Migration 0022: a sample at 0.5000000000000001 (a mean of votes that is mathematically 0.5) was counted
    positive; the upgrade recounts it neutral, as `pole_of` now says."""
    from alembic.script import ScriptDirectory

    c, h = svc.client, svc.author
    make_model(c, h, "acme.near-middle", with_data=False)
    trait = {"name": "Sentiment", "positive_label": "positive", "negative_label": "negative"}
    check(c.post("/v1/models/acme.near-middle/traits", json={"traits": [trait]}, headers=h), 201)
    rows = [("good", 1.0), ("bad", 0.0), ("a mean of votes", 0.5000000000000001), ("typed", 0.5)]
    samples = [{"trait": "sentiment", "text": t, "quality": q} for t, q in rows]
    check(c.post("/v1/models/acme.near-middle/samples", json={"samples": samples}, headers=h), 201)
    engine = svc.ctx.engine
    with engine.begin() as conn:  # as the exact rule counted them
        conn.execute(text("UPDATE traits SET positive_samples = 2, neutral_samples = 1"))
    cfg = alembic_config(engine)
    before = ScriptDirectory.from_config(cfg).get_revision("0022_neutral_tolerance").down_revision
    assert isinstance(before, str)
    command.stamp(cfg, before)
    command.upgrade(cfg, "0022_neutral_tolerance")  # the recount alone
    command.stamp(cfg, "head")
    traits = check(c.get("/v1/models/acme.near-middle/traits", headers=h), 200)["traits"]
    fields = ("sample_count", "positive_samples", "negative_samples", "neutral_samples")
    assert [tuple(t[f] for f in fields) for t in traits] == [(4, 1, 1, 2)]


def test_the_upgrade_merges_an_account_s_two_memberships_of_a_namespace_keeping_the_stronger_role(
    pg_or_sqlite_empty: str,
) -> None:
    """Migration 0031: one person held two memberships of `acme` (by email and by subject): the owner one
    stays, the annotator one goes with a `role_changed` event saying where it was merged; memberships of
    other namespaces and unbound ones stay; then the index refuses a second."""
    engine = make_engine(pg_or_sqlite_empty)
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0030_sample_generator_model")
    now = "2026-11-01 00:00:00"
    with engine.begin() as conn:
        conn.execute(
            text(f"INSERT INTO people (id, issuer, subject, created_at) VALUES (7, 'i', 's7', '{now}')")
        )
        rows = [("acme", "ann@example.com", "annotator", 7), ("acme", "s7", "owner", 7),
                ("lab", "ann@example.com", "reviewer", 7), ("acme", "pat@example.com", "annotator", None),
                ("acme", "pat2@example.com", "annotator", None)]  # fmt: skip
        for ns, member, role, person in rows:
            conn.execute(
                text(
                    "INSERT INTO memberships (namespace, member, role, person_id, created_at, updated_at) "
                    "VALUES (:ns, :m, :r, :p, :now, :now)"
                ),  # fmt: skip
                {"ns": ns, "m": member, "r": role, "p": person, "now": now},
            )
    migrate(engine)
    with engine.begin() as conn:
        left = conn.execute(
            text("SELECT namespace, member, role FROM memberships ORDER BY namespace, member")
        )
        assert [tuple(r) for r in left] == [
            ("acme", "pat2@example.com", "annotator"),
            ("acme", "pat@example.com", "annotator"),
            ("acme", "s7", "owner"),
            ("lab", "ann@example.com", "reviewer"),
        ]
        [(kind, ns, actor, detail)] = conn.execute(
            text("SELECT kind, namespace, actor, detail FROM audit_events")
        )
        assert (kind, ns, actor) == ("role_changed", "acme", "operator")
        assert "merged_into" in str(detail) and "s7" in str(detail)
    with pytest.raises(Exception, match="(?i)unique"), engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO memberships (namespace, member, role, person_id, created_at, updated_at) "
                "VALUES ('lab', 's7', 'owner', 7, :now, :now)"
            ),  # fmt: skip
            {"now": now},
        )
    engine.dispose()
