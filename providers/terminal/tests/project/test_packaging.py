"""What this distribution ships as installed: its version, its license, the core it needs."""

from __future__ import annotations

from importlib import metadata

import dsh_user_questions
from packaging.requirements import Requirement

import dsh_user_questions_terminal

DISTRIBUTION = "dsh-user-questions-terminal"
REPOSITORY = "https://github.com/dsh-user-questions/dsh-user-questions"


def test_version_is_written_once_and_installed_as_written() -> None:
    """``dsh_user_questions_terminal.__version__`` is the installed distribution's version."""
    assert dsh_user_questions_terminal.__version__ == metadata.version(DISTRIBUTION)


def test_installed_distribution_has_an_spdx_license_and_ships_the_license_text() -> None:
    """The metadata says ``License-Expression: MIT`` (no license classifier) and the LICENSE
    file is installed with the distribution."""
    dist = metadata.distribution(DISTRIBUTION)
    assert dist.metadata["License-Expression"] == "MIT"
    assert not [c for c in dist.metadata.get_all("Classifier") or [] if c.startswith("License")]
    shipped = [f for f in dist.files or [] if f.name == "LICENSE"]
    assert shipped, "no LICENSE among the installed files"
    text = shipped[0].read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "the dsh-user-questions authors" in text


def test_installed_distribution_links_to_the_repository() -> None:
    """The project URLs point into the repository, the changelog to this provider's own."""
    dist = metadata.distribution(DISTRIBUTION)
    urls = dict(entry.split(", ", 1) for entry in dist.metadata.get_all("Project-URL") or [])
    assert urls == {
        "Source": REPOSITORY,
        "Issues": f"{REPOSITORY}/issues",
        "Changelog": f"{REPOSITORY}/blob/main/providers/terminal/CHANGELOG.md",
    }


def test_the_core_it_runs_with_is_one_it_allows() -> None:
    """The distribution pins the core to a range that holds the installed core version."""
    requires = [Requirement(line) for line in metadata.requires(DISTRIBUTION) or []]
    (core,) = [r for r in requires if r.name == "dsh-user-questions" and not r.marker]
    assert str(core.specifier)
    assert core.specifier.contains(dsh_user_questions.__version__, prereleases=True)
