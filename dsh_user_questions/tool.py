"""The model-facing tool ``ask_user_question``: its schema, its shapes for each API, and `run`.

One JSON Schema is the single source of truth: every shape (`openai_tool`,
`openai_responses_tool`, `anthropic_tool`, `gemini_tool`, `mcp_tool`) publishes it, and
`read_arguments` validates against it. Its patterns mean the same in Python ``re``, RE2 and
ECMA-262; the rules no keyword can carry are checked in the same step and stated in the
schema's descriptions: unique ids, labels unique within a question ignoring case and surrounding
spaces, no option labelled "Other" (the UI always adds one), either no options or at least two
(at least two for ``multi_select``), at most one ``recommended`` option on a single-select, a
``secret`` question without options, and no unpaired surrogates in any text.

``recommended`` is data, not a choice: it is shown, never picked for the user (a skip stays a
skip). A label ending `` (Recommended)`` (as Claude Code writes it) is read as the label
without it, recommended, unless the option says ``recommended`` itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs

from ._payloads import (
    KEY_PATTERN,
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    _write,
)
from ._tool_arguments import MAX_REPORTED_VIOLATIONS, check
from ._tool_schema import published_schema, strict_schema
from ._tool_types import (
    AnthropicTool,
    AnthropicToolResult,
    GeminiTool,
    MCPTool,
    OpenAIFunction,
    OpenAITool,
    OpenAIToolMessage,
    ResponsesFunctionCallOutput,
    ResponsesTool,
)
from ._workspace import rooted
from .errors import HarnessError, UserQuestionError
from .rules import redact_secrets

if TYPE_CHECKING:
    from .harness import AbortSignal

# The limits (``_tool_schema.MAX_*``) and the TypedDicts of the shapes (``_tool_types``) are
# private: the schema and its descriptions state the limits, the docs the shapes.
__all__ = [
    "DESCRIPTION",
    "NAME",
    "ToolResult",
    "anthropic_tool",
    "durable_key",
    "gemini_tool",
    "input_schema",
    "mcp_tool",
    "openai_responses_tool",
    "openai_tool",
    "read_arguments",
    "result_of",
    "run",
]

NAME: Final = "ask_user_question"

# At most 1,024 characters (OpenAI's limit on a function description). The limits live in the
# schema's keywords, not here.
DESCRIPTION: Final = (
    "Ask the user and wait (waiting is free). Ask only when you cannot do the task well"
    " without their decision: a choice you can't infer. Don't ask what you can find out,"
    " permission for routine steps, or what was answered. Put related questions in one call."
    " Offer 2-4 short options for a choice, best"
    ' first, marked "recommended": true (not "(Recommended)" in a label); none for free text.'
    ' The UI adds "Other" (own words) and a skip: never add "Other". Plain text, one line.'
    ' "secret": true only for a password or token: you get a placeholder, the harness the'
    ' text. A number, date, time, datetime, files or upload: "input", no options.\n'
    'Result: {"answers":[{"id":"<id>","selected":["<label>"],"custom":"<own words>"}]};'
    ' "custom" only if written, "value" for input. Missing or nothing chosen: skipped; use'
    ' judgement, say so. "Error: invalid arguments: ..." lists each problem and path: fix'
    ' all, call again. "Error: the user cancelled ...": stop; wait for the user. Other errors'
    " mean no answer now: don't guess it; ask in your reply."
)


def input_schema(*, strict: bool = False) -> dict[str, Any]:
    """The JSON Schema of the tool's arguments (a fresh copy; changing it changes nothing).

    ``strict=True`` gives the variant for OpenAI's strict mode: every property required, the
    optional ones typed ``[T, "null"]``, and only the keywords strict mode supports (so no
    ``maxLength``; `run` still enforces every limit and reports a breach with its path).
    """
    return strict_schema() if strict else published_schema()


def openai_tool(strict: bool = False) -> OpenAITool:
    """The tool for OpenAI Chat Completions (``tools=[...]``).

    ``strict=True`` adds ``"strict": true`` and the strict-mode schema; `run` treats the
    ``null`` such a call sends for an optional property as the property left out.
    """
    function: OpenAIFunction = {
        "name": NAME,
        "description": DESCRIPTION,
        "parameters": input_schema(strict=strict),
    }
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def openai_responses_tool(strict: bool = False) -> ResponsesTool:
    """The tool for the OpenAI Responses API: flat, with ``strict`` always stated.

    The Responses API treats a tool without ``strict`` as strict and rewrites its schema, so
    ``strict=False`` says ``"strict": false`` rather than leaving it out.
    """
    return {
        "type": "function",
        "name": NAME,
        "description": DESCRIPTION,
        "parameters": input_schema(strict=strict),
        "strict": strict,
    }


def anthropic_tool() -> AnthropicTool:
    """The tool for Anthropic Messages (``tools=[...]``)."""
    return {"name": NAME, "description": DESCRIPTION, "input_schema": input_schema()}


def gemini_tool() -> GeminiTool:
    """The tool for google-genai: ``types.FunctionDeclaration(**gemini_tool())``."""
    return {"name": NAME, "description": DESCRIPTION, "parameters_json_schema": input_schema()}


def mcp_tool() -> MCPTool:
    """The tool as an MCP ``Tool`` (what ``tools/list`` returns for it)."""
    return {"name": NAME, "description": DESCRIPTION, "inputSchema": input_schema()}


def read_arguments(arguments: object) -> tuple[AskUserQuestionItem, ...]:
    """The questions of the tool's ``arguments`` (a JSON text, or an already parsed value).

    ``null`` for an optional property (as OpenAI's strict mode sends) means it is left out.
    Raises `UserQuestionError` ``INVALID_ARGS`` with the message ``invalid arguments: `` and
    every violation as ``<path>: <problem>`` (the path omitted for the arguments as a whole),
    joined by ``"; "``; the same strings are the error's ``problems``. At most
    `MAX_REPORTED_VIOLATIONS` are listed; the message then ends ``(more violations not shown)``.
    Paths are written ``questions[0].options[1].label``.
    """
    data, problems = check(arguments)
    if problems:
        raise UserQuestionError.invalid_args(*problems, limit=MAX_REPORTED_VIOLATIONS)
    # The checked arguments are the questions' wire form: the payloads' reader builds them.
    return tuple(AskUserQuestionItem.from_dict(question) for question in data["questions"])


# Running the tool ------------------------------------------------------------------------------


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_text(text: str) -> str:
    # The last guard: a lone surrogate is no Unicode, and no model API takes it. The answer
    # rules refuse one in custom text (BAD_ANSWER); anything else (a provider's error message
    # quoting such text) gets U+FFFD in its place.
    return text if text.isascii() else _LONE_SURROGATE.sub("\ufffd", text)


def _secrets(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(value))


@attrs.frozen
class ToolResult:
    """What the model gets back from a tool call.

    ``content`` is the text for the model (always valid Unicode); ``is_error`` says whether the
    call failed; ``error`` is ``{"name": <exception class name>, "code": <its code>}`` for a
    `HarnessError`. ``to_anthropic``, ``to_openai`` and ``to_responses`` wrap it for each API.

    ``secrets`` is for the harness only: the clear text of each answered ``secret`` question,
    by question id (read-only; empty when there is none). It is never part of what the model
    gets: no ``to_*`` method, ``repr`` or comparison includes it, and ``content`` carries
    `rules.SECRET_PLACEHOLDER` in its place unless `run` was called with
    ``reveal_secrets=True``.
    """

    content: str = attrs.field(converter=_valid_text)
    is_error: bool = False
    error: dict[str, str] | None = None
    secrets: Mapping[str, str] = attrs.field(
        factory=dict, converter=_secrets, repr=False, eq=False, kw_only=True
    )

    @classmethod
    def from_error(cls, err: HarnessError) -> ToolResult:
        """The result of a failed call: ``Error: <message>`` and the error's name and code.

        The name is the exception's class name (``AskCancelledError``, ``InvalidRequestError``,
        ``StoreError``...: the family of `errors`), the code its exact outcome.
        """
        return cls(
            content=f"Error: {err.message}",
            is_error=True,
            error={"name": type(err).__name__, "code": str(getattr(err.code, "value", err.code))},
        )

    def to_anthropic(self, tool_use_id: str) -> AnthropicToolResult:
        """A ``tool_result`` content block for the user turn that answers ``tool_use_id``."""
        return {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": self.content,
            "is_error": self.is_error,
        }

    def to_openai(self, tool_call_id: str) -> OpenAIToolMessage:
        """A Chat Completions ``role: "tool"`` message answering ``tool_call_id``."""
        return {"role": "tool", "tool_call_id": tool_call_id, "content": self.content}

    def to_responses(self, call_id: str) -> ResponsesFunctionCallOutput:
        """A Responses ``function_call_output`` input item answering ``call_id``."""
        return {"type": "function_call_output", "call_id": call_id, "output": self.content}


def format_answer(answer: AskUserQuestionAnswer) -> str:
    """The compact JSON of an answer: ``{"answers":[{"id":..,"selected":[..],"custom":..}]}``.

    No spaces, no ASCII escaping; ``custom`` and ``value`` are left out when absent. Each item
    is its wire form as the model may read it (an upload's name, type, size and path, not its
    digest: the fields declared ``model_text=False`` are left out).
    """
    items = [_write(item, for_model=True) for item in answer.answers]
    return json.dumps({"answers": items}, ensure_ascii=False, separators=(",", ":"))


def result_of(
    questions: tuple[AskUserQuestionItem, ...],
    outcome: AskUserQuestionAnswer | HarnessError,
    *,
    reveal_secrets: bool = False,
) -> ToolResult:
    """What the model gets for an ask of ``questions`` that ended with ``outcome``.

    The one place an answer becomes the model's text (`run` and every adapter come through
    here): an answer gives its compact JSON (`format_answer`), each secret question's text
    replaced by `rules.SECRET_PLACEHOLDER` unless ``reveal_secrets``, and the clear texts in
    `ToolResult.secrets`; a `HarnessError` gives `ToolResult.from_error`.
    """
    if isinstance(outcome, HarnessError):
        return ToolResult.from_error(outcome)
    if not any(question.secret for question in questions):
        return ToolResult(format_answer(outcome))
    secret_ids = {question.id for question in questions if question.secret}
    secrets = {
        item.id: item.custom
        for item in outcome.answers
        if item.id in secret_ids and item.custom is not None
    }
    shown = outcome if reveal_secrets else redact_secrets(questions, outcome)
    return ToolResult(format_answer(shown), secrets=secrets)


# A durable key's parts are written as they are, but for ``:`` (which separates them) and ``~``
# (which escapes): ``~3A`` and ``~7E``. So a key reads back into exactly one (framework, run
# id, call id) and ids holding the separator cannot forge another run's key.
_KEY_PART = re.compile(r"[A-Za-z0-9._/@+=#-]+")
_ESCAPES = str.maketrans({"~": "~7E", ":": "~3A"})
_HASHED = "sha256"


def durable_key(framework: str, run_id: str | None, tool_call_id: str | None) -> str:
    """The ``key`` of a durable tool call's question: its run's identity and its call's id.

    Every adapter's durable mode makes its keys here: ``<framework>:<run id>:<tool call id>``
    (e.g. ``langgraph:<thread id>:<tool call id>``), so two runs that reuse a tool call id
    (scripted and test models do, and so may a model across runs) never share a record, and
    the same call asked again after a crash attaches to its own. The mapping is injective: a
    ``:`` or ``~`` inside an id is written ``~3A`` or ``~7E`` (thread ``t:1`` and call ``c``
    give ``langgraph:t~3A1:c``, thread ``t`` and call ``1:c`` give ``langgraph:t:1~3Ac``).
    When that text does not fit a request key (`AskUserQuestionRequest.key`: other
    characters, or too long), or the run id is ``sha256`` itself, the key is
    ``<framework>:sha256:<hex digest of both ids, the run id length-prefixed>``: stable all
    the same, and never the readable form of other ids.

    ``framework`` is a name of letters, digits and ``._/@+=#-``. ``run_id`` is the framework's
    own run identity (LangGraph's thread id, pydantic-ai's run id, the run id the caller gives
    the Agents SDK adapter). Raises `ValueError` when it or ``tool_call_id`` is missing or
    empty: a key made of the call id alone would collide.
    """
    if not isinstance(framework, str) or not _KEY_PART.fullmatch(framework):
        raise ValueError(
            f"a durable key's framework must be letters, digits or ._/@+=#- (got {framework!r})"
        )
    if not run_id or not isinstance(run_id, str):
        raise ValueError(
            f"a durable {framework} ask_user_question call needs its run's identity for its"
            f" key, and it has none (run id {run_id!r}): a key of the tool call id alone could"
            " hand one run's answer to another"
        )
    if not tool_call_id or not isinstance(tool_call_id, str):
        raise ValueError(
            f"a durable {framework} ask_user_question call needs its tool call id for its key"
            f" (got {tool_call_id!r})"
        )
    key = f"{framework}:{run_id.translate(_ESCAPES)}:{tool_call_id.translate(_ESCAPES)}"
    if run_id != _HASHED and KEY_PATTERN.fullmatch(key):
        return key
    both = f"{len(run_id)}:{run_id}:{tool_call_id}".encode("utf-8", "surrogatepass")
    return f"{framework}:{_HASHED}:{hashlib.sha256(both).hexdigest()}"


class _Context(Protocol):
    def get(self, name: str) -> Any | None: ...


async def run(
    ctx: _Context,
    arguments: object,
    *,
    agent: object | None = None,
    signal: AbortSignal | None = None,
    key: str | None = None,
    timeout: float | None = None,
    reveal_secrets: bool = False,
    raise_for: tuple[type[HarnessError], ...] = (),
    workspace: str | os.PathLike[str] | None = None,
    audience: Iterable[str] = (),
) -> ToolResult:
    """Run the tool: validate ``arguments``, ask through ``ctx.user_questions``, report.

    The one path from a model's call to its result: every adapter, live and durable, calls it.
    ``arguments`` is the JSON text the model sent or the value already parsed from it. Every
    value gives a `ToolResult` (made by `result_of`): the compact answer JSON, or
    ``Error: <message>`` for invalid arguments (``INVALID_ARGS``) and every `HarnessError` of
    the ask (a context without the user-questions service is ``NO_PROVIDER``), except those of
    the classes in ``raise_for``, which raise (a durable adapter leaves its call pending on
    them). ``key`` is the request's key (`durable_key`), for a durable provider's one record per
    call. ``timeout`` (seconds) ends an unanswered ask with ``ASK_TIMED_OUT``, whose text tells
    the model the user did not answer in time. Cancelling the awaiting task propagates
    `asyncio.CancelledError`; any other exception from a provider propagates unchanged, as from
    `UserQuestionService.ask`, for the harness's own error handling.

    **Secrets.** A question the model marks ``"secret": true`` is typed masked and its answer
    goes to the harness, not the model: the result's ``content`` carries
    `rules.SECRET_PLACEHOLDER` as its ``custom`` text (telling the model the user gave the
    secret to the harness), and `ToolResult.secrets` maps the question's id to the clear text.
    ``reveal_secrets=True`` puts the clear text in ``content`` too, for a harness that wants the
    model to see it.

    **Files.** ``workspace`` (a folder) is the root of the model's ``files`` questions: their
    candidates are listed there when the call asks (`AskUserQuestionInput.files`), and the
    answer's paths are checked against it when the answer arrives. Without one, a call with a
    ``files`` question gives ``BAD_QUESTION``, telling the model that file questions are not
    available here (no retry fixes that; it asks for paths in free text instead).

    **Who may answer.** ``audience`` (person ids and ``group:NAME`` entries,
    `AskUserQuestionRequest.audience`) is the request's: only they may answer it. The harness
    sets it here, never the model (the tool's schema has no such field); a bad entry gives
    ``BAD_AUDIENCE``.
    """
    questions: tuple[AskUserQuestionItem, ...] = ()
    try:
        questions = read_arguments(arguments)
        if any(item.input is not None and item.input.type == "files" for item in questions):
            questions = await asyncio.to_thread(rooted, questions, workspace)
        service = ctx.get("user_questions")
        if service is None:
            raise UserQuestionError.no_provider()
        outcome: AskUserQuestionAnswer | HarnessError = await service.ask(
            AskUserQuestionRequest(
                questions=questions,
                agent=agent,
                signal=signal,
                timeout=timeout,
                key=key,
                audience=audience,
            )
        )
    except HarnessError as err:
        if isinstance(err, raise_for):
            raise
        outcome = err
    return result_of(questions, outcome, reveal_secrets=reveal_secrets)
