"""Numbers in prose: `about 5.53 ms<!-- gpu: ≈ tiny.time -->` checks the number a reader reads, `--update` rewrites
it in place, renderers keep the comment invisible, and every misuse is an error at its place that says what to
write."""
from __future__ import annotations

import json
import re

import pytest

from gpuspec.api import run_check
from gpuspec.cli import main

# 1000 launches of a 2 µs kernel, each launched in 5 µs: the queue takes 5.00 ms, the GPU is busy 40% of it.
BLOCK = """
```gpu
device H100-SXM with launch_cost = 5 µs
v = bf16[4096]
small = v * 2
tiny = 1000 launches of small
```
"""


def write(folder, text, name="post.md", newline="\n", bom=False):
    path = folder / name
    data = text.replace("\n", newline).encode("utf-8")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    return path


def check(tmp_path, sentence, block=BLOCK, name="post.md"):
    return run_check([str(write(tmp_path, sentence + "\n" + block, name))])


def at(document: str, needle: str) -> tuple[int, int]:
    """The 1-based line and column of the first `needle` in `document`."""
    for number, line in enumerate(document.split("\n"), 1):
        if needle in line:
            return number, line.index(needle) + 1
    raise AssertionError(f"{needle!r} not in the document")


def only_error(report):
    assert len(report.diagnostics) == 1, [d.message for d in report.diagnostics]
    return report.diagnostics[0]


def assert_error_at(tmp_path, sentence, code, needle, help_says=None):
    """Checking `sentence` gives one error, `code`, at `needle` (in the document), with help that says so."""
    report = check(tmp_path, sentence)
    error = only_error(report)
    assert error.code == code, (error.code, error.message)
    assert (error.span.line, error.span.column) == at(sentence + "\n" + BLOCK, needle), error.span
    if help_says is not None:
        assert help_says in (error.help or ""), error.help
    assert report.exit_code == 2 and not report.verdicts
    return error


# --- what is checked ---------------------------------------------------------------------------------------------


def test_a_number_in_a_sentence_is_checked_where_the_reader_reads_it(tmp_path):
    sentence = "The stream takes about 5.0 ms<!-- gpu: ≈ tiny.time --> in all."
    report = check(tmp_path, sentence)
    [verdict] = report.verdicts
    assert verdict.status == "pass" and verdict.claim.text == "tiny.time ≈ 5.0 ms"
    assert (verdict.claim.span.line, verdict.claim.span.column) == at(sentence, "5.0 ms")
    assert verdict.claim.expected.span.column == at(sentence, "5.0")[1]


def test_a_wrong_number_fails_and_the_failure_quotes_the_sentence(tmp_path, capsys):
    path = write(tmp_path, "The stream takes about 4.3 ms<!-- gpu: ≈ tiny.time ± 5% --> in all.\n" + BLOCK)
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:1:24: fail: tiny.time ≈ 4.3 ms ± 5%" in out
    assert "tiny.time = 5.002 ms, not ≈ 4.3 ms (± 5%: 4.08–4.51 ms)" in out
    assert "quote: “The stream takes about 4.3 ms in all.”" in out


def test_a_sentence_may_come_before_the_block_that_defines_what_it_names(tmp_path):
    report = run_check([str(write(tmp_path, BLOCK + "\nAfter the block: 5.0 ms<!-- gpu: ≈ tiny.time -->.\n"))])
    before = check(tmp_path, "Before the block: 5.0 ms<!-- gpu: ≈ tiny.time -->.")
    assert [v.status for v in report.verdicts] == [v.status for v in before.verdicts] == ["pass"]


def test_the_tolerance_in_the_comment_is_the_claims(tmp_path):
    loose = check(tmp_path, "About 4.6 ms<!-- gpu: ≈ tiny.time -->.")        # ± 10% holds 5.00 ms
    tight = check(tmp_path, "About 4.6 ms<!-- gpu: ≈ tiny.time ± 5% -->.")   # ± 5% does not
    ascii_spelling = check(tmp_path, "About 4.6 ms<!-- gpu: ~ tiny.time +/- 5% -->.")
    assert [v.status for v in loose.verdicts] == ["pass"]
    assert [v.status for v in tight.verdicts] == [v.status for v in ascii_spelling.verdicts] == ["fail"]
    assert tight.verdicts[0].claim.tolerance.written == "± 5%"


@pytest.mark.parametrize("sentence, status", [
    ("It runs 1,000<!-- gpu: = tiny.launches --> launches.", "pass"),              # a count, with separators
    ("It runs 1000<!-- gpu: = tiny.kernels --> kernels.", "pass"),
    ("The GPU is busy 40%<!-- gpu: ≈ tiny.busy_share --> of the time.", "pass"),   # a percentage
    ("Each launch takes 2.00 µs<!-- gpu: ≈ small.time -->.", "pass"),
    ("Each launch takes 2.00 us<!-- gpu: ≈ small.time -->.", "pass"),            # ASCII micro
    ("The stream is 2,500×<!-- gpu: ≈ tiny.time / small.time --> one kernel.", "pass"),  # a ratio
    ("The stream is 2500x<!-- gpu: ≈ tiny.time / small.time --> one kernel.", "pass"),
    ("Somewhere in 3–6 ms<!-- gpu: ≈ tiny.time -->.", "pass"),                    # a range
    ("At most 6 ms<!-- gpu: <= tiny.time -->.", "fail"),                        # ASCII comparison
    ("At most 6 ms<!-- gpu: ≥ tiny.time -->.", "pass"),                         # read number first: 6 ms ≥
    ("More than 4 ms<!-- gpu: < tiny.time -->.", "pass"),
    ("More than 4 ms<!-- gpu: > tiny.time -->.", "fail"),
    ("At 5.0 ms<!-- gpu: ≈ tiny.time --> it is overhead-bound.", "pass"),
    ("About 5.0\u00a0ms<!-- gpu: ≈ tiny.time -->, with a no-break space.", "pass"),
    ("About 5.0\u202fms<!-- gpu: ≈ tiny.time -->, with a narrow one.", "pass"),
    ("About 5.0ms<!-- gpu: ≈ tiny.time -->, with none.", "pass"),
    ("About 5.0 ms <!-- gpu: ≈ tiny.time -->, a space before the comment.", "pass"),
    ("About **5.0 ms**<!-- gpu: ≈ tiny.time -->, in bold.", "pass"),
    ("About _5.0 ms_<!-- gpu: ≈ tiny.time -->, in italics.", "pass"),
    ("(5.0 ms<!-- gpu: ≈ tiny.time -->)", "pass"),
    ("About 5e-3 s<!-- gpu: ≈ tiny.time -->.", "pass"),
])
def test_the_numbers_and_units_a_sentence_writes(tmp_path, sentence, status):
    report = check(tmp_path, sentence)
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    assert [v.status for v in report.verdicts] == [status]


def test_checks_in_headings_lists_quotes_and_tables_are_located_in_the_document(tmp_path):
    document = ("# It takes 5.0 ms<!-- gpu: ≈ tiny.time -->\n\n- a list item: 2.00 µs<!-- gpu: ≈ small.time -->\n"
                "  1. nested: 1000<!-- gpu: = tiny.launches -->\n\n> quoted: 40%<!-- gpu: ≈ tiny.busy_share -->\n\n"
                "| time | busy |\n| --- | --- |\n| 5.0 ms<!-- gpu: ≈ tiny.time --> | x |\n" + BLOCK)
    report = run_check([str(write(tmp_path, document))])
    assert not report.diagnostics and {v.status for v in report.verdicts} == {"pass"}
    found = sorted((v.claim.span.line, v.claim.span.column) for v in report.verdicts)
    assert found == sorted([at(document, "5.0 ms"), at(document, "2.00 µs"), at(document, "1000<"),
                            at(document, "40%"), at(document, "| 5.0 ms")[:1] + (3,)])


def test_the_json_report_places_a_check_at_its_number_with_its_sentence(tmp_path, capsys):
    path = write(tmp_path, "It takes 4.0 ms<!-- gpu: ≈ tiny.time -->.\n" + BLOCK)
    assert main(["check", "--format", "json", str(path)]) == 1
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert (result["line"], result["column"], result["expected"]) == (1, 10, "4.0 ms")
    assert result["quote"] == "It takes 4.0 ms."


def test_explain_shows_a_number_check_at_its_line(tmp_path, capsys):
    path = write(tmp_path, "It takes 5.0 ms<!-- gpu: ≈ tiny.time -->.\n" + BLOCK)
    assert main(["explain", f"{path}:1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{path}:1: tiny.time ≈ 5.0 ms\n") and "the queue" in out


# --- what is never read --------------------------------------------------------------------------------------------


def test_fences_and_indented_code_are_never_read(tmp_path):
    document = ("```markdown\nIt takes 9 ms<!-- gpu: ≈ nothing.here -->.\n```\n\n"
                "    It takes 9 ms<!-- gpu: ≈ nothing.here -->.\n\nIt takes 5.0 ms<!-- gpu: ≈ tiny.time -->.\n"
                + BLOCK)
    report = run_check([str(write(tmp_path, document))])
    assert not report.diagnostics and [v.claim.span.line for v in report.verdicts] == [at(document, "5.0 ms")[0]]


def test_the_syntax_shown_in_a_code_span_is_not_a_check(tmp_path):
    report = check(tmp_path, "Write `<!-- gpu: ≈ NAME.METRIC -->` after a number, or ``<!-- gpu: = x.y -->``.")
    assert not report.diagnostics and not report.verdicts and not report.warnings


def test_a_number_check_inside_a_code_span_is_an_error(tmp_path):
    sentence = "Shown as text: `5.0 ms<!-- gpu: ≈ tiny.time -->`, and checked: 5.0 ms<!-- gpu: ≈ tiny.time -->."
    report = check(tmp_path, sentence)
    error = only_error(report)
    assert error.code == "number-check-in-code" and error.span.column == sentence.index("<!--") + 1
    assert "out of the backticks" in error.help


def test_an_escaped_number_check_is_an_error_that_says_to_remove_the_backslash(tmp_path):
    # `\<!--` is shown to readers as text, and gpuspec read nothing of it: it was silently no check at all
    sentence = "Escaped: 5.0 ms\\<!-- gpu: ≈ tiny.time -->, and 5.0 ms<!-- gpu: ≈ tiny.time -->."
    error = only_error(check(tmp_path, sentence))
    assert error.code == "number-check-in-code" and error.span.column == sentence.index("<!--") + 1
    assert "escaped" in error.message and error.help == "remove the backslash before `<!--`"
    # a backslash before the syntax shown as text, with no number before it, is still no use
    report = check(tmp_path, "Write \\<!-- gpu: ≈ NAME.METRIC --> after a number.")
    assert not report.diagnostics and not report.verdicts


def test_a_number_in_a_code_span_before_a_comment_is_an_error(tmp_path):
    assert_error_at(tmp_path, "It takes `5.0 ms`<!-- gpu: ≈ tiny.time -->.", "number-check-no-number", "<!--",
                    "outside the backticks")


def test_an_escaped_comment_is_text(tmp_path):
    report = check(tmp_path, r"Escaped: \<!-- gpu: ≈ tiny.time --> is shown.")
    assert not report.diagnostics and not report.verdicts


# --- misuse, each at its place -------------------------------------------------------------------------------------


def test_no_number_before_the_comment(tmp_path):
    assert_error_at(tmp_path, "The time<!-- gpu: ≈ tiny.time --> is long.", "number-check-no-number", "<!--",
                    "then the comment")


def test_words_between_the_number_and_the_comment(tmp_path):
    assert_error_at(tmp_path, "It has 8 blocks per SM<!-- gpu: = tiny.kernels -->.", "number-check-no-number",
                    "<!--", "right after the number")


def test_punctuation_between_the_number_and_the_comment(tmp_path):
    assert_error_at(tmp_path, "It takes 5.0 ms.<!-- gpu: ≈ tiny.time -->", "number-check-no-number", "<!--",
                    "before the `.`")


@pytest.mark.parametrize("sentence, said", [
    ("It changes by -5 ms<!-- gpu: ≈ tiny.time -->.", "`-5` has a sign"),
    ("It changes by −5 ms<!-- gpu: ≈ tiny.time -->.", "`−5` has a sign"),
    ("From 3-6 ms<!-- gpu: ≈ tiny.time -->.", "has a sign"),
    ("On an H100<!-- gpu: = tiny.launches -->.", "`H100` before this number check is not a number on its own"),
    ("It is 1,2345<!-- gpu: = tiny.launches -->.", "`1,2345`"),
    ("It is 5,0 ms<!-- gpu: ≈ tiny.time -->.", "`5,0`"),
    ("Version 1.2.3<!-- gpu: = tiny.launches -->.", "`1.2.3`"),
    ("It runs 1 000<!-- gpu: = tiny.launches --> launches.", "`1 000` before this number check has spaces"),
])
def test_a_number_run_into_something_else_is_not_read_as_part_of_it(tmp_path, sentence, said):
    report = check(tmp_path, sentence)
    error = only_error(report)
    assert error.code == "number-check-no-number" and said in error.message, error.message
    assert not report.verdicts  # `000` of `1 000`, `5` of `-5`: never checked as if it were the number


def test_a_unit_gpuspec_does_not_read(tmp_path):
    error = assert_error_at(tmp_path, "It takes 5 msecs<!-- gpu: ≈ tiny.time -->.", "number-check-unit", "msecs")
    assert error.message == "`msecs` is not a unit gpuspec reads" and "ms" in error.help


def test_a_unit_of_the_wrong_dimension_is_reported_at_the_sentences_unit(tmp_path):
    error = assert_error_at(tmp_path, "It moves 5 GB<!-- gpu: ≈ tiny.time -->.", "dimension-mismatch", "5 GB")
    assert (error.span.end_column - error.span.column) == len("5 GB")
    assert "tiny.time is in time" in error.message


def test_an_unknown_name_is_reported_in_the_comment_with_the_close_ones(tmp_path):
    error = assert_error_at(tmp_path, "It takes 5 ms<!-- gpu: ≈ tinny.time -->.", "unknown-name", "tinny")
    assert "`tiny`" in error.help


def test_a_comment_without_a_comparison(tmp_path):
    assert_error_at(tmp_path, "It takes 5 ms<!-- gpu: tiny.time -->.", "number-check-comparison", "<!--", "≈")


def test_a_comment_without_a_metric(tmp_path):
    assert_error_at(tmp_path, "It takes 5 ms<!-- gpu: ≈ ± 5% -->.", "number-check-metric", "<!--", "explain")


def test_a_tolerance_on_an_exact_comparison_is_reported_at_the_tolerance(tmp_path):
    assert_error_at(tmp_path, "It takes 5 ms<!-- gpu: = tiny.time ± 5% -->.", "tolerance-without-approx", "± 5%")


def test_a_syntax_error_in_a_comment_is_located_in_it(tmp_path):
    sentence = "It takes 5 ms<!-- gpu: ≈ tiny.time ± --> and 2 µs<!-- gpu: ≈ small.time * * 2 -->."
    report = check(tmp_path, sentence)
    assert [d.code for d in report.diagnostics] == ["syntax", "syntax"]  # each comment's own error
    columns = [d.span.column for d in report.diagnostics]
    assert sentence.index("± -->") < columns[0] <= sentence.index("-->") + 1
    assert sentence.index("small.time") < columns[1] < sentence.rindex("-->") + 1


def test_a_comment_that_is_more_than_one_claim(tmp_path):
    assert_error_at(tmp_path, "It takes 5 ms<!-- gpu: ≈ tiny.time # note -->.", "number-check-form", "<!--",
                    "a comparison, a metric")


def test_a_comment_on_a_line_of_its_own(tmp_path):
    assert_error_at(tmp_path, "It takes 5 ms\n<!-- gpu: ≈ tiny.time -->", "number-check-alone", "<!--",
                    "right after the number")


def test_a_comment_over_two_lines(tmp_path):
    assert_error_at(tmp_path, "It takes 5 ms<!-- gpu: ≈\ntiny.time -->.", "number-check-lines", "<!--", "one line")


def test_a_comment_never_closed(tmp_path):
    assert_error_at(tmp_path, "It takes 5 ms<!-- gpu: ≈ tiny.time", "number-check-unclosed", "<!--", "`-->`")


def test_every_misuse_of_a_document_is_reported_at_once(tmp_path):
    report = check(tmp_path, "A 5 ms<!-- gpu: tiny.time -->.\n\nB -5 ms<!-- gpu: ≈ tiny.time -->.\n\n"
                             "<!-- gpu: ≈ tiny.time -->")
    assert [(d.code, d.span.line) for d in report.diagnostics] == [
        ("number-check-comparison", 1), ("number-check-no-number", 3), ("number-check-alone", 5)]


def test_near_misses_of_a_number_check_are_warnings_with_the_fix(tmp_path):
    sentence = "It takes 5 ms<!-- gpu ≈ tiny.time --> or 5 ms<!-- GPU: ≈ tiny.time -->."
    report = check(tmp_path, sentence)
    assert [w.help for w in report.warnings] == ["write `<!-- gpu: ≈ NAME.METRIC -->` right after the number",
                                                 "write `<!-- gpu:`"]
    assert [w.span.column for w in report.warnings] == [sentence.index("<!--") + 1, sentence.rindex("<!--") + 1]
    assert not report.verdicts


def test_a_number_check_inside_an_html_block_is_a_warning(tmp_path):
    report = check(tmp_path, "<div>\nIt takes 5 ms<!-- gpu: ≈ tiny.time -->\n</div>")
    [warning] = report.warnings
    assert "this number check is inside an HTML block" in warning.message and warning.span.line == 2


# --- hostile input -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sentence, code", [
    ("Huge 1e999 ms<!-- gpu: ≈ tiny.time -->.", "bad-number"),
    ("Huge tolerance 5 ms<!-- gpu: ≈ tiny.time ± 1e999% -->.", "bad-number"),
    ("A separator 5 ms<!-- gpu: ≈ tiny.time\u2028 -->.", "line-separator"),
    ("Bidi 5 ms<!-- gpu: ≈ tiny\u202e.time -->.", "syntax"),
    ("Forged 5 ms<!-- gpu: ≈ ::error title=x::tiny.time -->.", "syntax"),
    ("Control 5 ms<!-- gpu: ≈ tiny.time\x1b[31m -->.", "syntax"),
    ("Quote 5 ms<!-- gpu: ≈ \"tiny.time\" -->.", "syntax"),
])
def test_hostile_comments_are_located_errors_shown_safely(tmp_path, capsys, sentence, code):
    path = write(tmp_path, sentence + "\n" + BLOCK)
    assert main(["check", str(path)]) == 2
    out = capsys.readouterr().out
    assert re.search(rf"^{re.escape(str(path))}:1:\d+: error\[{code}\]", out, re.M), out
    assert "\x1b" not in out and "\u202e" not in out and "\u2028" not in out
    assert not re.search(r"^::error", out, re.M)


def test_a_deeply_nested_metric_is_checked_or_refused_without_a_crash(tmp_path):
    report = check(tmp_path, "Deep 5.0 ms<!-- gpu: ≈ " + "(" * 2000 + "tiny.time" + ")" * 2000 + " -->.")
    assert [v.status for v in report.verdicts] == ["pass"] or report.diagnostics


def test_many_checks_on_one_line_are_each_located(tmp_path):
    sentence = " ".join(f"{5.0 + i / 1000:.3f} ms<!-- gpu: ≈ tiny.time -->" for i in range(200))
    report = check(tmp_path, sentence)
    assert len(report.verdicts) == 200 and not report.diagnostics
    columns = [v.claim.expected.span.column for v in report.verdicts]
    assert columns == [m.start() + 1 for m in re.finditer(r"\d\.\d{3}", sentence)]


def test_a_document_whose_only_checks_are_in_prose_is_found_in_a_folder(tmp_path):
    (tmp_path / "docs").mkdir()
    write(tmp_path / "docs", "It takes 5 ms<!-- gpu: ≈ nothing.time -->.\n", "post.md")
    write(tmp_path / "docs", "Shown: `<!-- gpu: ≈ NAME.METRIC -->`.\n", "about.md")
    report = run_check([str(tmp_path / "docs")])
    assert report.files == (str(tmp_path / "docs" / "post.md"),)  # the one that only shows the syntax is left alone
    assert [d.code for d in report.diagnostics] == ["unknown-name"]


# --- --update ------------------------------------------------------------------------------------------------------


def test_update_rewrites_the_number_in_the_sentence_and_nothing_else(tmp_path, capsys):
    before = "The stream takes about 4.3 ms<!-- gpu: ≈ tiny.time ± 5% --> and each launch 2.00 µs<!-- gpu: ≈ " \
             "small.time -->.\n" + BLOCK
    path = write(tmp_path, before)
    assert main(["check", "--update", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == before.replace("4.3 ms", "5.0 ms")
    assert "updated 1 claim in 1 file" in capsys.readouterr().out
    assert run_check([str(path)]).exit_code == 0


def test_update_keeps_line_breaks_byte_order_mark_no_break_spaces_and_emphasis(tmp_path):
    text = "Intro.\n\nIt takes **4.3\u00a0ms**<!-- gpu: ≈ tiny.time -->, ~1100<!-- gpu: = tiny.launches -->.\n" + BLOCK
    path = write(tmp_path, text, newline="\r\n", bom=True)
    assert main(["check", "--update", str(path)]) == 0
    after = path.read_bytes()
    expected = text.replace("4.3", "5.0").replace("1100", "1000").replace("\n", "\r\n").encode("utf-8")
    assert after == b"\xef\xbb\xbf" + expected


def test_update_writes_the_precision_the_sentence_wrote(tmp_path):
    path = write(tmp_path, "About 4.321 ms<!-- gpu: ≈ tiny.time ± 1% --> or 4 ms<!-- gpu: ≈ tiny.time ± 1% -->.\n"
                 + BLOCK)
    main(["check", "--update", str(path)])
    assert path.read_text(encoding="utf-8").startswith("About 5.002 ms<!-- gpu: ≈ tiny.time ± 1% --> or 5 ms<!--")


def test_update_leaves_ranges_and_bounds_for_a_person(tmp_path, capsys):
    text = "Between 1–2 ms<!-- gpu: ≈ tiny.time --> and under 3 ms<!-- gpu: > tiny.time -->.\n" + BLOCK
    path = write(tmp_path, text)
    assert main(["check", "--update", str(path)]) == 1
    assert path.read_text(encoding="utf-8") == text
    assert "2 failing claims need a person" in capsys.readouterr().out


# --- renderers keep the comment invisible --------------------------------------------------------------------------

RENDERED = ("# Decode at 5.0 ms<!-- gpu: ≈ tiny.time -->\n\nThe stream takes about **5.0 ms**<!-- gpu: ≈ tiny.time "
            "± 5% --> in all, and\nruns 1,000<!-- gpu: = tiny.launches --> launches, busy 40%<!-- gpu: ≈ "
            "tiny.busy_share -->.\n\n- each launch 2.00\u00a0µs<!-- gpu: ≈ small.time -->\n\n> a ratio of "
            "2,500×<!-- gpu: ≈ tiny.time / small.time -->\n" + BLOCK)
_CHECKS = re.compile(r"<!-- gpu:.*?-->")


def _invisible_in(render) -> None:
    """`render` (Markdown -> HTML) keeps each number check as an HTML comment, and the page it makes is the page
    of the document without the checks."""
    html = render(RENDERED)
    assert html.count("<!-- gpu:") == len(_CHECKS.findall(RENDERED))
    assert _CHECKS.sub("", html) == render(_CHECKS.sub("", RENDERED))
    assert "gpu:" not in _CHECKS.sub("", html)


@pytest.mark.parametrize("preset", ["commonmark", "default"])
def test_markdown_it_renders_the_page_as_if_the_checks_were_not_there(preset):
    from markdown_it import MarkdownIt

    # commonmark as GitHub's cmark does it, and with GitHub's tables and strikethrough; the default preset with
    # HTML on, as static-site generators built on markdown-it turn it on
    parser = MarkdownIt(preset, {"html": True}).enable(["table", "strikethrough"])
    _invisible_in(parser.render)


def test_python_markdown_renders_the_page_as_if_the_checks_were_not_there():
    markdown = pytest.importorskip("markdown", reason="Python-Markdown (MkDocs' renderer) is not installed")
    _invisible_in(lambda text: markdown.markdown(text, extensions=["tables", "fenced_code"]))


def test_the_rendered_document_checks(tmp_path):
    report = run_check([str(write(tmp_path, RENDERED))])
    assert not report.diagnostics and {v.status for v in report.verdicts} == {"pass"} and len(report.verdicts) == 6


def test_fmt_leaves_the_sentences_and_their_checks_as_written(tmp_path):
    text = RENDERED.replace("tiny = 1000 launches of small", "tiny = 1000   launches of small")
    path = write(tmp_path, text, newline="\r\n")
    assert main(["fmt", str(path)]) == 0
    assert path.read_bytes() == text.replace("1000   launches", "1000 launches").replace("\n", "\r\n").encode()
