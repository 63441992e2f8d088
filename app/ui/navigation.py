"""The workbench's pages, in one registry that the navigation, every page switch and every page link use.

`st.switch_page` and `st.page_link` find a page by its script's path, and a relative path is read from
app/ (the entry script's folder), not from the project root: a page named any other way than through here
raises StreamlitPageNotFoundError in the browser. So pages are named by key (`PageName`), never by path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, NamedTuple, get_args

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.navigation.page import StreamlitPage

from app.ui.inert import escape_md

PAGES_DIR = Path(__file__).resolve().parents[2] / "pages"  # app/ui/ → the project root

PageName = Literal[
    "models", "traits", "samples", "label", "training", "versions", "score", "demo", "team", "settings"
]


class PageEntry(NamedTuple):
    title: str
    icon: str
    team_only: bool = False  # listed only on a team's workbench (who is in the namespace, with what role)


PAGES: dict[PageName, PageEntry] = {
    "models": PageEntry("Models", ":material/view_list:"),
    "traits": PageEntry("Traits", ":material/tune:"),
    "samples": PageEntry("Samples", ":material/dataset:"),
    "label": PageEntry("Label", ":material/label:"),
    "training": PageEntry("Training", ":material/model_training:"),
    "versions": PageEntry("Versions", ":material/compare_arrows:"),
    "score": PageEntry("Score", ":material/speed:"),
    "demo": PageEntry("Demo", ":material/slideshow:"),
    "team": PageEntry("Team", ":material/group:", team_only=True),
    "settings": PageEntry("Settings", ":material/settings:"),
}
assert set(PAGES) == set(get_args(PageName)), "every page name has its entry"


def script(name: PageName) -> str:
    """The page's script, as an absolute path: the form st.navigation registered it under."""
    return str(PAGES_DIR / f"{name}.py")


def navigation(team: bool) -> list[StreamlitPage]:
    """The pages of the sidebar, in the registry's order; the first is the default."""
    return [
        st.Page(script(name), title=entry.title, icon=entry.icon, default=index == 0)
        for index, (name, entry) in enumerate(PAGES.items())
        if team or not entry.team_only
    ]


def switch_to(name: PageName) -> None:
    """Move to another page of the workbench (ends the current run)."""
    st.switch_page(script(name))


def link_to(name: PageName, label: str, **query: str) -> None:
    """A link to another page; a plain caption where the page runs on its own (no other page to link)."""
    try:
        st.page_link(script(name), label=label, icon=":material/arrow_forward:", query_params=query)
    except StreamlitAPIException:  # `streamlit run pages/x.py` or AppTest of one page
        st.caption(f"{escape_md(label)}: the **{PAGES[name].title}** page.")
