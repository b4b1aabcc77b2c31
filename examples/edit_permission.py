"""A permission plugin: ask the human before a file edit is applied, showing the diff.

A harness's file-editing tool calls `EditPermission.apply` instead of writing the file itself.
The change is shown as a unified diff (built with difflib) through the ``diff-review`` intent:
the terminal and the page draw it as a diff, any other UI shows it as the question's detail.
Apply writes the file; anything else leaves it untouched and says why, for the model.
"""

import difflib
from pathlib import Path

from dsh_user_questions.diff_review import DiffReviewDecision, review_diff


def unified_diff(path, old, new):
    """The unified diff from ``old`` to ``new`` (texts) of the file at ``path``."""
    lines = []
    for line in difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    ):
        if line.endswith("\n"):
            lines.append(line)
        else:  # the last line of a file without a final newline
            lines.append(line + "\n\\ No newline at end of file\n")
    return "".join(lines)


class EditPermission:
    """Asks through ``service`` (``ctx.user_questions``) before each edit under ``root``."""

    def __init__(self, service, root):
        self.service = service
        self.root = Path(root)

    async def apply(self, path, new_text, *, agent=None, signal=None):
        """Write ``new_text`` to ``path`` (relative to the root) if the human applies it.

        Returns the text for the model: what happened, and the human's feedback if any.
        """
        target = self.root / path
        old_text = target.read_text(encoding="utf-8") if target.exists() else ""
        if old_text == new_text:
            return f"{path} already has this content; nothing to apply."
        diff = unified_diff(path, old_text, new_text)
        outcome = await review_diff(self.service, diff, title=path, agent=agent, signal=signal)
        if outcome.decision is DiffReviewDecision.APPLY:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(new_text, encoding="utf-8")
            return f"Applied the edit to {path}."
        if outcome.decision is DiffReviewDecision.TALK_INSTEAD:
            return f"The user closed the review of {path} to talk first; nothing was applied."
        feedback = f" Their feedback: {outcome.feedback}" if outcome.feedback else ""
        return f"The user did not apply the edit to {path}.{feedback}"
