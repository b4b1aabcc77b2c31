"""A team: who may answer a question, and how many must approve a review.

The one owner of these rules; every surface (the terminal, the inbox's store and page, the web
provider) asks here rather than deciding itself:

- `People`: the team's people file (``DSH_USER_QUESTIONS_PEOPLE``, TOML): each person's
  Apprise tags, the groups an audience names as ``group:NAME``, and an optional escalation.
- `may_answer`: whether a person may answer a request (its ``audience``), or the exact refusal.
- `tally`: given every answer so far, whether a review that needs several approvals
  (``intent.approvals``) has settled, with which answer, and who approved it.

Pure: nothing here reads anything but the people file (`People.load`, `People.from_env`).
"""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

import attrs

from ._payloads import AskUserQuestionAnswer, AskUserQuestionItem, AskUserQuestionRequest
from .errors import UserQuestionError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["People", "Settlement", "may_answer", "tally"]

PEOPLE_ENV: Final = "DSH_USER_QUESTIONS_PEOPLE"
"""The environment variable naming the people file `People.from_env` reads."""

GROUP_PREFIX: Final = "group:"
"""An audience entry starting with this names a group of the people file (``group:oncall``)."""

MAX_PERSON_LENGTH: Final = 64
"""The longest person id (and group name)."""

_ID_RULE = "1 to 64 characters, no spaces or control characters"
# Separators, controls, format characters (bidi overrides, zero-width), surrogates, unassigned.
_FORBIDDEN_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"})


def _is_name(text: object) -> bool:
    """Whether ``text`` is a person id or a group name: `_ID_RULE`."""
    return (
        isinstance(text, str)
        and 0 < len(text) <= MAX_PERSON_LENGTH
        and not any(unicodedata.category(char) in _FORBIDDEN_CATEGORIES for char in text)
    )


def is_person_id(text: object) -> bool:
    """Whether ``text`` is a valid person id (1 to 64 characters, no spaces or control
    characters, not a ``group:`` entry)."""
    return _is_name(text) and not str(text).startswith(GROUP_PREFIX)


def _frozen_groups(value: Mapping[str, Iterable[str]]) -> Mapping[str, frozenset[str]]:
    return MappingProxyType({name: frozenset(members) for name, members in value.items()})


def _frozen_tags(value: Mapping[str, Iterable[str]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({name: tuple(tags) for name, tags in value.items()})


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen(hash=False)
class People:
    """A team's people: each person's Apprise tags, its groups, and when to escalate.

    ``tags`` maps a person id to the Apprise tags of their notification targets (a person the
    file does not list has none); ``groups`` maps a group's name (without ``group:``) to its
    members. ``escalate_after`` (seconds) and ``escalate_to`` (audience entries) say: a question
    unanswered that long is notified to, and may also be answered by, those too (the inbox acts
    on it). Build one with `load` or `from_env`; the empty ``People()`` knows no group.
    """

    groups: Mapping[str, frozenset[str]] = attrs.field(factory=dict, converter=_frozen_groups)
    tags: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict, converter=_frozen_tags)
    escalate_after: float | None = None
    escalate_to: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    source: str | None = attrs.field(default=None, eq=False)
    """The file it was read from (for messages), or None."""

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> People:
        """Read the people file at ``path`` (TOML).

        Raises `ValueError` naming the file and the line (TOML syntax) or the key that is
        wrong, and `OSError` when it cannot be read.
        """
        name = os.fspath(path)
        with open(name, "rb") as file:
            raw = file.read()
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as err:
            raise ValueError(f"people file {name}: not UTF-8 text ({err.reason})") from None
        except tomllib.TOMLDecodeError as err:
            raise ValueError(f"people file {name}: not TOML: {err}") from None
        return _parse(data, name)

    @classmethod
    def from_env(cls) -> People:
        """The people file named by ``DSH_USER_QUESTIONS_PEOPLE``; unset or empty: no people.

        Read again only when the file changes (its modification time and size). Raises
        `ValueError` naming the file (and the line or key) when it is not a people file, or
        when it cannot be read.
        """
        name = os.environ.get(PEOPLE_ENV, "")
        if not name:
            return _EMPTY
        try:
            stat = os.stat(name)
        except OSError as err:
            raise ValueError(
                f"people file {name} ({PEOPLE_ENV}) cannot be read: {err.strerror}"
            ) from None
        stamp = (name, stat.st_mtime_ns, stat.st_size)
        cached = _CACHE.get(name)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            people = cls.load(name)
        except OSError as err:
            raise ValueError(
                f"people file {name} ({PEOPLE_ENV}) cannot be read: {err.strerror}"
            ) from None
        _CACHE[name] = (stamp, people)
        return people

    def expand(self, audience: Iterable[str]) -> frozenset[str]:
        """The persons ``audience`` names: its person ids, and its groups' members.

        Raises ``BAD_AUDIENCE`` (a `UserQuestionError`) naming the entry that is not a person
        id nor ``group:NAME``, names no group of this file, or names a group without members.
        """
        persons: set[str] = set()
        for index, entry in enumerate(audience):
            quoted = _quoted(entry)
            if not isinstance(entry, str):
                raise UserQuestionError.bad_audience(f"entry {index} is not a string")
            if entry.startswith(GROUP_PREFIX):
                group = entry[len(GROUP_PREFIX) :]
                if not _is_name(group):
                    raise UserQuestionError.bad_audience(
                        f"entry {index} {quoted} is not a person id or group:NAME ({_ID_RULE})"
                    )
                members = self.groups.get(group)
                if members is None:
                    where = self.source if self.source is not None else f"{PEOPLE_ENV} is not set"
                    raise UserQuestionError.bad_audience(
                        f"entry {index} {quoted} names no group of the people file ({where})"
                    )
                if not members:
                    raise UserQuestionError.bad_audience(
                        f"entry {index} {quoted} names a group without members"
                    )
                persons |= members
            elif is_person_id(entry):
                persons.add(entry)
            else:
                raise UserQuestionError.bad_audience(
                    f"entry {index} {quoted} is not a person id or group:NAME ({_ID_RULE})"
                )
        return frozenset(persons)

    def tags_for(self, persons: Iterable[str]) -> tuple[str, ...]:
        """The Apprise tags of ``persons`` (in the order given, each tag once); a person the
        file does not list has none."""
        found: dict[str, None] = {}
        for person in persons:
            for tag in self.tags.get(person, ()):
                found.setdefault(tag, None)
        return tuple(found)


_EMPTY: Final = People()
_CACHE: dict[str, tuple[tuple[str, int, int], People]] = {}


def _quoted(entry: object) -> str:
    from .rules import inert_text

    return '"' + inert_text(str(entry)[:80]) + '"'


def _parse(data: Mapping[str, Any], name: str) -> People:
    def fail(key: str, problem: str) -> ValueError:
        return ValueError(f"people file {name}: {key}: {problem}")

    unknown = sorted(set(data) - {"people", "groups", "escalation"})
    if unknown:
        raise fail(unknown[0], "unknown table (expected people, groups, escalation)")
    tags: dict[str, tuple[str, ...]] = {}
    people = data.get("people", {})
    if not isinstance(people, Mapping):
        raise fail("people", "must be a table of persons ([people.NAME])")
    for person, entry in people.items():
        key = f"people.{person}"
        if not is_person_id(person):
            raise fail(key, f"is not a person id ({_ID_RULE}, not group:)")
        if not isinstance(entry, Mapping):
            raise fail(key, "must be a table ([people.NAME] with tags = [...])")
        extra = sorted(set(entry) - {"tags"})
        if extra:
            raise fail(f"{key}.{extra[0]}", "unknown key (expected tags)")
        person_tags = entry.get("tags", [])
        if not isinstance(person_tags, list) or not all(
            isinstance(tag, str) and tag and not any(char.isspace() for char in tag)
            for tag in person_tags
        ):
            raise fail(f"{key}.tags", "must be a list of Apprise tags (non-empty, no spaces)")
        tags[person] = tuple(person_tags)
    groups: dict[str, frozenset[str]] = {}
    table = data.get("groups", {})
    if not isinstance(table, Mapping):
        raise fail("groups", 'must be a table of lists (oncall = ["ana", "bo"])')
    for group, members in table.items():
        key = f"groups.{group}"
        if not _is_name(group):
            raise fail(key, f"is not a group name ({_ID_RULE})")
        if not isinstance(members, list):
            raise fail(key, "must be a list of person ids")
        for index, member in enumerate(members):
            if not is_person_id(member):
                raise fail(f"{key}[{index}]", f"is not a person id ({_ID_RULE}, not group:)")
        groups[group] = frozenset(members)
    after: float | None = None
    to: tuple[str, ...] = ()
    escalation = data.get("escalation")
    if escalation is not None:
        if not isinstance(escalation, Mapping):
            raise fail("escalation", "must be a table (after = SECONDS, to = [...])")
        extra = sorted(set(escalation) - {"after", "to"})
        if extra:
            raise fail(f"escalation.{extra[0]}", "unknown key (expected after, to)")
        raw_after = escalation.get("after")
        if (
            isinstance(raw_after, bool)
            or not isinstance(raw_after, (int, float))
            or not 0 < raw_after < float("inf")
        ):
            raise fail("escalation.after", "must be a positive number of seconds")
        raw_to = escalation.get("to")
        if (
            not isinstance(raw_to, list)
            or not raw_to
            or not all(isinstance(entry, str) for entry in raw_to)
        ):
            raise fail("escalation.to", "must be a non-empty list of person ids and group:NAME")
        after, to = float(raw_after), tuple(raw_to)
    found = People(groups, tags, after, to, name)
    if to:
        try:
            found.expand(to)
        except UserQuestionError as err:
            raise fail("escalation.to", str(err)) from None
    return found


def _audience_text(audience: Sequence[str]) -> str:
    return ", ".join(audience)


def audience_persons(
    request: AskUserQuestionRequest, people: People | None = None
) -> frozenset[str]:
    """The persons ``request``'s audience names (empty for none), its groups expanded with
    ``people`` (default: `People.from_env`, read only for an audience with a group).

    Raises ``BAD_AUDIENCE`` for an entry `People.expand` refuses, or a people file that cannot
    be read (`rules.check_request` and `may_answer` both come here).
    """
    audience = request.audience
    if not audience:
        return frozenset()
    if people is None:
        if any(entry.startswith(GROUP_PREFIX) for entry in audience):
            try:
                people = People.from_env()
            except ValueError as err:
                raise UserQuestionError.bad_audience(
                    f"needs the people file, which cannot be read: {err}"
                ) from None
        else:
            people = _EMPTY  # persons alone need no file
    return people.expand(audience)


def may_answer(
    request: AskUserQuestionRequest, person: str | None, people: People | None = None
) -> str | None:
    """None when ``person`` may answer ``request``; otherwise the exact refusal message.

    Anyone may answer a request without an ``audience``. Otherwise ``person`` must be one of
    the persons it names or a member of one of its groups (``people``; default
    `People.from_env`). A question with an audience is never answered by nobody (``None``) nor
    by the page's token holder (``token``): they are asked to sign in. The refusal is
    ``NOT_IN_AUDIENCE``'s message (`UserQuestionError.not_in_audience`), e.g. ``bo may not
    answer this question: it is for group:oncall``. Raises ``BAD_AUDIENCE`` for an audience
    `People.expand` refuses or a people file that cannot be read.

    A surface admitting an escalation's people too (`People.escalate_to`, once its time has
    passed) asks with them added: ``may_answer(attrs.evolve(request, audience=(*audience,
    *people.escalate_to)), person, people)``.
    """
    audience = request.audience
    if not audience:
        return None
    from ._identity import TOKEN_HOLDER

    persons = audience_persons(request, people)
    if person is not None and person != TOKEN_HOLDER and person in persons:
        return None
    return UserQuestionError.not_in_audience(person, _audience_text(audience)).message


@attrs.frozen
class Settlement:
    """Where a request stands, given its answers so far (`tally`).

    ``settled`` is the answer that settles it (its ``answered_by`` is who settled it), or None
    while more approvals are needed; ``approvers`` the distinct persons who approved, in order
    (their first approval's); ``needed`` the approvals it needs (``intent.approvals``, 1 for
    every other request) and ``have`` how many distinct persons approved so far.
    """

    settled: AskUserQuestionAnswer | None
    approvers: tuple[str, ...]
    needed: int
    have: int


def review_question(request: AskUserQuestionRequest) -> AskUserQuestionItem | None:
    """The request's question whose intent counts approvals (``approvals`` above 1), or None."""
    for question in request.questions:
        if question.intent is not None and question.intent.approvals > 1:
            return question
    return None


def approves(question: AskUserQuestionItem, answer: AskUserQuestionAnswer) -> bool:
    """Whether ``answer`` approves review ``question``: its one item for it selects exactly
    the intent's approve label, with no custom text (as `plan_review` reads a verdict)."""
    assert question.intent is not None
    items = [item for item in answer.answers if item.id == question.id]
    return (
        len(items) == 1
        and items[0].selected == (question.intent.approve,)
        and items[0].custom is None
    )


def tally(request: AskUserQuestionRequest, answers: Sequence[AskUserQuestionAnswer]) -> Settlement:
    """Whether ``answers`` (every answer given so far, in order) settle ``request``.

    A request whose intent needs no more than one approval is settled by its first answer. A
    review needing ``approvals`` N settles with the N-th distinct person's approval (one person
    counts once, whatever the tabs or surfaces they answered from; an approval without
    ``answered_by`` counts for no one), or at once with the first answer that does not approve
    (feedback, a skip): that person's answer. Pure: no I/O; the caller has already refused
    outsiders (`may_answer`).
    """
    question = review_question(request)
    if question is None:
        first = answers[0] if answers else None
        by = () if first is None or first.answered_by is None else (first.answered_by,)
        approved = first is not None and _approves_any(request, first)
        return Settlement(first, by if approved else (), 1, 1 if approved else 0)
    assert question.intent is not None
    needed = question.intent.approvals
    approvers: dict[str, None] = {}
    for answer in answers:
        if not approves(question, answer):
            return Settlement(answer, tuple(approvers), needed, len(approvers))
        if answer.answered_by is None or answer.answered_by in approvers:
            continue
        approvers[answer.answered_by] = None
        if len(approvers) >= needed:
            return Settlement(answer, tuple(approvers), needed, len(approvers))
    return Settlement(None, tuple(approvers), needed, len(approvers))


def _approves_any(request: AskUserQuestionRequest, answer: AskUserQuestionAnswer) -> bool:
    """Whether ``answer`` approves a review of ``request`` (a request without one: no)."""
    return any(
        question.intent is not None and approves(question, answer) for question in request.questions
    )
