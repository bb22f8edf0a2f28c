"""gpuspec runs the parser tables itself (parse._Runtime over parse_tables.RUNTIME); it must parse as Lark does.

Each input is parsed twice into the same generic tree (a tuple per rule, every token with its type, text and
position): by Lark, over the tables it loads from parse_tables, and by the runtime with a builder that only records
what it is given. The two must agree on every tree, and on every input that one refuses (a syntax error, which Lark
then words) or whose indentation matches no enclosing block. The inputs are the bundled specs and every gpu block
of the documentation and test documents, each cut short at many places and with lines dropped, repeated or
reindented, and specs grown from the language and mutated (tests/fuzzing.py).
"""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from fuzzing import fuzz_settings, mutated_specs, odd_unicode_specs, valid_specs
from hypothesis import given

from gpuspec import parse, parse_tables

ROOT = Path(__file__).resolve().parent.parent


class _Recorder:
    """A builder that builds nothing: each rule's value is (its name, its children as given)."""

    def __getattr__(self, name: str):
        if name.startswith("_"):  # an `_rule`: its children go to its parent, as in Lark's trees
            raise AttributeError(name)
        return lambda children: (name, [_plain(child) for child in children])


def _plain(value):
    """A token as a tuple of what it says and where; a Lark tree as a rule's tuple; anything else as it is."""
    if isinstance(value, str):  # both Lark's tokens and gpuspec's are str
        return (value.type, str(value), value.start_pos, value.line, value.column, value.end_line,
                value.end_column, value.end_pos)
    if hasattr(value, "data") and hasattr(value, "children"):
        return (value.data, [_plain(child) for child in value.children])
    return value


@pytest.fixture(scope="module")
def parsers():
    from lark import Lark

    memo, data = parse_tables.lark_tables()
    lark = Lark._load_from_dict(data, memo, postlex=parse._indenter())
    return lark, parse._Runtime(parse_tables.RUNTIME, _Recorder())


def _outcome(parser, text: str, runtime: bool):
    """The tree, or what stopped it: 'refused' (a syntax error) or ('indent', where)."""
    from lark.exceptions import UnexpectedInput

    text = text if text.endswith("\n") else text + "\n"
    try:
        if runtime:
            return parser.parse(text, parse._Brackets())
        return _plain(parser.parse(text))
    except (parse._Refused, UnexpectedInput):
        return "refused"
    except parse._BadIndent as error:
        return ("indent", error.token.start_pos, error.token.end_line)


def _same(parsers, text: str) -> None:
    lark, runtime = parsers
    assert _outcome(runtime, text, True) == _outcome(lark, text, False), text


def _documented() -> list[str]:
    texts = [path.read_text(encoding="utf-8") for path in sorted((ROOT / "specs").glob("*.gpu"))]
    texts += [path.read_text(encoding="utf-8") for path in sorted((ROOT / "benchmarks").rglob("*.gpu"))]
    for path in [ROOT / "README.md", *sorted((ROOT / "tests" / "documents").glob("*.md"))]:
        texts += re.findall(r"```gpu[^\n]*\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    return texts


def test_the_runtime_parses_every_documented_spec_as_lark_does(parsers):
    texts = _documented()
    assert len(texts) > 100
    for text in texts:
        _same(parsers, text)


def test_the_runtime_parses_documented_specs_cut_short_and_shuffled_as_lark_does(parsers):
    rng = random.Random(17)
    for text in _documented():
        for cut in range(0, len(text), max(1, len(text) // 12)):
            _same(parsers, text[:cut])
        lines = text.split("\n")
        for _ in range(4):
            changed = list(lines)
            at = rng.randrange(len(changed))
            how = rng.randrange(4)
            if how == 0:
                del changed[at]
            elif how == 1:
                changed.insert(at, rng.choice(lines))
            elif how == 2:
                changed[at] = rng.choice(("  ", "\t", "   ")) + changed[at]
            else:
                words = changed[at].split(" ")
                rng.shuffle(words)
                changed[at] = " ".join(words)
            _same(parsers, "\n".join(changed))


def test_the_runtime_parses_grown_and_mutated_specs_as_lark_does(parsers):
    @fuzz_settings(0.5)
    @given(text=valid_specs())
    def grown(text):
        _same(parsers, text)

    @fuzz_settings(0.5)
    @given(data=mutated_specs() | odd_unicode_specs())
    def mutated(data):
        _same(parsers, data.decode("utf-8", "replace"))

    grown()
    mutated()


def test_each_terminal_is_tried_only_where_a_match_of_it_may_start(parsers):
    # The lexer skips a terminal at a character its match cannot start with: that must never skip a match. Every
    # character of the test inputs, at every position a terminal matches there, is one its first characters hold.
    tables = parse_tables.RUNTIME
    for name, (regexp, low, high) in tables["terminals"].items():
        pattern = re.compile(regexp)
        for text in _documented()[:60]:
            for at in range(len(text)):
                if pattern.match(text, at):
                    char = text[at]
                    assert char in low if char < "\x80" else (high is None or char in high), (name, char)


def test_the_quick_span_is_a_span():
    # text.span makes a Span without attrs' __init__: right only while every field is plain (no converter,
    # validator, default factory or hook), as Span's are.
    import attrs

    from gpuspec.text import Span, span

    fields = attrs.fields(Span)
    assert [f.name for f in fields] == ["file", "line", "column", "end_line", "end_column", "start", "end"]
    assert all(f.converter is None and f.validator is None and f.on_setattr is None for f in fields)
    assert not hasattr(Span, "__attrs_post_init__") and not hasattr(Span, "__attrs_pre_init__")
    quick, made = span("a.gpu", 2, 3, 4, 5, 6, 7), Span("a.gpu", 2, 3, 4, 5, 6, 7)
    assert type(quick) is Span and quick == made and hash(quick) == hash(made) and repr(quick) == repr(made)
    assert all(getattr(quick, f.name) == getattr(made, f.name) for f in fields)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        quick.line = 3
