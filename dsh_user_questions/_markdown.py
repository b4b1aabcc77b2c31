"""Markdown (plans, question details) rendered once on the server into a safe element tree.

markdown-it-py parses CommonMark with tables and strikethrough, raw HTML off. The result is not
HTML but a JSON tree the page turns into elements from a fixed list of tags: a node is a string
(a text node) or ``[tag, {attribute: value}, *children]``. Ordered lists keep their start number
and every item its own number (``value``), so "drop step 10" points at the step shown as 10.
Links keep an ``href`` only for ``http``, ``https`` and ``mailto`` targets; every target is
shown as text after the link's words (words reading like an address may point elsewhere),
unless the words are that target. Images become their alt text. Headings move down two
levels, under the card's own heading. Every text node is `dsh_user_questions.rules.inert_text`
(code keeps its line breaks), so the page shows the same stand-ins as every other surface.
"""

from __future__ import annotations

import functools
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from .rules import inert_text

__all__ = ["Node", "render"]

Node = str | list[Any]
"""One node of a tree: a text (inert) or ``[tag, {attribute: value}, *children]``."""

_SAFE_SCHEMES = ("http://", "https://", "mailto:")
_ALIGN = {"text-align:left": "left", "text-align:center": "center", "text-align:right": "right"}
# Tags whose token maps one to one to an element of the same name.
_SAME = {
    "blockquote", "ul", "li", "table", "thead", "tbody", "tr", "em", "strong", "s", "hr",
}  # fmt: skip


@functools.lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # maxNesting bounds how deep the tree (and this module's recursion) can go.
    return MarkdownIt("commonmark", {"html": False, "maxNesting": 20}).enable(
        ["table", "strikethrough"]
    )


def render(source: str) -> list[Node]:
    """The element tree of ``source`` (children of the block that shows it)."""
    root = SyntaxTreeNode(_parser().parse(source))
    return _children(root)


def _children(node: SyntaxTreeNode) -> list[Node]:
    out: list[Node] = []
    for child in node.children:
        out.extend(_convert(child))
    return out


def _plain(nodes: list[Node]) -> str:
    """The text of rendered nodes, without their tags."""
    return "".join(node if isinstance(node, str) else _plain(node[2:]) for node in nodes)


def _convert(node: SyntaxTreeNode) -> list[Node]:
    kind = node.type
    if kind == "text":
        return [inert_text(node.content)]
    if kind == "inline":
        return _children(node)
    if kind == "paragraph":
        # A tight list hides its paragraphs: their words go straight into the item.
        return _children(node) if node.hidden else [["p", {}, *_children(node)]]
    if kind == "heading":
        level = min(6, int(node.tag[1]) + 2)
        return [[f"h{level}", {}, *_children(node)]]
    if kind == "ordered_list":
        attrs: dict[str, Any] = {}
        start = node.attrs.get("start")
        if start is not None:
            attrs["start"] = int(start)
        return [["ol", attrs, *_children(node)]]
    if kind == "list_item":
        attrs = {}
        if node.info.isdigit():
            attrs["value"] = int(node.info)
        return [["li", attrs, *_children(node)]]
    if kind in ("th", "td"):
        align = _ALIGN.get(str(node.attrs.get("style", "")))
        return [[kind, {"data-align": align} if align else {}, *_children(node)]]
    if kind in ("fence", "code_block"):
        return [["pre", {}, ["code", {}, inert_text(node.content, multiline=True)]]]
    if kind == "code_inline":
        return [["code", {}, inert_text(node.content)]]
    if kind in ("softbreak",):
        return ["\n"]
    if kind == "hardbreak":
        return [["br", {}]]
    if kind == "link":
        href = str(node.attrs.get("href", ""))
        words = _children(node)
        target = inert_text(f" ({href})")
        if href.lower().startswith(_SAFE_SCHEMES):
            # The words may read like another address: the target is always shown beside
            # them, unless they are the target itself.
            said = _plain(words).strip()
            if said in (href, href.removeprefix("mailto:")):
                return [["a", {"href": href}, *words]]
            return [["a", {"href": href}, *words], target]
        return [*words, target]
    if kind == "image":
        return _children(node)
    if node.tag in _SAME:
        return [[node.tag, {}, *_children(node)]]
    # Anything else (a future token type) is kept as its text only.
    if node.children:
        return _children(node)
    return [inert_text(node.content, multiline=True)] if node.content else []
