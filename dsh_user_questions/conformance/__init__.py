"""A conformance suite a user-questions provider runs against itself.

Subclass `ProviderConformance` in a test module, implement ``connect(ctx)`` to install your
provider on a fresh harness context and yield a `ProviderDriver` for its UI, and pytest reports a
pass or fail for every rule of the provider contract::

    import contextlib

    from dsh_user_questions.conformance import ProviderConformance


    class TestMyProvider(ProviderConformance):
        @contextlib.asynccontextmanager
        async def connect(self, ctx):
            provider = MyProvider()
            dispose = ctx.user_questions.register_provider(provider)
            try:
                yield MyDriver(provider)  # screen(), reply(request, replies), cancel(request)
            finally:
                dispose()

The driver plays the human: it reads what the UI shows and answers with the replies the suite
gives (`Choose`, `Other`, `Skip`, and `Approve`, `KeepPlanning`, `TalkInstead` on a plan
review). It also says what the surface told the human about an answer (``receipt(request)``,
`ReceiptDriver`) and, for a provider that keeps anything at rest, shows it (``stored()``,
`StoreDriver`). Everything else (asking through the real service, aborting, cancelling,
closing the context, comparing answers, judging that model text is inert by
`dsh_user_questions.rules.inert_text`, that answers follow `rules.check_answer`, that a receipt
means taken, that a recommended option is never picked and a secret never kept) is the
suite's. A rule a provider cannot keep goes into ``opt_out`` with the reason.

**Typed inputs.** A provider declares the input types it renders in
`ProviderConformance.input_types` (``{"number", "date", "time", "datetime", "files",
"upload"}``); the suite then checks each: the driver answers with `Enter` (a value, or the paths
to pick) or `Attach` (a local file to upload), and the asker must get that value (an upload as a
record whose name, size and sha256 are the file's, at a path holding its bytes); a number out
of range is never an answer. The checks of an undeclared type are skipped, saying so.

**Durable runs.** A provider that keeps questions across processes (the inbox) makes these
guarantees to a durable run, which its own test suite checks across ``kill -9``, a clean stop
and a restart (``providers/inbox/tests/provider/test_durability.py``,
``tests/durable/test_adapters_durable.py``): the run that asked gets its answer, exactly once; keys
are the run's identity plus the tool call id (`dsh_user_questions.tool.durable_key`), so two runs
never share a record; a second live asker of a key is refused while another holds it; an answer not
yet delivered is never pruned; secrets never leave the harness in clear. The suite's own checks here
are the ones every provider shares.
"""

from __future__ import annotations

from ._driver import ProviderDriver, ReceiptDriver, StoreDriver
from ._replies import (
    Approve,
    Attach,
    Choose,
    Enter,
    KeepPlanning,
    Other,
    Reply,
    Skip,
    TalkInstead,
)
from ._suite import ProviderConformance

__all__ = [
    "Approve",
    "Attach",
    "Choose",
    "Enter",
    "KeepPlanning",
    "Other",
    "ProviderConformance",
    "ProviderDriver",
    "ReceiptDriver",
    "Reply",
    "Skip",
    "StoreDriver",
    "TalkInstead",
]
