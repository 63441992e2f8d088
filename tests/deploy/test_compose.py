"""deploy/docker-compose.yml, deploy/nginx.conf and the image's build context, checked without a Docker
engine: the compose file's structure and secrets (always), `docker compose config` (or docker-compose) with
deploy/.env.example filled in, and `nginx -t` on the load balancer's config, when those clients are installed
(.ci/run installs them)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import yaml
from sqlalchemy.engine import make_url

from tests.support.deploy import REPO
from tests.support.processes import RunProgram

DEPLOY = REPO / "deploy"
COMPOSE = DEPLOY / "docker-compose.yml"
SECRETS = ("SCORING_DATABASE_PASSWORD", "SCORING_CURSOR_SECRET")
# Settings a deployment may leave empty: sign-in through the team's identity provider, trusted proxies.
OPTIONAL = ("SCORING_OIDC_ISSUER", "SCORING_OIDC_AUDIENCE", "SCORING_TRUSTED_PROXIES")
AWKWARD_PASSWORD = "p@ss/w:rd#?%x $y"


def env_example() -> dict[str, str]:
    """deploy/.env.example's assignments (single-quoted values)."""
    pairs = re.findall(r"^([A-Z_]+)='([^']*)'$", (DEPLOY / ".env.example").read_text(), re.M)
    return dict(pairs)


def compose_command(run_program: RunProgram) -> list[str] | None:
    for cmd in (["docker", "compose"], ["docker-compose"]):
        if shutil.which(cmd[0]) and run_program([*cmd, "version"], check=False).returncode == 0:
            return cmd
    return None


def test_compose_file_takes_every_secret_from_the_env_file() -> None:
    text = COMPOSE.read_text()
    spec = yaml.safe_load(text)
    assert set(spec["services"]) == {"postgres", "migrate", "api", "worker", "lb"}
    # Every secret is required (`:?`): no silent fallback such as `change-me` once deploy/.env is missing;
    # an optional setting falls back to empty (the service ignores an empty variable), never to a value.
    references = re.findall(r"\$\{([A-Z_]+)([^}]*)\}", text)
    assert {name for name, _ in references} == set(SECRETS) | set(OPTIONAL)
    assert all(rest.startswith(":?") for name, rest in references if name in SECRETS), references
    assert all(rest == ":-" for name, rest in references if name in OPTIONAL), references
    assert "change-me" not in text
    # …and every one of them is in the example env file.
    assert set(SECRETS) | set(OPTIONAL) <= set(env_example())
    app_env = spec["services"]["api"]["environment"]
    assert make_url(app_env["SCORING_DATABASE_URL"]).password is None  # the service adds it, encoded
    assert spec["services"]["worker"]["environment"] == app_env == spec["services"]["migrate"]["environment"]
    assert spec["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith(
        "${SCORING_DATABASE_PASSWORD:?"
    )
    # The worker's stop grace covers the service's default 30 s shutdown grace.
    assert int(spec["services"]["worker"]["stop_grace_period"].rstrip("s")) > 30
    assert (REPO / spec["x-service"]["build"]["dockerfile"]).exists()
    assert (DEPLOY / "nginx.conf").exists()


def test_docker_compose_config_resolves_with_the_env_file(tmp_path: Path, run_program: RunProgram) -> None:
    compose = compose_command(run_program)
    if compose is None:  # no client on this machine; .ci/run installs docker-compose
        return
    env_file = tmp_path / ".env"
    secrets = {"SCORING_DATABASE_PASSWORD": AWKWARD_PASSWORD, "SCORING_CURSOR_SECRET": "ab" * 32}
    values = {**env_example(), **secrets}
    env_file.write_text("".join(f"{k}='{v}'\n" for k, v in values.items()))
    base = [*compose, "-f", str(COMPOSE), "--project-directory", str(DEPLOY)]

    resolved = run_program([*base, "--env-file", str(env_file), "config"])
    spec = yaml.safe_load(resolved.stdout.replace("$$", "$"))  # `config` escapes a literal $ as $$
    for name in ("migrate", "api", "worker"):
        env = spec["services"][name]["environment"]
        assert env["SCORING_DATABASE_PASSWORD"] == AWKWARD_PASSWORD
        assert env["SCORING_CURSOR_SECRET"] == "ab" * 32
    assert spec["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"] == AWKWARD_PASSWORD
    # The example leaves sign-in off and trusts no proxy; filled in, they reach every process.
    assert all(
        not spec["services"][name]["environment"].get(var) for var in OPTIONAL for name in ("api", "worker")
    )
    signin = {"SCORING_OIDC_ISSUER": "https://id.example.com", "SCORING_OIDC_AUDIENCE": "workbench",
              "SCORING_TRUSTED_PROXIES": "*"}  # fmt: skip
    env_file.write_text("".join(f"{k}='{v}'\n" for k, v in {**values, **signin}.items()))
    resolved = run_program([*base, "--env-file", str(env_file), "config"])
    spec = yaml.safe_load(resolved.stdout.replace("$$", "$"))
    for name in ("migrate", "api", "worker"):
        assert {k: spec["services"][name]["environment"][k] for k in OPTIONAL} == signin

    # Without the env file (and no .env beside it) compose stops, naming the file, instead of defaulting.
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCORING_")}
    missing = run_program(
        [*compose, "-f", str(COMPOSE), "--project-directory", str(empty), "config"], env=env, check=False
    )
    assert missing.returncode != 0
    assert "set SCORING_DATABASE_PASSWORD in deploy/.env" in missing.stderr + missing.stdout


def test_nginx_resolves_the_api_at_request_time(tmp_path: Path, run_program: RunProgram) -> None:
    conf = (DEPLOY / "nginx.conf").read_text()
    assert re.search(r"^resolver 127\.0\.0\.11 valid=\d+s", conf, re.M)
    assert re.search(r"^\s*proxy_pass \$\w+;", conf, re.M)  # a variable: resolved per request, not at start
    assert not re.search(r"^\s*upstream ", conf, re.M)  # an upstream block resolves once, at start
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:  # .ci/run installs nginx-light
        return
    # `nginx -t` with the file where the image puts it: inside http {}; `api` need not resolve here.
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n    access_log off;\n    include {DEPLOY / 'nginx.conf'};\n}}\n"
    )
    check = run_program([nginx, "-t", "-c", str(tmp_path / "nginx.conf"), "-p", str(tmp_path)])
    assert "syntax is ok" in check.stderr


def test_build_context_sends_only_what_the_image_copies() -> None:
    rules = [
        ln.strip()
        for ln in (REPO / ".dockerignore").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    assert rules[0] == "*"  # everything out, then only the image's sources back in
    included = {r[1:].rstrip("/") for r in rules if r.startswith("!")}
    copied: set[str] = set()
    for line in (DEPLOY / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            copied.update(p.rstrip("/") for p in line.split()[1:-1])
    assert copied == included
    assert not any(name.startswith((".venv", ".data", ".git", ".env")) for name in included)
    assert ".env" in (REPO / ".gitignore").read_text().split()
