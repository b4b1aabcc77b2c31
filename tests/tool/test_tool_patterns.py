"""The schema's patterns mean the same in Python ``re``, RE2 and ECMA-262 as in the validator."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from typing import Any

import pytest
import re2

from dsh_user_questions import UserQuestionError, tool

# Characters each pattern treats specially, their neighbours, and a few ordinary ones from
# every plane a model writes in (a lone surrogate is not text: RE2 and node never see one).
SPECIAL = (
    [chr(c) for c in range(0x00, 0x21)]
    + [chr(c) for c in range(0x7E, 0xA1)]
    + list("\u1680\u2000\u200a\u200b\u2027\u2028\u2029\u202a\u202e\u202f\u205f\u2066\u2069")
    + list("\u3000\ufeff\ufffd")
    + list("azAZ09_.-$^\\[]()*+?|/'\"")
    + list("éß日本語🙂\U0010fffd")
)


def published_patterns() -> list[str]:
    """Every distinct pattern of the published and the strict schema."""
    found: list[str] = []

    def walk(node: Any, names: bool = False) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                # Under "properties" the keys are property names (an input's "pattern" too).
                if not names and key == "pattern" and value not in found:
                    found.append(value)
                walk(value, names=not names and key == "properties")
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(tool.input_schema())
    walk(tool.input_schema(strict=True))
    return found


def samples(seed: int, count: int) -> list[str]:
    """``count`` strings: every special character alone, then random mixes biased to them."""
    rng = random.Random(seed)
    strings = ["", *SPECIAL, "a\n", "a\n\n", "\na", "a\r\n", "ok text", " lead", "trail "]
    while len(strings) < count:
        length = rng.choice([1, 2, 3, 5, 8, 20])
        strings.append("".join(rng.choice(SPECIAL) for _ in range(length)))
    return strings


def internal_verdicts(pattern: str, strings: list[str]) -> list[bool]:
    """What the package's validators decide: Python ``re`` with the final ``$`` as ``\\Z``."""
    compiled = re.compile(pattern[:-1] + r"\Z")
    return [compiled.search(s) is not None for s in strings]


STRINGS = samples(seed=9, count=3000)


def test_patterns_use_only_portable_syntax() -> None:
    """No lookaround, no \\u, \\p, \\s or \\Z, and every pattern is anchored by ^ and plain $."""
    patterns = published_patterns()
    assert len(patterns) == 2
    for pattern in patterns:
        assert pattern.startswith("^")
        assert pattern.endswith("$")
        for banned in ("(?", "\\u", "\\p", "\\s", "\\Z", "\\z"):
            assert banned not in pattern


@pytest.mark.parametrize("pattern", published_patterns())
def test_python_re_agrees_apart_from_its_final_newline(pattern: str) -> None:
    """Python re reads the published pattern like the validator, except that its $ also
    matches before a final newline (which is why the validator compiles \\Z instead)."""
    compiled = re.compile(pattern)
    expected = internal_verdicts(pattern, STRINGS)
    for text, verdict in zip(STRINGS, expected, strict=True):
        got = compiled.search(text) is not None
        if got != verdict:
            assert text.endswith("\n")
            assert not verdict
            assert internal_verdicts(pattern, [text[:-1]]) == [True]


@pytest.mark.parametrize("pattern", published_patterns())
def test_re2_agrees_with_the_validator(pattern: str) -> None:
    """RE2 (google-re2) compiles each pattern and gives the validator's verdict on every string."""
    compiled = re2.compile(pattern)
    expected = internal_verdicts(pattern, STRINGS)
    got = [compiled.search(text) is not None for text in STRINGS]
    disagreements = [s for s, a, b in zip(STRINGS, got, expected, strict=True) if a != b]
    assert disagreements == []
    assert True in got
    assert False in got


def node_verdicts(node: str, patterns: list[str], strings: list[str]) -> list[list[bool]]:
    """``new RegExp(p, "u").test(s)`` in node for every pattern and string."""
    script = (
        "const chunks = [];"
        "process.stdin.on('data', c => chunks.push(c));"
        "process.stdin.on('end', () => {"
        " const {patterns, strings} = JSON.parse(Buffer.concat(chunks).toString('utf8'));"
        " const out = patterns.map(p => { const r = new RegExp(p, 'u');"
        "  return strings.map(s => r.test(s)); });"
        " process.stdout.write(JSON.stringify(out)); });"
    )
    done = subprocess.run(
        [node, "-e", script],
        input=json.dumps({"patterns": patterns, "strings": strings}).encode(),
        capture_output=True,
        check=True,
        timeout=120,
    )
    verdicts: list[list[bool]] = json.loads(done.stdout)
    return verdicts


@pytest.fixture
def node_path() -> str:
    """The node executable; skipped where there is none, except under CI=true."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node is required under CI=true (the ECMA-262 check)")
        pytest.skip("node is not installed: the ECMA-262 check is skipped")
    return node


def test_ecma_262_agrees_with_the_validator(node_path: str) -> None:
    """node's RegExp with the "u" flag compiles each pattern and gives the same verdicts."""
    patterns = published_patterns()
    verdicts = node_verdicts(node_path, patterns, STRINGS)
    for pattern, got in zip(patterns, verdicts, strict=True):
        expected = internal_verdicts(pattern, STRINGS)
        disagreements = [s for s, a, b in zip(STRINGS, got, expected, strict=True) if a != b]
        assert disagreements == [], pattern


def test_the_validator_uses_the_internal_reading() -> None:
    """Text the published pattern lets through in Python re only by its final-newline quirk is
    still refused by read_arguments."""
    for field in ("question", "header"):
        arguments = {"questions": [{"id": "q", "question": "Which?", field: "Which?\n"}]}
        with pytest.raises(UserQuestionError) as caught:
            tool.read_arguments(arguments)
        assert caught.value.code == "INVALID_ARGS"
        assert f"questions[0].{field}: must not contain control characters" in str(caught.value)


def accepted(field: str, text: str) -> bool:
    """Whether read_arguments accepts ``text`` in ``field`` of an otherwise valid call."""
    question: dict[str, Any] = {"id": "q", "question": "Which?"}
    question[field] = text
    try:
        tool.read_arguments({"questions": [question]})
    except UserQuestionError as err:
        if err.code != "INVALID_ARGS":
            raise
        return False
    return True


@pytest.mark.parametrize(("field", "pattern_of"), [("question", "question"), ("id", "id")])
def test_the_whole_check_agrees_with_the_pattern_on_text(field: str, pattern_of: str) -> None:
    """For any text within the length limit (and no lone surrogate, which no engine but Python
    sees), read_arguments accepts it exactly when RE2 matches the published pattern: the
    pattern says every rule of the text, nothing is left to prose."""
    schema = tool.input_schema()["properties"]["questions"]["items"]["properties"]
    compiled = re2.compile(schema[pattern_of]["pattern"])
    disagreements = [
        text for text in STRINGS if (compiled.search(text) is not None) != accepted(field, text)
    ]
    assert disagreements == []
