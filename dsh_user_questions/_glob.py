"""The glob of a ``files`` question's ``pattern``, read the same on every surface.

``**`` spans any number of folders (``**/`` also none), ``*`` any characters within one
folder name, ``?`` one character of a name, ``[abc]`` and ``[!abc]`` one of (or none of)
those characters; everything else is itself. Paths are relative POSIX paths.
"""

from __future__ import annotations

import functools
import re

__all__ = ["glob_regex"]


@functools.lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` as a regular expression matching whole relative paths."""
    out: list[str] = []
    index, length = 0, len(pattern)
    while index < length:
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:[^/]+/)*")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[" and "]" in pattern[index + 2 :]:
            end = pattern.index("]", index + 2)
            body = pattern[index + 1 : end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            escaped = "".join("\\" + c if c in "\\^]" else c for c in body)
            out.append(f"[{'^/' if negate else ''}{escaped}]")
            index = end + 1
        else:
            out.append(re.escape(char))
            index += 1
    return re.compile("".join(out), re.DOTALL)
