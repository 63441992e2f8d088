"""Which values interpolated into Markdown that Streamlit renders are not provably inert: the scan
tests/app/test_inert_text.py runs over app/ and pages/.

An f-string's value passed to a rendering call is inert when it is a number with a format spec, went through
`app/ui/inert.py` (`escape_md`, `quote`, `code`, `html_text`, `guidelines_md`), or is built only from such
parts, string literals and module constants: a local variable every assignment of which is (its `+=` and, for
a list, `.append` too), a conditional or `+` of them, a `join` of them, a string method on one, or a call of a
function of app/ or pages/ every `return` of which is. A parameter, an attribute of an object the service
sent, or anything else is not: it goes through `escape_md` or `code` first."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Streamlit calls whose text (first argument, `label`, `help` or `body`) renders as Markdown.
RENDERING = {
    "markdown", "write", "caption", "error", "info", "warning", "success", "toast", "button", "subheader",
    "header", "title", "expander", "checkbox", "radio", "selectbox", "multiselect", "toggle", "slider",
    "select_slider", "text_input", "text_area", "number_input", "download_button", "popover", "tabs",
    "page_link", "metric", "form_submit_button", "link_button", "status", "segmented_control", "pills",
}  # fmt: skip
INERT_CALLS = {"escape_md", "quote", "code", "html_text", "link_target", "guidelines_md"}
# String methods that keep an inert string inert (their arguments must be inert too).
STR_METHODS = {"replace", "upper", "lower", "capitalize", "strip", "removesuffix", "removeprefix", "title"}
Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `scope` outside the functions and classes nested in it."""
    for child in ast.iter_child_nodes(scope):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _own_nodes(child)


def _is_constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id.isupper()


@dataclass
class Module:
    path: Path
    tree: ast.Module
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node

    def scope_of(self, node: ast.AST) -> Scope:
        while not isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            node = self.parents[node]
        return node

    def enclosing(self, scope: Scope) -> Scope | None:
        return None if isinstance(scope, ast.Module) else self.scope_of(self.parents[scope])


@dataclass
class Scan:
    modules: dict[Path, Module] = field(default_factory=dict)
    visiting: set[tuple[int, str]] = field(default_factory=set)

    def module(self, path: Path, source: str | None = None) -> Module:
        if path not in self.modules:
            text = path.read_text() if source is None else source
            self.modules[path] = Module(path, ast.parse(text, str(path)))
        return self.modules[path]

    # -- where a value is made unsafe ------------------------------------------------------------------------

    def unsafe(self, path: Path, source: str | None = None) -> list[str]:
        """`file:line: {value}` for every value interpolated into rendered Markdown that is not inert."""
        mod = self.module(path, source)
        found = []
        for call in ast.walk(mod.tree):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            if call.func.attr not in RENDERING:
                continue
            shown = list(call.args) if call.func.attr == "write" else call.args[:1]
            shown += [k.value for k in call.keywords if k.arg in ("label", "help", "body")]
            for arg in shown:
                found += [f"{path.name}:{call.lineno}: {{{v}}}" for v in self._interpolated(mod, arg)]
        return found

    def _interpolated(self, mod: Module, node: ast.AST) -> Iterator[str]:
        if isinstance(node, ast.FormattedValue):
            if node.format_spec is None and not self.inert(mod, node.value):
                yield ast.unparse(node.value)
            return
        if self._inert_call(node):
            return
        for child in ast.iter_child_nodes(node):
            yield from self._interpolated(mod, child)

    # -- what is inert ---------------------------------------------------------------------------------------

    @staticmethod
    def _inert_call(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in INERT_CALLS

    def inert(self, mod: Module, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant) or _is_constant(node) or self._inert_call(node):
            return True
        if isinstance(node, ast.JoinedStr):
            return all(
                v.format_spec is not None or self.inert(mod, v.value)
                for v in node.values
                if isinstance(v, ast.FormattedValue)
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.inert(mod, node.left) and self.inert(mod, node.right)
        if isinstance(node, ast.IfExp):
            return self.inert(mod, node.body) and self.inert(mod, node.orelse)
        if isinstance(node, ast.BoolOp):
            return all(self.inert(mod, v) for v in node.values)
        if isinstance(node, ast.Tuple | ast.List):
            return all(self.inert(mod, e) for e in node.elts)
        if isinstance(node, ast.Attribute | ast.Subscript):
            root: ast.expr = node
            while isinstance(root, ast.Attribute | ast.Subscript):
                root = root.value
            if _is_constant(root):  # a part of a module constant
                return True
            return isinstance(node, ast.Subscript) and self._inert_mapping(mod, node.value)
        if isinstance(node, ast.Name):
            return self._inert_name(mod, node)
        if isinstance(node, ast.Call):
            return self._inert_result(mod, node)
        return False

    def _inert_items(self, mod: Module, node: ast.expr) -> bool:
        """Every item of an iterable is inert."""
        if isinstance(node, ast.GeneratorExp | ast.ListComp):
            return self.inert(mod, node.elt)
        if isinstance(node, ast.Tuple | ast.List):
            return all(self.inert(mod, e) for e in node.elts)
        if isinstance(node, ast.Name):
            return self._bindings_inert(mod, node, items=True)
        return False

    def _inert_mapping(self, mod: Module, node: ast.expr) -> bool:
        """Every value of a local dict is inert."""
        if isinstance(node, ast.DictComp):
            return self.inert(mod, node.value)
        if isinstance(node, ast.Dict):
            return all(self.inert(mod, v) for v in node.values)
        if isinstance(node, ast.Name):
            return self._bindings_inert(mod, node, mapping=True)
        return False

    def _inert_result(self, mod: Module, call: ast.Call) -> bool:
        func = call.func
        args = [*call.args, *(k.value for k in call.keywords)]
        if isinstance(func, ast.Attribute):
            if func.attr == "join":
                return self.inert(mod, func.value) and len(args) == 1 and self._inert_items(mod, args[0])
            if func.attr in STR_METHODS:
                return self.inert(mod, func.value) and all(self.inert(mod, a) for a in args)
            if func.attr == "get" and _is_constant(func.value):  # CONSTANT.get(key, default)
                return all(self.inert(mod, a) for a in args[1:])
            return False
        if isinstance(func, ast.Name):
            found = self._function(mod, func)
            if found is None:
                return False
            where, fn = found
            key = (id(fn), "return")
            if key in self.visiting:
                return True
            self.visiting.add(key)
            try:
                returns = [n for n in _own_nodes(fn) if isinstance(n, ast.Return)]
                return all(r.value is None or self.inert(where, r.value) for r in returns)
            finally:
                self.visiting.discard(key)
        return False

    def _function(self, mod: Module, name: ast.Name) -> tuple[Module, ast.FunctionDef] | None:
        """The definition `name` calls: in this file's scopes, or imported from app/ or pages/."""
        scope: Scope | None = mod.scope_of(name)
        while scope is not None:
            for node in _own_nodes(scope):
                if isinstance(node, ast.FunctionDef) and node.name == name.id:
                    return mod, node
            scope = mod.enclosing(scope)
        for node in mod.tree.body:
            if not (isinstance(node, ast.ImportFrom) and node.module):
                continue
            if node.module.split(".")[0] not in ("app", "pages"):
                continue
            for alias in node.names:
                if (alias.asname or alias.name) == name.id:
                    other = self.module(ROOT / (node.module.replace(".", "/") + ".py"))
                    for top in other.tree.body:
                        if isinstance(top, ast.FunctionDef) and top.name == alias.name:
                            return other, top
        return None

    def _inert_name(self, mod: Module, name: ast.Name) -> bool:
        return self._bindings_inert(mod, name)

    def _bindings_inert(
        self, mod: Module, name: ast.Name, items: bool = False, mapping: bool = False
    ) -> bool:
        """Every binding of `name` in the innermost scope that binds it is inert (as a value, its items or
        its values); False when no scope binds it or a parameter, import or loop does."""
        scope: Scope | None = mod.scope_of(name)
        while scope is not None:
            values = self._bound(scope, name.id)
            if values is not None:
                break
            scope = mod.enclosing(scope)
        else:
            return False
        if values is None:
            return False
        key = (id(scope), f"{name.id}:{items}:{mapping}")
        if key in self.visiting:
            return True
        self.visiting.add(key)
        try:
            check = self._inert_items if items else self._inert_mapping if mapping else self.inert
            return all(v is not None and check(mod, v) for v in values) and (
                not items or all(self.inert(mod, a) for a in self._appended(scope, name.id))
            )
        finally:
            self.visiting.discard(key)

    @staticmethod
    def _bound(scope: Scope, name: str) -> list[ast.expr | None] | None:
        """The values `name` is bound to in `scope` (None for a binding of unknown value), or None when
        `scope` does not bind it."""
        values: list[ast.expr | None] = []
        if not isinstance(scope, ast.Module):
            a = scope.args
            if name in {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x}:
                return [None]
        for node in _own_nodes(scope):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id == name:
                        values.append(node.value)
                    elif isinstance(target, ast.Tuple) and any(
                        isinstance(e, ast.Name) and e.id == name for e in target.elts
                    ):
                        values.append(node.value)  # inert only if all of it is (a tuple of literals)
            elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
                target = node.target
                if isinstance(target, ast.Name) and target.id == name:
                    values.append(node.value)
            elif name in _bound_unknown(node):
                values.append(None)
        return values or None

    @staticmethod
    def _appended(scope: Scope, name: str) -> list[ast.expr]:
        return [
            arg
            for node in _own_nodes(scope)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "append"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
            for arg in node.args
        ]


def _bound_unknown(node: ast.AST) -> set[str]:
    """The names `node` binds to values the scan does not follow: loop, comprehension and `with` targets,
    caught exceptions, imports, functions and classes."""
    targets: list[ast.AST] = []
    if isinstance(node, ast.For | ast.comprehension):
        targets = [node.target]
    elif isinstance(node, ast.With):
        targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
    elif isinstance(node, ast.ExceptHandler) and node.name:
        return {node.name}
    elif isinstance(node, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def unsafe_values(paths: list[Path]) -> list[str]:
    scan = Scan()
    return [f"{p.relative_to(ROOT)}:{line.split(':', 1)[1]}" for p in paths for line in scan.unsafe(p)]
