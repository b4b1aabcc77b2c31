"""An answer's problems: English where the model and the code read them, the reader's language
where a person does.

`rules.check_answer` (and `_inputs.check_files`) list each breach as a `Problem`: a `str` whose
text is the English sentence (what ``UserQuestionError.problems`` and its message hold, what
the model reads: the same bytes in every language) that also keeps the catalog message it was
made from and its fields. A surface a person reads (the terminal, the link page) shows it
with `shown_problem` in its reader's language; any other text is shown as it is.
"""

from __future__ import annotations

from typing import Any

from ._i18n import N_, for_language

__all__ = ["Problem", "item_problem", "shown_problem"]


class Problem(str):
    """A problem's English text (``str(problem)``), with the message and fields it was made
    from: ``Problem(N_("has value {value} above the maximum {high}"), value=12, high=9)``.

    A field may be a `Problem` itself (a phrase translated with it). Equal to, and hashed as,
    its English text.
    """

    message: str
    fields: dict[str, Any]
    prefix: str

    def __new__(cls, message: str, **fields: Any) -> Problem:
        made = super().__new__(cls, message.format(**fields))
        made.message = message
        made.fields = fields
        made.prefix = ""
        return made

    def prefixed(self, prefix: str) -> Problem:
        """This problem after ``prefix`` (a path such as ``answer.``, shown untranslated)."""
        return _restored(prefix + str(self), self.message, self.fields, prefix + self.prefix)

    def __reduce__(self) -> tuple[Any, ...]:  # pickled and copied with its message and fields
        return (_restored, (str(self), self.message, self.fields, self.prefix))


def _restored(text: str, message: str, fields: dict[str, Any], prefix: str = "") -> Problem:
    made = str.__new__(Problem, text)
    made.message = message
    made.fields = fields
    made.prefix = prefix
    return made


def shown_problem(problem: str, language: str | None = None) -> str:
    """``problem`` as a person reading ``language`` reads it (default: the environment's
    language); text that is no `Problem` is returned as it is."""
    if not isinstance(problem, Problem):
        return problem
    fields = {
        name: shown_problem(value, language) if isinstance(value, Problem) else value
        for name, value in problem.fields.items()
    }
    return problem.prefix + for_language(language)(problem.message).format(**fields)


ITEM = N_("answers[{index}] (question {id}) {problem}")
"""How `rules.check_answer` names the answer item a problem is about (the message's form)."""


def item_problem(problem: str) -> str:
    """What a problem says about its answer item, without the item's name (``answers[0]
    (question "pkg") ``): for a surface that shows it beside the question itself."""
    if isinstance(problem, Problem) and problem.message == ITEM and not problem.prefix:
        inner = problem.fields["problem"]
        return inner if isinstance(inner, str) else str(inner)
    return problem
