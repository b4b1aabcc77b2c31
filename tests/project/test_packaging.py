"""What every distribution of this repository ships: license, version, links a package index shows.

The installed-metadata checks look at this distribution as tox (or pip) installed it; the
source checks read the files next to these tests, so they also run from an unpacked sdist. The
providers' files are checked only in a checkout of the repository, where they exist.
"""

from __future__ import annotations

import configparser
import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

import dsh_user_questions

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY = "https://github.com/dsh-user-questions/dsh-user-questions"
PROVIDERS = sorted(path.parent for path in ROOT.glob("providers/*/setup.cfg"))

_FENCED = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK_TARGETS = (
    re.compile(r"\]\(\s*<?([^)\s>]+)"),  # [text](target) and ![alt](target)
    re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M),  # [label]: target
    re.compile(r"""<(?:img|a)\b[^>]*\b(?:src|href)\s*=\s*["']([^"']+)""", re.I),
)


def relative_links(markdown: str) -> list[str]:
    """The link and image targets in ``markdown`` that a package index cannot resolve."""
    prose = _INLINE_CODE.sub("", _FENCED.sub("", markdown))
    targets = [target for pattern in _LINK_TARGETS for target in pattern.findall(prose)]
    return [t for t in targets if not t.startswith(("https://", "http://", "mailto:", "#"))]


def test_relative_links_finds_what_a_package_index_would_break() -> None:
    """The link check reports relative targets and ignores absolute ones and code."""
    text = (
        "[a](docs/a.md) ![b](img.png) [ok](https://x.test/a) [top](#top)\n"
        '[ref]: ../README.md\n<img src="shot.png">\n'
        "`[c](code.md)`\n```md\n[d](fenced.md)\n```\n"
    )
    assert relative_links(text) == ["docs/a.md", "img.png", "../README.md", "shot.png"]


def test_version_is_written_once_and_installed_as_written() -> None:
    """``dsh_user_questions.__version__`` is the installed distribution's version."""
    assert dsh_user_questions.__version__ == metadata.version("dsh-user-questions")


def test_installed_distribution_has_an_spdx_license_and_ships_the_license_text() -> None:
    """The metadata says ``License-Expression: MIT`` (no license classifier) and the LICENSE
    file is installed with the distribution."""
    dist = metadata.distribution("dsh-user-questions")
    assert dist.metadata["License-Expression"] == "MIT"
    assert not [c for c in dist.metadata.get_all("Classifier") or [] if c.startswith("License")]
    shipped = [f for f in dist.files or [] if f.name == "LICENSE"]
    assert shipped, "no LICENSE among the installed files"
    text = shipped[0].read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "the dsh-user-questions authors" in text


def test_installed_distribution_links_to_the_repository() -> None:
    """The project URLs (source, issues, changelog) point into the one repository."""
    dist = metadata.distribution("dsh-user-questions")
    urls = dict(entry.split(", ", 1) for entry in dist.metadata.get_all("Project-URL") or [])
    assert urls == {
        "Source": REPOSITORY,
        "Issues": f"{REPOSITORY}/issues",
        "Changelog": f"{REPOSITORY}/blob/main/CHANGELOG.md",
    }


def test_the_long_description_has_only_absolute_links() -> None:
    """README.md (the long description) links only absolute URLs, which PyPI can show."""
    assert relative_links((ROOT / "README.md").read_text(encoding="utf-8")) == []


def test_the_sdist_manifest_carries_the_tests_and_what_they_read() -> None:
    """MANIFEST.in puts the tests, their pytest settings and the files they read in the sdist."""
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").split()
    for needed in ("LICENSE", "README.md", "tox.ini", "tests", "examples"):
        assert needed in manifest


@pytest.mark.skipif(not PROVIDERS, reason="not a checkout of the repository (no providers/)")
@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda path: path.name)
def test_each_provider_follows_the_same_baseline(provider: Path) -> None:
    """Each provider ships the same LICENSE, an SPDX license, its version from ``__version__``,
    a core pin that allows this core but not the next minor release, its tests in the sdist,
    and absolute README links."""
    assert (provider / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    config = configparser.ConfigParser()
    config.read(provider / "setup.cfg", encoding="utf-8")
    meta, options = config["metadata"], config["options"]
    assert meta["license_expression"] == "MIT"
    assert "license" not in meta
    assert "License ::" not in meta.get("classifiers", "")
    assert re.fullmatch(r"attr: dsh_user_questions_\w+\.__version__", meta["version"])
    assert f"{REPOSITORY}/blob/main/providers/{provider.name}/CHANGELOG.md" in meta["project_urls"]
    requirements = [Requirement(line) for line in options["install_requires"].split("\n") if line]
    (core,) = [r for r in requirements if r.name == "dsh-user-questions"]
    version = Version(dsh_user_questions.__version__)
    assert core.specifier.contains(version, prereleases=True), "this core is not allowed"
    assert not core.specifier.contains(f"{version.major}.{version.minor + 1}.0"), "no upper bound"
    manifest = (provider / "MANIFEST.in").read_text(encoding="utf-8").split()
    assert {"LICENSE", "README.md", "tox.ini", "tests"} <= set(manifest)
    assert 'requires = ["setuptools>=77"]' in (provider / "pyproject.toml").read_text("utf-8")
    assert relative_links((provider / "README.md").read_text(encoding="utf-8")) == []
    tox = (provider / "tox.ini").read_text(encoding="utf-8")
    assert "UV_PYTHON_DOWNLOADS = never" in tox
