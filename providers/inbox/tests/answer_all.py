"""A separate process answering every given question: ``answer_all.py URL SURFACE ID...``.

Prints one JSON line per question: its id and the outcome this process got.
"""

from __future__ import annotations

import json
import sys

from dsh_user_questions_inbox import open_inbox


def main() -> None:
    url, surface, *ids = sys.argv[1:]
    inbox = open_inbox(url)
    sys.stdin.readline()  # start together: the test releases every process at once
    for question_id in ids:
        label = "pnpm" if surface.endswith(("0", "2", "4", "6", "8")) else "npm"
        result = inbox.answer(
            question_id, {"answers": [{"id": "pkg", "selected": [label]}]}, surface=surface
        )
        print(json.dumps({"id": question_id, "outcome": result.outcome.value}), flush=True)
    inbox.close()


if __name__ == "__main__":
    main()
