"""Test data and helpers shared by the workbench tests."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from core.client import Client
from core.local import LocalService
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "pages"


@contextmanager
def streamlit_app(data_dir: Path, **env: str) -> Iterator[str]:
    """`streamlit run app/main.py` on loopback (hashing embedder, data in `data_dir`, plus `env`): its URL."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if k not in ("SCORING_API_URL", "SCORING_API_KEY")}
    environ.update(SCORING_EMBEDDER="hashing", SCORING_DATA_DIR=str(data_dir), PYTHONPATH=str(ROOT), **env)
    log = open(data_dir / "streamlit.log", "wb")  # noqa: SIM115 - open for the server's lifetime
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"), "--server.port",
           str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]  # fmt: skip
    server = subprocess.Popen(cmd, cwd=ROOT, env=environ, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/_stcore/health", timeout=1).text == "ok":
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            raise RuntimeError((data_dir / "streamlit.log").read_text())
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


FORMAL = [
    "Dear colleague, I would be grateful if you could kindly review the attached document.",
    "We sincerely appreciate your cooperation and remain at your disposal for further questions.",
    "Please find enclosed the requested report; kindly confirm its receipt at your convenience.",
    "I respectfully request your approval of the proposed budget at your earliest convenience.",
    "Thank you for your correspondence; we shall respond formally within five business days.",
    "Kindly note that the meeting has been rescheduled; we regret any inconvenience caused.",
    "It is with great pleasure that we accept your invitation to the annual conference.",
    "We would appreciate it if you could furnish the documentation by the stated deadline.",
    "Please accept our sincere apologies for the delay in processing your application.",
    "I am writing to formally confirm the terms agreed upon during our recent meeting.",
    "Your request has been duly noted and forwarded to the appropriate department.",
    "We remain grateful for your continued support and look forward to our collaboration.",
]
CASUAL = [
    "hey lol that was so fun, see ya later!!",
    "yo whats up, wanna grab pizza tonight?",
    "omg this is awesome haha, love it",
    "nah im good, gonna chill at home tbh",
    "lol no way dude, thats hilarious",
    "sup guys, cant make it today sorry lol",
    "haha yeah totally, lets do it tmrw",
    "ugh so tired, gonna crash now lol",
    "cool cool, catch ya later dude",
    "wow haha thats wild, no kidding",
    "yep sounds good, hit me up later",
    "lmao thats the best thing ever dude",
]
POSITIVE_WORDS = ["wonderful", "great", "excellent", "fantastic", "lovely", "superb"]
NEGATIVE_WORDS = ["terrible", "awful", "horrible", "dreadful", "poor", "bad"]


def formality_samples() -> list[dict[str, Any]]:
    return [{"trait": "formality", "text": t, "quality": 1.0} for t in FORMAL] + [
        {"trait": "formality", "text": t, "quality": 0.0} for t in CASUAL
    ]


def sentiment_samples() -> list[dict[str, Any]]:
    rows = []
    for i, (p, n) in enumerate(zip(POSITIVE_WORDS * 2, NEGATIVE_WORDS * 2, strict=True)):
        rows.append({"trait": "sentiment", "text": f"what a {p} day number {i}, truly {p}", "quality": 1.0})
        rows.append({"trait": "sentiment", "text": f"what a {n} day number {i}, truly {n}", "quality": 0.0})
    return rows


FORMALITY = {"name": "Formality", "positive_label": "formal", "negative_label": "casual"}
SENTIMENT = {"name": "Sentiment", "positive_label": "positive", "negative_label": "negative"}
_names = itertools.count(1)


def new_handle(service: LocalService, stem: str) -> str:
    return f"{service.namespace}.{stem}-{next(_names)}"


def make_draft(client: Client, handle: str, traits: tuple[dict[str, Any], ...] = (FORMALITY,)) -> str:
    client.create_model(handle, description="workbench test model")
    client.add_traits(handle, list(traits))
    rows = formality_samples() if FORMALITY in traits else []
    if SENTIMENT in traits:
        rows += sentiment_samples()
    client.import_samples(handle, rows)
    return handle
