"""One-line adapters of the ``ask_user_question`` tool for agent frameworks.

Each module needs its framework, installed through this package's extra of the same name:

- `dsh_user_questions.adapters.pydantic_ai` (``pip install 'dsh-user-questions[pydantic-ai]'``);
- `dsh_user_questions.adapters.openai_agents` (``[openai-agents]``);
- `dsh_user_questions.adapters.langchain` (``[langchain]``);
- `dsh_user_questions.adapters.langgraph` (``[langgraph]``): durable, a graph paused with
  ``interrupt()`` and resumed by `answer_interrupts`.
- `dsh_user_questions.adapters.claude_agent_sdk` (``[claude-agent-sdk]``): the ``can_use_tool``
  callback answering Claude Code's own ``AskUserQuestion`` and ``ExitPlanMode``.

Every adapter offers the same tool (`dsh_user_questions.tool`: schema, description, result
text) as the framework's own tool type, runs every call through `tool.run` (live and durable
alike), turns ``INVALID_ARGS`` into the framework's way of asking the model to retry, and
passes the agent and the abort signal through to ``ask()``. Cancelling the framework's run
cancels the pending ask, and with it the provider's question. Each has a durable mode too
(LangGraph's ``interrupt()``, pydantic-ai's deferred tools, the Agents SDK's tool approvals):
the question carries the ``key`` `tool.durable_key` makes of the framework's run identity and
the tool call id, so a durable provider such as the inbox keeps it through a crash, and no two
runs share one. A secret answer's clear text goes only to the adapter's ``on_secrets`` hook;
the model and whatever the framework saves get the placeholder. This package imports none of
the frameworks: ``import dsh_user_questions`` stays light.
"""

__all__: list[str] = []  # each adapter is its own module; nothing is imported from here
