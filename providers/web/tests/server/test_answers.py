"""The strict answer check of the web protocol, and the page's promise about model text."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import item
from dsh_user_questions import UserQuestionError, UserQuestionErrorCode
from dsh_user_questions.rules import check_answer
from hypothesis import given, settings
from hypothesis import strategies as st

import dsh_user_questions_web
from dsh_user_questions_web import check_page_answer

PACKAGE = Path(dsh_user_questions_web.__file__).parent
README = Path(__file__).resolve().parents[2] / "README.md"
QUESTIONS = (item("a"), item("b", options=("x", "y"), multi_select=True), item("c", options=()))

labels = st.sampled_from(["pnpm", "npm", "yarn", "x", "y", "", " ", "<b>"])
wire_items = st.fixed_dictionaries(
    {"id": st.sampled_from(["a", "b", "c", "d"]), "selected": st.lists(labels, max_size=3)},
    optional={"custom": st.one_of(st.none(), st.text(max_size=5))},
)


@settings(deadline=None)  # timings belong in the benchmark, not in a property
@given(st.lists(wire_items, max_size=4))
def test_accepted_answers_are_exact_and_pass_the_core_check(items: list[dict[str, Any]]) -> None:
    """Whatever a page posts is either rejected as BAD_ANSWER or exact and core-valid."""
    wire = {"answers": [{k: v for k, v in i.items() if v is not None} for i in items]}
    try:
        checked = check_page_answer(QUESTIONS, wire)
    except UserQuestionError as err:
        code = err.code
    else:
        code = None
    if code is not None:
        assert code == UserQuestionErrorCode.BAD_ANSWER
    else:
        assert [answer.id for answer in checked.answers] == ["a", "b", "c"]
        assert check_answer(QUESTIONS, checked) == checked


def test_every_question_skipped_is_accepted() -> None:
    """An answer that skips every question in order is valid."""
    wire = {"answers": [{"id": "a", "selected": []}, {"id": "b"}, {"id": "c"}]}
    assert [i.selected for i in check_page_answer(QUESTIONS, wire).answers] == [(), (), ()]


def test_a_missing_item_names_the_expected_order() -> None:
    """Leaving a question out is BAD_ANSWER listing the ids expected, in order."""
    with pytest.raises(UserQuestionError) as caught:
        check_page_answer(QUESTIONS, {"answers": [{"id": "a"}, {"id": "c"}]})
    assert caught.value.code == UserQuestionErrorCode.BAD_ANSWER
    assert 'expected ["a", "b", "c"], got ["a", "c"]' in caught.value.message


def test_the_page_script_never_parses_html() -> None:
    """app.js uses no API that turns a string into markup or code, and guards its one link."""
    script = (PACKAGE / "_static" / "app.js").read_text()
    code = "\n".join(line for line in script.splitlines() if not line.strip().startswith("//"))
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
        "createContextualFragment",
        "DOMParser",
        "srcdoc",
        ".src",
    ):
        assert sink not in code, sink
    # One link target is ever set: the markdown tree's, and only for http(s) and mailto.
    hrefs = [line.strip() for line in code.splitlines() if ".href" in line]
    assert hrefs == [
        'if (tag === "a" && typeof a.href === "string" && SAFE_HREF.test(a.href)) {',
        "out.href = a.href;",
    ]
    assert "const SAFE_HREF = /^(https?:|mailto:)/i;" in code


def test_the_readme_documents_every_environment_variable() -> None:
    """Each DSH_USER_QUESTIONS_WEB_* variable the code reads is in the README, and no other."""
    from dsh_user_questions_web import _provider as provider

    readme = set(re.findall(r"DSH_USER_QUESTIONS_WEB_[A-Z_]+", README.read_text()))
    code = set(re.findall(r"DSH_USER_QUESTIONS_WEB_[A-Z_]+", Path(provider.__file__).read_text()))
    assert readme == code


def test_a_page_answer_is_the_token_holders_whatever_it_claims() -> None:
    """The page knows no people: ``answered_by`` is ``token``, never a name the body gives."""
    wire = {
        "answers": [{"id": "a", "selected": []}, {"id": "b"}, {"id": "c"}],
        "answered_by": "the-ceo",
    }
    assert check_page_answer(QUESTIONS, wire).answered_by == "token"
