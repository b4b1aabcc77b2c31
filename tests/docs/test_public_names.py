"""The public surface is the list in the docs: each name once, at one path, nothing more.

The list is the tables of ``docs/reference/index.md``: the core's modules and those of the
provider distributions of this repository (``providers/*``). Each public module's ``__all__``
is read from its source (so the framework adapters and the providers are checked without
their dependencies); the objects are compared by identity in the modules that import here, and
the providers' paths are also traced through their sources.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from collections import defaultdict
from pathlib import Path

import pytest

import dsh_user_questions

PACKAGE = Path(dsh_user_questions.__file__).resolve().parent
ROOT = PACKAGE.parent
REPOSITORY = Path(__file__).resolve().parents[2]
LIST = REPOSITORY / "docs" / "reference" / "index.md"
ROW = re.compile(r"^\| \[`(dsh_user_questions\w*(?:\.\w+)*)`\]\([^)]*\) \|[^|]*\|([^|]*)\|$")
PROVIDER = "dsh_user_questions_"
"""The packages of the provider distributions start so (``dsh_user_questions_web``)."""


def is_core(module: str) -> bool:
    return not module.startswith(PROVIDER)


def provider_packages() -> list[Path]:
    """The package folder of each provider distribution of the repository."""
    return sorted(REPOSITORY.glob(f"providers/*/{PROVIDER}*/__init__.py"))


def documented() -> dict[str, list[str]]:
    """Each module of the docs' table and the names listed for it, in the table's order."""
    table: dict[str, list[str]] = {}
    for line in LIST.read_text("utf-8").splitlines():
        row = ROW.match(line)
        if row:
            assert row.group(1) not in table, f"{row.group(1)} is listed twice in {LIST.name}"
            table[row.group(1)] = re.findall(r"`([^`]+)`", row.group(2))
    return table


def source_of(module: str) -> Path:
    """The file that defines ``module`` (a package's ``__init__.py``)."""
    top = module.split(".")[0]
    root = ROOT if is_core(module) else REPOSITORY / "providers" / top[len(PROVIDER) :]
    path = root.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def declared_all(module: str) -> list[str] | None:
    """The literal ``__all__`` of ``module``'s source, or None when it declares none."""
    tree = ast.parse(source_of(module).read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            names: list[str] = ast.literal_eval(value)
            return names
    return None


def public_modules() -> set[str]:
    """Every module of the core and of each provider whose dotted path has no part starting
    with ``_``."""
    found = set()
    packages = [PACKAGE, *(init.parent for init in provider_packages())]
    for package in packages:
        found.add(package.name)
        for path in package.rglob("*.py"):
            parts = path.relative_to(package.parent).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not any(part.startswith("_") for part in parts[1:]):
                found.add(".".join(parts))
    return found


class TestDocumentedList:
    def test_every_public_module_is_in_the_list(self) -> None:
        """No module outside the documented list is public: private machinery is in _modules."""
        undocumented = sorted(public_modules() - set(documented()))
        assert not undocumented, f"public but not in {LIST.name}: {undocumented}"

    def test_every_listed_module_exists(self) -> None:
        """Each module of the list is a module of the package."""
        missing = sorted(set(documented()) - public_modules())
        assert not missing, f"listed in {LIST.name} but not in the package: {missing}"

    @pytest.mark.parametrize("module", sorted(documented()))
    def test_all_matches_the_list(self, module: str) -> None:
        """A module's __all__ holds exactly the names the docs list for it, both ways."""
        names = declared_all(module)
        assert names is not None, f"{module} declares no __all__"
        listed = documented()[module]
        assert len(names) == len(set(names)), f"{module}.__all__ repeats a name"
        assert sorted(names) == sorted(listed), (
            f"{module}: in __all__ only {sorted(set(names) - set(listed))}, "
            f"in {LIST.name} only {sorted(set(listed) - set(names))}"
        )

    def test_the_surface_stays_small(self) -> None:
        """Well under the 229 names of the third release: fewer than 130 in the core (125
        before the fifth release's `dsh_user_questions.team`, whose four names a team needs)."""
        core = [names for module, names in documented().items() if is_core(module)]
        assert sum(len(names) for names in core) < 130

    def test_every_provider_is_listed(self) -> None:
        """The list has the package of every provider distribution of the repository."""
        packages = {init.parent.name for init in provider_packages()}
        assert len(packages) >= 3
        assert packages <= set(documented())


ADAPTER = "dsh_user_questions.adapters."


def defined_in(module: str) -> set[str]:
    """The names ``module``'s source binds itself at its top level (not by an import)."""
    found: set[str] = set()
    for node in ast.parse(source_of(module).read_text("utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(t.id for t in targets if isinstance(t, ast.Name))
    return found


def bound_in(module: str) -> dict[str, tuple[str, str]]:
    """Each name ``module``'s source imports at its top level (or under ``if``, as a lazy
    package's ``if TYPE_CHECKING:``), with the module and name it comes from."""
    tree = ast.parse(source_of(module).read_text("utf-8"))
    package = module if source_of(module).name == "__init__.py" else module.rpartition(".")[0]
    found: dict[str, tuple[str, str]] = {}
    nodes = list(tree.body)
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.If):
            nodes += [*node.body, *node.orelse]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            origin = f"{base}.{node.module}" if node.level else node.module
            for alias in node.names:
                found[alias.asname or alias.name] = (origin, alias.name)
    return found


def origin_of(module: str, name: str) -> tuple[str, str]:
    """Where ``name`` of ``module`` is bound, following its imports through the core's and the
    providers' sources (a re-exported core constant is the core's)."""
    seen = set()
    while (module, name) not in seen:
        seen.add((module, name))
        try:
            imported = bound_in(module).get(name)
        except OSError:  # not a module of this repository: bound there
            break
        if imported is None:
            break
        module, name = imported
    return module, name


class TestOnePath:
    @staticmethod
    def importable() -> dict[str, object]:
        """The listed modules but the framework adapters (read from their source instead),
        and the providers' when they are installed (the provider environments)."""
        found = {}
        for name in documented():
            if name.startswith(ADAPTER):
                continue
            try:
                found[name] = importlib.import_module(name)
            except ImportError:
                if is_core(name):
                    raise
        return found

    def test_an_adapter_exports_what_it_defines(self) -> None:
        """Each adapter's public names are its own (so no other path leads to them)."""
        for module in documented():
            if module.startswith(ADAPTER):
                borrowed = sorted(set(declared_all(module) or ()) - defined_in(module))
                assert not borrowed, f"{module} exports what it imports: {borrowed}"

    def test_each_listed_name_exists(self) -> None:
        """Every name of an __all__ is an attribute of its module."""
        for name, module in self.importable().items():
            missing = [n for n in getattr(module, "__all__", ()) if not hasattr(module, n)]
            assert not missing, f"{name}.__all__ names what it lacks: {missing}"

    def test_each_object_has_one_public_path(self) -> None:
        """No object is exported by two public modules (constants of a plain value aside)."""
        paths: dict[int, list[str]] = defaultdict(list)
        for name, module in self.importable().items():
            for attr in getattr(module, "__all__", ()):
                value = getattr(module, attr)
                if not isinstance(value, (str, int, float, bool, tuple, frozenset)):
                    paths[id(value)].append(f"{name}.{attr}")
        twice = sorted(found for found in paths.values() if len(found) > 1)
        assert not twice, f"objects exported by more than one path: {twice}"

    def test_a_providers_name_has_one_public_path_in_its_sources(self) -> None:
        """In each provider's sources, every public name is exported by one public module:
        traced to where it is bound (a definition, or the module an import takes it from,
        ``if TYPE_CHECKING:`` imports of a lazy package included), no two public modules
        export the same thing. Runs without the providers installed."""
        exported: dict[tuple[str, str], list[str]] = defaultdict(list)
        for module in sorted(public_modules()):
            if module.startswith(ADAPTER):
                continue
            for name in declared_all(module) or ():
                exported[origin_of(module, name)].append(f"{module}.{name}")
        twice = sorted(
            paths
            for paths in exported.values()
            if len(paths) > 1 and not all(is_core(path) for path in paths)
        )
        assert not twice, f"provider names exported by more than one path: {twice}"

    def test_one_receipt(self) -> None:
        """One public class named Receipt, the core's; the web board answers with a Settlement."""
        from dsh_user_questions.providing import Receipt

        web = pytest.importorskip("dsh_user_questions_web")
        assert "Receipt" not in web.__all__
        assert Receipt.__module__.startswith("dsh_user_questions.")


def _private_defaults(function: object) -> list[str]:
    """The defaults of ``function``'s source that name something private (``_DEFAULT``), as
    the API reference prints them (mkdocstrings shows the source's default expressions)."""
    try:
        source = textwrap.dedent(inspect.getsource(function))  # type: ignore[arg-type]
    except (OSError, TypeError):  # generated (an attrs __init__) or not Python source
        return []
    node = ast.parse(source).body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    return [
        ast.unparse(default)
        for default in defaults
        for part in ast.walk(default)
        if (isinstance(part, ast.Name) and part.id.startswith("_"))
        or (isinstance(part, ast.Attribute) and part.attr.startswith("_"))
    ]


def test_no_public_signature_shows_a_private_default() -> None:
    """The API reference prints each signature's defaults: none names a private sentinel."""
    found = []
    for name, module in TestOnePath.importable().items():
        for attr in getattr(module, "__all__", ()):
            value = getattr(module, attr)
            functions = [value]
            if isinstance(value, type):
                functions = [
                    member
                    for key, member in vars(value).items()
                    if callable(member) and (key == "__init__" or not key.startswith("_"))
                ]
            found += [
                f"{name}.{attr}: {default}"
                for function in functions
                for default in _private_defaults(function)
            ]
    assert not found, f"private defaults in public signatures: {found}"
