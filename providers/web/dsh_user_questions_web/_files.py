"""The page's two routes for typed inputs: a file question's candidates, and an upload.

``GET files?ask=ID&question=QID``: the paths a ``files`` question offers (the list the asker
recorded when it asked, `dsh_user_questions.view.InputView`), as ``{"files": [...], "shown":
[...], "max_count"}`` (``shown``: each path as inert text, for display; an answer names
``files``). The event stream carries only their count, so a question
over a 100,000-file tree costs a page one fetch when it opens, never a snapshot.

``POST upload?ask=ID&question=QID&name=NAME`` with the file's bytes as the body (its
``Content-Type`` the file's type): streamed into the uploads folder by the board (see
`dsh_user_questions_web._uploads_web`), up to the question's ``max_bytes``. Answers ``200``
``{"upload": token, "name", "media_type", "size"}``; ``413`` over the limit, ``415`` a type the
question does not take, ``400`` a bad name, ``404`` no such pending upload question, ``408`` a
body sent too slowly; nothing is kept of a refused file.
"""

from __future__ import annotations

import asyncio
import collections
import json

from dsh_user_questions import AskUserQuestionItem
from dsh_user_questions._i18n import language_from_accept
from dsh_user_questions._problems import shown_problem
from dsh_user_questions._uploads import UploadRefused
from dsh_user_questions.view import question_view
from starlette.requests import Request
from starlette.responses import Response

from ._board import QuestionBoard
from ._limits import Limits

__all__ = ["candidates", "receive"]

_CACHE: collections.OrderedDict[tuple[int, str, str], bytes] = collections.OrderedDict()
_CACHED = 8  # file lists kept rendered (a few pages open the same question)


def _reply(data: object, status: int = 200) -> Response:
    body = json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return Response(body, status_code=status, media_type="application/json")


async def candidates(board: QuestionBoard, ask_id: str, question_id: str) -> bytes | None:
    """The JSON of the candidates of file question ``question_id`` of pending ask ``ask_id``,
    or ``None`` when there is no such pending question."""
    key = (id(board), ask_id, question_id)
    cached = _CACHE.get(key)
    if cached is not None:
        _CACHE.move_to_end(key)
        return cached
    for ask in await board.pending():
        if ask.get("id") != ask_id:
            continue
        for question in ask.get("questions", ()):
            if question.get("id") != question_id:
                continue
            field = question_view(AskUserQuestionItem.from_dict(question)).input
            if field is None or field.type != "files":
                return None
            listed = {
                "files": list(field.candidates),
                "shown": list(field.shown),
                "max_count": field.max_count,
            }
            body = json.dumps(listed, ensure_ascii=True, separators=(",", ":")).encode("ascii")
            _CACHE[key] = body
            while len(_CACHE) > _CACHED:
                _CACHE.popitem(last=False)
            return body
    return None


def _refused(refused: UploadRefused, request: Request) -> Response:
    """A refused file: why in English (``message``) and in the page's language (``shown``)."""
    language = language_from_accept(request.headers.get("accept-language"))
    shown = shown_problem(refused.args[0], language)
    return _reply({"status": "refused", "message": str(refused), "shown": shown}, refused.status)


async def receive(board: QuestionBoard, request: Request, limits: Limits) -> Response:
    """The ``upload`` route: stream the body into the board's ``open_upload`` (see the
    module)."""
    start = getattr(board, "open_upload", None)
    if start is None:
        return _reply({"status": "unsupported", "message": "uploads are not taken here"}, 501)
    params = request.query_params
    try:
        sink = start(
            params.get("ask", ""),
            params.get("question", ""),
            params.get("name", ""),
            request.headers.get("content-type"),
        )
    except UploadRefused as refused:
        return _refused(refused, request)
    except LookupError as missing:
        return _reply({"status": "not-found", "message": str(missing)}, 404)
    stream = request.stream().__aiter__()
    try:
        while True:
            try:
                chunk = await asyncio.wait_for(stream.__anext__(), limits.body_timeout)
            except StopAsyncIteration:
                break
            sink.write(chunk)
        token = sink.finish()
    except UploadRefused as refused:
        sink.abort()
        return _refused(refused, request)
    except LookupError as missing:
        return _reply({"status": "not-found", "message": str(missing)}, 404)
    except asyncio.TimeoutError:
        sink.abort()
        return _reply({"status": "slow", "message": "the file was sent too slowly"}, 408)
    except BaseException:
        sink.abort()
        raise
    return _reply(
        {
            "status": "ok",
            "upload": token,
            "name": sink.name,
            "media_type": sink.media_type,
            "size": sink.size,
        }
    )
