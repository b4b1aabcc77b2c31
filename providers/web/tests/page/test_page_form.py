"""What the page is sent of an ask: each question as the core's one view of it."""

from __future__ import annotations

from dsh_user_questions import AskUserQuestionItem
from dsh_user_questions.diff_review import diff_review_question
from dsh_user_questions.view import question_view

from dsh_user_questions_web._stream import page_form

ESC = "\x1b[2J"


class TestPageForm:
    """A question reaches the page only as its view; the ask keeps its own fields."""

    def test_each_question_is_its_view(self) -> None:
        """The page gets each question's `QuestionView.to_dict`, nothing of the wire form."""
        wire = {
            "id": "layout",
            "question": f"Which layout?{ESC}",
            "detail": f"# Why\n\nBecause{ESC}",
            "options": [
                {"label": "grid", "preview": f"**Grid**\n\n```\n| a | b |{ESC}\n```"},
                {"label": "list"},
            ],
        }
        form = page_form({"id": "ask-1", "agent": "main", "questions": [wire]})
        [question] = form["questions"]
        assert question == question_view(AskUserQuestionItem.from_dict(wire)).to_dict()
        assert "\x1b" not in question["question"]
        grid, plain = question["options"]
        assert ["strong", {}, "Grid"] in grid["preview"][0]
        assert "\x1b" not in grid["preview"][1][2][2]
        assert plain["preview"] is None

    def test_a_diff_review_is_sent_parsed(self) -> None:
        """A diff review's card kind and parsed diff come from the view; Apply approves."""
        item = diff_review_question("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
        [question] = page_form({"id": "ask-2", "questions": [item.to_dict()]})["questions"]
        assert question["kind"] == "diff-review"
        assert question["diff"]["files"][0]["new"] == "b/x"
        assert [option["approves"] for option in question["options"]] == [True, False]

    def test_the_ask_keeps_its_fields_and_an_inert_agent(self) -> None:
        """The ask's own fields stay; ``agentShown`` is the agent's name, inert."""
        ask = {"id": "ask-3", "agent": f"bot{ESC}", "createdAt": 1.0, "questions": []}
        form = page_form(ask)
        assert form["id"] == "ask-3"
        assert form["agent"] == f"bot{ESC}"
        assert form["createdAt"] == 1.0
        assert form["agentShown"] == "bot<U+001B>[2J"
