"""What the environment configures in the workbench, read here and nowhere else in `app` and `pages`: its own
variables beside `core`'s (the service to use, the local service's home), which it extends. docs/settings.md
lists them, rendered from this class."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field

from core.config import CoreSettings, from_environ
from core.contract import AUTO_EMBEDDER


class WorkbenchSettings(CoreSettings):
    """The workbench's variables; `SCORING_API_URL` and `SCORING_API_KEY` name a remote service (both set,
    outside team mode), `SCORING_DATA_DIR` the embedded one's home."""

    team: bool = Field(
        False,
        description="`1`: team mode, one workbench server for a team against the service at "
        "`SCORING_API_URL`; each browser signs in with its own key (`SCORING_API_KEY` is never used).",
    )
    namespace: str = Field(
        "",
        description="The working namespace among the remote key's; against a service without "
        "`GET /keys/current`, the namespaces (comma-separated) used as they are, else `default`.",
    )
    embedder: str = Field(
        AUTO_EMBEDDER,
        description="The embedded service's embedder for new models (`auto`: each training keeps the "
        "embedder that serves the model best); the local engine embeds a model's texts with that model's "
        "embedder ([embedders.md](embedders.md)).",
    )
    demo: bool = Field(
        True, description="`0`: do not load the demo models on the embedded service's first start."
    )
    public_url: str | None = Field(
        None,
        description="The workbench's public address (`https://workbench.example.com`): the Demo page's share "
        "links use it (the Settings page can set it per session).",
    )
    oidc_issuer: str | None = Field(
        None,
        description="Team mode: people sign in through this identity provider instead of with keys "
        "(with `SCORING_OIDC_CLIENT_ID` and `SCORING_OIDC_CLIENT_SECRET`).",
    )
    oidc_client_id: str | None = Field(None, description="The workbench's client id at the provider.")
    oidc_client_secret: str | None = Field(None, description="The workbench's client secret at the provider.")
    workbench_url: str | None = Field(
        None,
        description="With sign-in: the workbench's public address, to which the provider redirects "
        "(`<it>/oauth2callback`); unset: `http://localhost:<port>`.",
    )
    oidc_cookie_secret: str | None = Field(
        None,
        description="With sign-in: the identity cookie's secret; unset: a random one kept in the data "
        "directory. Workbench servers behind one address need the same one.",
    )
    oidc_provider_name: str = Field(
        "your team's sign-in", description="With sign-in: the provider's name on the sign-in page."
    )

    @property
    def local_data_dir(self) -> str | None:
        """The embedded service's data directory as `core.start_local_service` takes it (None: its own)."""
        return str(self.data_dir) if self.data_dir else None


def workbench_settings(environ: Mapping[str, str] | None = None) -> WorkbenchSettings:
    """The workbench's settings from `environ` (a test's), else from the process's environment, read at each
    call: the launcher and the tests set variables between two."""
    return from_environ(WorkbenchSettings, environ)
