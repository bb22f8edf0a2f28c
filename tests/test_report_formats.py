"""The CI printers: JUnit XML, Markdown and GitHub workflow commands, on real reports."""
import re
import xml.etree.ElementTree as ET

import attrs

from gpuspec.api import check_text
from gpuspec.diagnostics import Diagnostic
from gpuspec.report import Report, github, junit, markdown, text
from gpuspec.text import Span

FAILING = "device H100-SXM\nx*2 on 4096² bf16 is memory-bound, 70 waves\n"
PASSING = "device H100-SXM\nx*2 on 4096² bf16 is memory-bound, 62 waves\n"
SKIPPING = "device H100-SXM\nset sources = model, measured\nx*2 on 4096² bf16 is memory-bound, 70 waves\n"
BROKEN = "device H100-SXM\nx*2 on 4096² bf16 is is memory-bound\n"


def failing():
    return check_text(FAILING, "specs/a.gpu")


def combined() -> Report:
    """Two files: one with a failure and skips, one with a syntax error; and an error without a file."""
    skipping, broken = check_text(SKIPPING, "specs/a.gpu"), check_text(BROKEN, "specs/sub/b.gpu")
    nowhere = Diagnostic("unreadable", "no such file: missing.gpu", None)
    return Report(skipping.verdicts, (*broken.diagnostics, nowhere), ["specs/a.gpu", "specs/sub/b.gpu"],
                  {**skipping.texts, **broken.texts})


def suites(xml: str) -> dict:
    root = ET.fromstring(xml.encode("utf-8"))
    assert root.tag == "testsuites"
    return {s.get("name"): s for s in root.iter("testsuite")}


# JUnit

def test_junit_parses_with_a_declaration_and_a_suite_per_file():
    xml = junit.render(failing())
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    found = suites(xml)
    assert list(found) == ["specs/a.gpu"]
    suite = found["specs/a.gpu"]
    counts = tuple(suite.get(key) for key in ("tests", "failures", "errors", "skipped"))
    assert counts == ("2", "1", "0", "0")
    assert "\n  <testsuite" in xml  # pretty-printed


def test_the_failing_testcase_names_its_file_line_and_value():
    suite = suites(junit.render(failing()))["specs/a.gpu"]
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["L2 memory-bound [model]", "L2 70 waves [model]"]
    passing, failed = cases
    assert passing.find("failure") is None and passing.find("skipped") is None
    assert failed.get("classname") == "specs.a"
    assert failed.get("file") == "specs/a.gpu" and failed.get("line") == "2"
    failure = failed.find("failure")
    assert "62.06" in failure.get("message")
    body = failure.text
    assert "specs/a.gpu:2:36: fail:" in body  # text.failure's lines
    assert "waves = blocks / blocks_per_wave = 65,536 / 1,056 = 62.06" in body  # the derivation


def test_junit_counts_skips_errors_and_file_less_errors():
    found = suites(junit.render(combined()))
    assert list(found) == ["specs/a.gpu", "specs/sub/b.gpu", "gpuspec"]
    a, b, nowhere = found.values()
    assert (a.get("tests"), a.get("failures"), a.get("errors"), a.get("skipped")) == ("4", "1", "0", "2")
    skipped = [c for c in a.findall("testcase") if c.find("skipped") is not None]
    assert [c.get("name") for c in skipped] == ["L3 memory-bound [measured]", "L3 70 waves [measured]"]
    assert "--measure" in skipped[0].find("skipped").get("message")
    # the source's sibling values appear in the failure body
    failed = next(c for c in a.findall("testcase") if c.find("failure") is not None)
    assert "sources: model 62.06 ✗ · measured —" in failed.find("failure").text

    assert (b.get("tests"), b.get("failures"), b.get("errors"), b.get("skipped")) == ("1", "0", "1", "0")
    (case,) = b.findall("testcase")
    assert case.get("name").startswith("error[syntax]")
    assert case.get("classname") == "specs.sub.b" and case.get("file") == "specs/sub/b.gpu"
    assert case.get("line") == "2"
    assert "unexpected `memory-bound`" in case.find("error").get("message")
    assert "^^^" in case.find("error").text  # the caret excerpt

    assert nowhere.get("errors") == "1"
    assert nowhere.find("testcase").get("name") == "error[unreadable]"
    root = ET.fromstring(junit.render(combined()).encode("utf-8"))
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("6", "1", "2", "2")


def test_junit_names_are_stable_between_runs():
    def names():
        root = ET.fromstring(junit.render(combined()).encode("utf-8"))
        return [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]

    assert names() == names()
    assert junit.render(check_text(FAILING, "specs/a.gpu")) == junit.render(check_text(FAILING, "specs/a.gpu"))


def test_a_claim_repeated_on_one_line_gets_distinct_names():
    report = check_text("device H100-SXM\nx*2 on 4096² bf16 is 70 waves, 70 waves\n", "a.gpu")
    names = [c.get("name") for c in ET.fromstring(junit.render(report).encode()).iter("testcase")]
    assert len(names) == 2 and len(set(names)) == 2


def test_characters_xml_forbids_do_not_break_parsing():
    quoted = ('device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2:\n'
              '    "red \x1b[31m & <b> \x7f"\n    70 waves\n')
    report = check_text(quoted, "q.gpu")
    verdict = report.verdicts[0]
    assert verdict.status == "fail" and "\x1b" in verdict.claim.quote  # the raw character reaches the printer
    skip = attrs.evolve(verdict, status="skip", actual=None, reason="nul \x00 here\x0c")
    bad = Diagnostic("odd\x01", "escape \x1b[0m and nul \x00 and \ud800", Span("q.gpu", 4, 5, 4, 9), "help \x08")
    report = Report([verdict, skip], [bad], ["q.gpu"], report.texts)
    xml = junit.render(report)
    for char in "\x00\x01\x08\x0c\x1b\ud800":
        assert char not in xml
    root = ET.fromstring(xml.encode("utf-8"))
    failure, skipped, error = root.find(".//failure"), root.find(".//skipped"), root.find(".//error")
    assert "red \\x1b[31m & <b>" in failure.text
    assert skipped.get("message") == "nul \\x00 here\\x0c"
    assert error.get("message") == "escape \\x1b[0m and nul \\x00 and \\ud800"
    assert error.get("type") == "odd\\x01"


def test_xml_safe_keeps_what_xml_allows():
    assert junit.xml_safe("tab\tnl\ncr\r µ≈ \U0001F600") == "tab\tnl\ncr\r µ≈ \U0001F600"
    assert junit.xml_safe("a\x00b\x1fc\ufffe") == "a\\x00b\\x1fc\\ufffe"
    assert junit.classname("specs/gpu-execution.gpu") == "specs.gpu-execution"
    assert junit.classname("./specs/v1.2/x.gpu") == "specs.v1.2.x"


# Markdown

def test_markdown_heading_and_failure_row():
    text = markdown.render(combined())
    lines = text.splitlines()
    assert lines[0] == "**gpuspec**: 1 passed, 1 failed, 2 skipped, 2 errors"
    row = next(line for line in lines if line.startswith("| specs/a.gpu:3 | 70 waves"))
    assert row == "| specs/a.gpu:3 | 70 waves | model | 62.06 | waves = 62.06, which does not round to 70 waves |"
    # failures first, then errors, then the collapsed passing claims
    failed, errors, passing = (text.index(s) for s in ("### Failed", "### Errors", "<summary>1 passed</summary>"))
    assert failed < errors < passing
    assert "| specs/sub/b.gpu:2:25 | syntax | unexpected \\`memory-bound\\`" in text
    assert "| — | unreadable | no such file: missing.gpu |" in text
    assert text.count("<details>") == text.count("</details>") == 2  # the skipped and the passing


def test_markdown_escapes_pipes_and_newlines_in_cells():
    report = failing()
    verdict = report.verdicts[1]
    odd = attrs.evolve(verdict, claim=attrs.evolve(verdict.claim, text="a | b\nc"))
    text = markdown.render(Report([odd], [], ["specs/a.gpu"]))
    row = next(line for line in text.splitlines() if line.startswith("| specs/a.gpu:2 |"))
    assert "| a \\| b<br>c |" in row
    assert row.count(" | ") == 4  # still five cells: the pipe in the claim is not a column
    assert markdown.cell("x*2 | y_z \\| [l](u) <b>") == "x\\*2 \\| y\\_z \\\\\\| \\[l\\](u) \\<b\\>"
    assert markdown.cell("one\r\ntwo\rthree") == "one<br>two<br>three"
    assert markdown.cell("esc \x1b") == "esc \\\\x1b"


def test_markdown_when_everything_passes_is_the_heading_and_one_line():
    text = markdown.render(check_text(PASSING, "specs/a.gpu"))
    assert text == "**gpuspec**: 2 passed, 0 failed\n\nAll 2 claims hold.\n"


# GitHub workflow commands

def test_github_failure_command():
    lines = github.render(failing()).splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 1
    assert re.match(r"^::error file=specs/a.gpu,line=2,col=\d+,.*::.*62\.06", errors[0])
    assert errors[0].startswith("::error file=specs/a.gpu,line=2,col=36,endColumn=44,title=gpuspec model::")
    assert "%0Aclaim: 70 waves%0A" in errors[0]  # the derivation follows on escaped lines
    assert lines[-1] == "1 passed, 1 failed"


def test_github_failure_shows_the_ideal_value_beside_a_real_device():
    # the model's failure and the calibrated one each carry the line the text report shows: the datasheet's 20.03 µs
    # beside what the published profile gives, and the profile's name
    report = check_text("device H100-SXM\nx = bf16[4096, 4096]\nx * 2 is ≈ 30 µs\nx * 2 in practice ≈ 30 µs\n",
                        "specs/a.gpu")
    errors = [line for line in github.render(report).splitlines() if line.startswith("::error ")]
    shown = [line.strip() for line in text.render(report).splitlines() if line.strip().startswith("ideal ")]
    assert len(errors) == 2 and len(shown) == 2
    for line, realistic in zip(errors, shown):
        assert realistic.startswith("ideal 20.03 µs; a real H100-SXM: ≈ ")
        assert realistic.endswith("(published profile of H100-SXM)")
        assert "%0A" + github.escape_data(realistic) + "%0A" in line


def test_github_errors_notices_and_summary():
    lines = github.render(combined()).splitlines()
    notices = [line for line in lines if line.startswith("::notice ")]
    assert len(notices) == 2
    assert notices[0].startswith(
        "::notice file=specs/a.gpu,line=3,col=22,endColumn=34,title=gpuspec measured skipped::")
    assert "--measure" in notices[0]
    syntax = next(line for line in lines if "error[syntax]" in line)
    assert syntax.startswith("::error file=specs/sub/b.gpu,line=2,col=25,endColumn=37,title=gpuspec error[syntax]::")
    assert "::error title=gpuspec error[unreadable]::no such file: missing.gpu" in lines
    assert lines[-1] == "1 passed, 1 failed, 2 skipped"


def test_github_escaping():
    assert github.escape_data("100% a:b,c\r\nd") == "100%25 a:b,c%0D%0Ad"
    assert github.escape_property("100% a:b,c\r\nd") == "100%25 a%3Ab%2Cc%0D%0Ad"
    assert github.escape_property("%3A") == "%253A"  # % first, so an escape is not escaped twice
    span = Span("C:\\specs,x.gpu", 3, 1, 4, 2)
    line = github.command("error", span, "gpuspec model: 50%", "a\nb % c:d\n::warning::x")
    assert line == ("::error file=C%3A\\specs%2Cx.gpu,line=3,col=1,endLine=4,endColumn=2,"
                    "title=gpuspec model%3A 50%25::a%0Ab %25 c:d%0A::warning::x")
    assert "\n" not in line


def test_github_message_with_a_newline_stays_one_command():
    verdict = failing().verdicts[1]
    odd = attrs.evolve(verdict, status="skip", actual=None, reason="first\nsecond, 5%: \x1b")
    lines = github.render(Report([odd], [], ["specs/a.gpu"])).splitlines()
    assert lines == ["::notice file=specs/a.gpu,line=2,col=36,endColumn=44,title=gpuspec model skipped::"
                     "70 waves: first%0Asecond, 5%25: \\x1b",
                     "::warning title=gpuspec::nothing checked: its one claim was skipped "
                     "(model: first%0Asecond, 5%25: \\x1b)",
                     "0 passed, 0 failed, 1 skipped"]


# JSON

def test_json_carries_the_warnings_and_why_nothing_was_checked(tmp_path):
    import json

    from gpuspec.api import run_check
    from gpuspec.report import json as json_report

    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\n```GPU\ndevice H100-SXM\nx*2 on 4096² bf16 is 62 waves\n```\n", encoding="utf-8")
    report = run_check([str(doc)])
    assert report.exit_code == 5 and report.warnings
    data = json.loads(json_report.render(report))
    (warning,) = data["warnings"]
    assert warning == {"file": str(doc), "line": 3, "column": 4, "code": report.warnings[0].code,
                       "message": report.warnings[0].message, "help": report.warnings[0].help}
    assert "lowercase `gpu`" in warning["message"]
    assert data["nothing_checked"] == report.nothing_checked()
    assert data["nothing_checked"].startswith("nothing checked: no claims in ")
    assert data["nothing_checked"].endswith("; 1 warning may say why")
    checked = json.loads(json_report.render(failing()))
    assert checked["warnings"] == [] and checked["nothing_checked"] is None
