"""The one declaration of a payload field: its wire name, who writes it, its schema, its text rule.

Each attrs field of a payload carries a `Wire` in its ``metadata`` (made by `field`), and
everything that walks a payload's fields derives from it, through `wire_fields`:

- the wire writer and reader (`_payloads`: ``to_dict``, ``from_dict``),
- the tool's JSON Schema (`_tool_schema`: the fields a model may write, with their schema),
- the tool's argument checks (`_tool_arguments`: the optional keys a ``null`` stands for, the
  text rules a schema pattern cannot carry),
- the tool's item builder (`tool.read_arguments`, through ``from_dict``).

So a new field is one `field(...)` line in its payload class (plus its rule, its view and
what each surface draws of it), not an entry in five hand-kept lists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

import attrs

__all__ = ["TEXT_LINE", "TEXT_MARKDOWN", "TEXT_PLAIN", "Wire", "field", "wire_fields"]

Writer = Literal["model", "harness", "both"]
"""Who writes a field: ``harness`` fields never reach the tool's schema (a model cannot set
them); ``model`` and ``both`` fields are in it (the harness may set a ``both`` field too)."""

TEXT_LINE: Final = "line"
"""One line of model-written text; its schema carries the text pattern, code checks surrogates."""
TEXT_PLAIN: Final = "plain"
"""One line of model-written text checked in code only (no schema pattern: the size budget)."""
TEXT_MARKDOWN: Final = "markdown"
"""Several lines of model-written markdown, checked in code (tab and newline allowed)."""


def is_none(value: object) -> bool:
    """The default ``omit``: leave a ``None`` value out."""
    return value is None


@attrs.frozen
class Wire:
    """How one payload field travels and who may write it.

    ``name`` is its wire key; ``aliases`` are older spellings read, never written. ``writer``
    says whether a model may write it through the tool (``model``/``both``) or only the harness.
    ``schema`` is its JSON Schema node in the tool's arguments (for a nested payload, the node
    around it: ``items`` or the object itself is derived from ``nested``); ``text`` the text rule
    checked in code (`TEXT_LINE`, `TEXT_PLAIN`, `TEXT_MARKDOWN`); ``omit`` says when the writer
    leaves the key out (``None`` values by default); ``kind`` how the reader reads it (``str``,
    ``bool``, ``number``, ``int``, ``strs``, ``payload``, ``payloads``, ``value``); ``nested``
    names the payload class of an object or of each array item; ``model_text`` false keeps the
    field out of the text a model gets back (an upload's digest).
    """

    name: str
    writer: Writer = "both"
    schema: Mapping[str, Any] | None = None
    text: str | None = None
    omit: Callable[[Any], bool] = is_none
    kind: str = "str"
    nested: Callable[[], type] | None = None
    aliases: tuple[str, ...] = ()
    model_text: bool = True

    @property
    def for_model(self) -> bool:
        """Whether the tool's schema offers this field to a model."""
        return self.writer != "harness" and self.schema is not None


def field(wire: Wire, **kwargs: Any) -> Any:
    """An attrs field declared with its `Wire` (in ``metadata["wire"]``)."""
    metadata = dict(kwargs.pop("metadata", {}))
    metadata["wire"] = wire
    return attrs.field(metadata=metadata, **kwargs)


_CACHE: dict[type, tuple[tuple[attrs.Attribute[Any], Wire], ...]] = {}


def wire_fields(cls: type) -> tuple[tuple[attrs.Attribute[Any], Wire], ...]:
    """The fields of payload class ``cls`` that travel, each with its `Wire`, in field order."""
    found = _CACHE.get(cls)
    if found is None:
        found = _CACHE[cls] = tuple(
            (attribute, attribute.metadata["wire"])
            for attribute in attrs.fields(cls)
            if "wire" in attribute.metadata
        )
    return found


def required(attribute: attrs.Attribute[Any]) -> bool:
    """Whether a field has no default (its wire key is required)."""
    return attribute.default is attrs.NOTHING
