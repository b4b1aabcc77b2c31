"""One view of a question: what every surface shows of it, made once in the core.

A surface (the terminal, the web page, the link page, the inbox, MCP forms, notifications)
renders this view; none re-reads the wire dicts or parses a detail of its own. Every text in it
is model-written and already inert (`dsh_user_questions.rules.inert_text`).

- `markdown` turns markdown (a detail, a plan, an option's preview) into a safe element tree:
  a node is a string (a text node) or ``[tag, {attribute: value}, *children]``, from a fixed
  list of tags (see `dsh_user_questions._markdown`).
- `parse_diff` reads a unified diff (a diff-review question's detail) into files, hunks and
  lines: the one diff parser of every surface.
"""

from __future__ import annotations

from ._diff import parse_diff
from ._markdown import Node
from ._markdown import render as markdown

__all__ = ["Node", "markdown", "parse_diff"]
