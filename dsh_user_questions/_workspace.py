"""The files a ``files`` question offers, listed where they are: by the asking process.

`list_files` walks a root once when the question is asked; a surface elsewhere offers that
list (`AskUserQuestionInput.candidates`) and checks an answer's membership, and the asker
re-checks each answered path against the disk when the answer arrives (`_inputs.check_files`).
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

import attrs

from ._glob import glob_regex

if TYPE_CHECKING:
    from ._payloads import AskUserQuestionItem

__all__ = ["list_files", "rooted"]


def rooted(
    questions: tuple[AskUserQuestionItem, ...], workspace: str | os.PathLike[str] | None
) -> tuple[AskUserQuestionItem, ...]:
    """``questions`` with each ``files`` input that has no root yet rooted in ``workspace``,
    its candidates listed there (`AskUserQuestionInput.files`).

    Without a workspace (or with one that is no folder), such a question is ``BAD_QUESTION``:
    file questions are not available here, which no retry of the same call fixes.
    """
    from ._payloads import AskUserQuestionInput
    from .errors import UserQuestionError

    out = []
    for item in questions:
        given = item.input
        if given is not None and given.type == "files" and given.root is None:
            if workspace is None or not os.path.isdir(workspace):
                raise UserQuestionError.bad_question(
                    item.id,
                    "asks for files, but file questions are not available here (the harness"
                    " gave no workspace); ask for the paths in free text instead",
                )
            listed = AskUserQuestionInput.files(
                workspace, pattern=given.pattern, max_count=given.max_count
            )
            item = attrs.evolve(item, input=listed)
        out.append(item)
    return tuple(out)


def list_files(root: str, pattern: str | None = None) -> tuple[str, ...]:
    """The regular files under ``root`` that match ``pattern``, relative POSIX paths, sorted.

    ``.git`` is skipped, and so is what git ignores when ``root`` is inside a git work tree
    (``git ls-files``); without git, every file but ``.git``'s. At most
    `payloads.MAX_FILE_CANDIDATES`, the first in sorted order.
    """
    from ._payloads import MAX_FILE_CANDIDATES

    match = None if pattern is None else glob_regex(pattern).fullmatch
    listed = _git_files(root)
    if listed is None:
        listed = _walk(root)
    found: list[str] = []
    for path in sorted(set(listed)):
        if match is not None and match(path) is None:
            continue
        if not os.path.isfile(os.path.join(root, path)):
            continue  # a deleted file still in git's index, a folder, a broken link
        found.append(path)
        if len(found) >= MAX_FILE_CANDIDATES:
            break
    return tuple(found)


def _git_files(root: str) -> list[str] | None:
    try:
        done = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None  # not a work tree
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [name for name in names if name and not name.startswith(".git/")]


def _walk(root: str) -> list[str]:
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name != ".git"]
        relative = os.path.relpath(folder, root)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        found.extend(prefix + name for name in files)
    return found
