"""The property of `fmt`: for any spec text (grown from the language or a mutated bundled spec), with any mix of
line breaks and an optional byte-order mark, checking after fmt gives the verdicts and values that checking
before it gave, fmt changes nothing the second time, and the bytes it does not lay out (line breaks, the mark,
Markdown prose) are kept."""
from __future__ import annotations

import re

from fuzzing import bases, fuzz_settings, mutations, pick, valid_specs
from hypothesis import given
from hypothesis import strategies as st

from gpuspec.api import run_check
from gpuspec.fmt import FormatError, format_markdown, format_spec
from gpuspec.text import read_file, split_lines, write_back

_BREAK = re.compile(r"\r\n|\r|\n")


@st.composite
def spec_texts(draw) -> str:
    """A grown spec, or a bundled one (or part of one) after a mutation, its line breaks each \\n, \\r\\n or \\r."""
    text = draw(valid_specs()) if draw(st.booleans()) else draw(bases())
    if draw(st.integers(0, 2)) == 0:
        text = draw(mutations(text))
    lines = _BREAK.split(text)
    style = pick(draw, ("\n", "\r\n", "\r", "mixed"))
    breaks = [pick(draw, ("\n", "\r\n", "\r")) if style == "mixed" else style for _ in lines[1:]]
    return lines[0] + "".join(brk + line for brk, line in zip(breaks, lines[1:]))


def outcome(path) -> tuple:
    """What a check of the file says, without where: each verdict's claim, status and value; each error's code."""
    report = run_check([str(path)])
    # a value written as arithmetic is quoted as written, and fmt may only have moved its spaces (`1^1 %`, `1^1%`)
    verdicts = [(v.claim.metric, v.claim.comparator, "".join(v.claim.expected.written.split()), v.source, v.status,
                 None if v.actual is None else repr(v.actual.number)) for v in report.verdicts]
    return verdicts, sorted(d.code for d in report.diagnostics)


def _formatted_once(path, markdown: bool) -> str | None:
    """fmt, as the command does it: the new text, written back; None when fmt refuses (nothing written)."""
    read = read_file(path)
    try:
        formatted = format_markdown(read.written, str(path)) if markdown else format_spec(read.written, str(path))
    except FormatError:
        return None
    if formatted != read.written:
        write_back(read, formatted)
    return formatted


@fuzz_settings(0.2)
@given(text=spec_texts(), bom=st.booleans())
def test_fmt_then_check_says_what_check_alone_says_and_fmt_is_idempotent(tmp_path_factory, text, bom):
    path = tmp_path_factory.mktemp("fmt") / "a.gpu"
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8", "surrogatepass"))
    before = outcome(path)
    formatted = _formatted_once(path, markdown=False)
    if formatted is None:  # refused: the file is as it was
        assert path.read_bytes() == ("\ufeff" if bom else "").encode() + text.encode("utf-8", "surrogatepass")
        return
    assert outcome(path) == before, (text, formatted)
    assert path.read_bytes().startswith(b"\xef\xbb\xbf") == bom
    if len(set(_BREAK.findall(text))) == 1:  # one kind of line break: fmt writes that kind
        assert set(_BREAK.findall(formatted)) <= set(_BREAK.findall(text))
    assert _formatted_once(path, markdown=False) == read_file(path).written  # a second run changes nothing


PROSE = ("# A document  \r\n\r\nProse with x*2  and   odd spacing,\rkept   byte for byte.\n\n",
         "\r\nMore prose between the blocks.   \r\n\r\n",
         "\n\nThe end.  \r")


@fuzz_settings(0.1)
@given(first=spec_texts(), second=spec_texts())
def test_fmt_of_markdown_keeps_every_byte_outside_the_fences_and_what_the_blocks_say(tmp_path_factory, first,
                                                                                      second):
    if "```" in first + second or "~~~" in first + second:
        return  # text that closes the fence early is a different document, not a near miss of this property
    document = (PROSE[0] + "```gpu\r\n" + first.rstrip("\r\n") + "\r\n```" + PROSE[1] + "```gpu\n"
                + second.rstrip("\r\n") + "\n```" + PROSE[2])
    path = tmp_path_factory.mktemp("md") / "doc.md"
    path.write_bytes(document.encode("utf-8", "surrogatepass"))
    before = outcome(path)
    formatted = _formatted_once(path, markdown=True)
    if formatted is None:
        assert path.read_bytes() == document.encode("utf-8", "surrogatepass")
        return
    assert outcome(path) == before
    for prose in PROSE:
        assert prose in formatted
    lines, _ = split_lines(formatted)
    assert lines[:3] == ["# A document  ", "", "Prose with x*2  and   odd spacing,"]
    assert _formatted_once(path, markdown=True) == read_file(path).written
