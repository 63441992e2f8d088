"""Only a layer's config module reads the environment (`core/config.py`, `app/config.py`, the service's
`Settings`), so docs/settings.md, rendered from them, names every variable the code reads.

A read is `os.getenv`, `os.environ.get`, `os.environ[...]`, `os.environ` passed or bound anywhere,
`environ` or `getenv` imported from `os`. Two uses are writes, not reads, and pass: `**os.environ` unpacked
into a dict display (a child process's environment: the parent passes its own on without looking at a
value), and a statement that only sets or drops variables for the libraries of this process
(`os.environ.setdefault(…)`, `os.environ[k] = v`, `del os.environ[k]`, `os.environ.update(…)`,
`os.environ.pop(…)`) whose value is unused.
"""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
CONFIG = {"core/config.py", "app/config.py", "service/config/settings.py"}
LAYERS = ("core", "service", "app", "pages")
WRITES = {"setdefault", "update", "pop"}
OS_READS = {"environ", "environb", "getenv", "getenvb"}


def reads(source: str) -> list[int]:
    """The lines of `source` that read the environment."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [node.lineno for alias in node.names if alias.name in OS_READS]
        if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
            continue
        if node.value.id != "os":
            continue
        if node.attr in OS_READS - {"environ"} or (node.attr == "environ" and not _write(node, parents)):
            found.append(node.lineno)
    return found


def _write(environ: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(environ)
    if isinstance(parent, ast.Dict):  # {**os.environ, …}: a child's environment
        unpacked = zip(parent.keys, parent.values, strict=True)
        return any(key is None and value is environ for key, value in unpacked)
    if isinstance(parent, ast.Subscript):  # os.environ[k] = v, del os.environ[k]
        return isinstance(parent.ctx, ast.Store | ast.Del)
    if isinstance(parent, ast.Attribute) and parent.attr in WRITES:  # a statement: its value unused
        call = parents.get(parent)
        return isinstance(call, ast.Call) and isinstance(parents.get(call), ast.Expr)
    return False


def test_only_config_modules_read_the_environment() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for layer in LAYERS
        for path in sorted((ROOT / layer).rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in CONFIG
        for line in reads(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, (
        "read the environment through the layer's config module (core/config.py, app/config.py, the "
        f"service's Settings), which docs/settings.md is rendered from: {offenders}"
    )


def test_the_config_modules_are_there() -> None:
    assert all((ROOT / path).is_file() for path in CONFIG)


READS = [
    "os.environ.get({name!r})",
    "os.getenv({name!r}, 'x')",
    "os.environ[{name!r}]",
    "f(os.environ)",
    "x = os.environ",
    "x = os.environ.setdefault({name!r}, '1')",
    "x = os.environ.pop({name!r})",
    "{name!r} in os.environ",
]
WRITES_ONLY = [
    "env = {{**os.environ, {name!r}: '1'}}",
    "os.environ.setdefault({name!r}, '1')",
    "os.environ[{name!r}] = '1'",
    "del os.environ[{name!r}]",
    "os.environ.update({{{name!r}: '1'}})",
]
NAMES = st.from_regex(r"[A-Z][A-Z0-9_]{0,20}", fullmatch=True)


@settings(max_examples=30, deadline=None)
@given(name=NAMES, read=st.sampled_from(READS), write=st.sampled_from(WRITES_ONLY), at=st.integers(0, 3))
def test_reads_are_told_from_writes(name: str, read: str, write: str, at: int) -> None:
    """Wherever a read sits among writes, it is found on its line, and the writes are not."""
    lines = ["import os", *[write.format(name=name)] * 3]
    lines.insert(1 + at, read.format(name=name))
    assert reads("\n".join(lines)) == [2 + at]
    assert reads("from os import environ") == [1] and reads("from os import getenv as g") == [1]
