"""The documents of cases are strict: a wrong expectation, a missing error, an extra one or a misspelt comment
fails its item, with a listing by document line; and gpuspec's own plugin leaves the documents to them."""
from __future__ import annotations

import textwrap

import pytest
from document_items import Case, Expectation, Outcome, mismatches

pytest_plugins = ["pytester"]

CONFTEST = """
from pathlib import Path

from document_items import collect


def pytest_collect_file(parent, file_path):
    return collect(parent, file_path, Path(__file__).parent / "documents")
"""

GOOD = """\
# Cases

## A misspelt device

```gpu
device H10-SXM   # error: 1 [unknown-device] did you mean `H100-SXM`
```

## Two blocks, one spec

```gpu
device H100-SXM
x = bf16[4096, 4096]
```

The second block goes on where the first stopped.

```gpu continued
y = x * 2
y.waves = 62      # pass
y.waves = 70      # fail: 62.06
# error: 23 [syntax] the line ends early
x*2 on 4096² bf16 is ≈
```
"""


def document(pytester, text: str, name: str = "cases"):
    pytester.makeconftest(CONFTEST)
    folder = pytester.mkdir("documents")
    (folder / f"{name}.md").write_text(textwrap.dedent(text), encoding="utf-8")
    return pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "-v")


def test_a_document_whose_expectations_hold_passes_item_by_heading(pytester):
    good = GOOD.replace("y.waves = 70      # fail: 62.06\n# error: 23 [syntax] the line ends early\n"
                        "x*2 on 4096² bf16 is ≈\n", "y.waves = 70      # fail: 62.06\n")
    result = document(pytester, good)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*documents/cases.md::A misspelt device PASSED*",
                                 "*documents/cases.md::Two blocks, one spec PASSED*"])


def test_a_syntax_error_stops_the_spec_so_the_claims_before_it_are_not_checked(pytester):
    # The block with a syntax error gives no verdicts: its `# pass` and `# fail` are met by nothing.
    result = document(pytester, GOOD)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["documents/cases.md:20: expected pass; got nothing on this line",
                                 "documents/cases.md:21: expected fail holding `62.06`; got nothing on this line"])


# What a case writes, and the line its item's failure lists: {a} and {b} are the numbers of its first and second lines
# of spec, {A} and {B} those lines as file:line.
WRONG = {
    "wrong-code": ("device H10-SXM   # error: 1 [unknown-model] did you mean `H100-SXM`",
                   "{A}: expected error[unknown-model] at column 1 holding *; got error[unknown-device] at {a}:1: *"),
    "wrong-column": ("device H10-SXM   # error: 3 [unknown-device]",
                     "{A}: expected error[unknown-device] at column 3; got error[unknown-device] at {a}:1: *"),
    "wrong-words": ("device H10-SXM   # error: [unknown-device] H200-PCIe",
                    "{A}: expected error[unknown-device] holding `H200-PCIe`; got error[unknown-device] at {a}:1*"),
    "an-extra-error": ("device H10-SXM", "{A}: unexpected error[unknown-device] at {a}:1: unknown device `H10-SXM`*"),
    "a-missing-error": ("device H100-SXM   # error: [unknown-device]",
                        "{A}: expected error[unknown-device]; got nothing on this line"),
    "a-pass-expected-to-fail": ("device H100-SXM\ndevice.sms = 132   # fail: 132",
                                "{B}: expected fail holding `132`; got pass [model] at {b}:1: *"),
    "an-unexpected-failure": ("device H100-SXM\ndevice.sms = 130",
                              "{B}: unexpected fail [model] at {b}:1: device.sms = 132, which does not round to 130*"),
    "a-mistake-expected-as-a-plain-failure": (
        "device H100-SXM\ndevice.tensor_bf16 = 1979 TFLOP/s   # fail: 989",
        "{B}: expected fail holding `989`; got fail *2:4-sparse* (the failure names a usual mistake: expect it with "
        "`# mistake: ...`)"),
    "a-plain-failure-expected-as-a-mistake": (
        "device H100-SXM\ndevice.sms = 130   # mistake: 132",
        "{B}: expected mistake holding `132`; got fail *(no usual mistake fits this failure: expect it with "
        "`# fail: ...`)"),
    "a-misspelt-keyword": ("device H10-SXM   # eror: [unknown-device]",
                           "{A}: `# eror: [unknown-device]` is not an expectation: did you mean `# error:`?"),
    "no-colon": ("device H10-SXM   # error [unknown-device]",
                 "{A}: `# error [unknown-device]`: write `# error: ...`, with a colon"),
    "no-code": ("device H10-SXM   # error: unknown device",
                "{A}: `# error: unknown device`: an error names its code: *"),
    "nothing-below": ("device H100-SXM\n# pass", "{B}: `# pass` has no line of spec below it to concern"),
}


def test_each_wrong_expectation_fails_its_item_with_the_line_and_what_was_got(pytester):
    text, expected, line = "# Wrong expectations\n", [], 2
    for name, (written, listed) in WRONG.items():  # a section of five lines and the case's own
        text += f"\n## {name}\n\n```gpu\n{written}\n```\n"
        a, b = line + 4, line + 5
        shown = listed.format(a=a, b=b, A=f"documents/cases.md:{a}", B=f"documents/cases.md:{b}")
        expected += [f"*_ documents/cases.md:{line + 3}: {name} _*", shown.replace("[", "[[]")]
        line += 5 + written.count("\n") + 1
    result = document(pytester, text)
    result.assert_outcomes(failed=len(WRONG))
    result.stdout.fnmatch_lines(expected)
    result.stdout.fnmatch_lines(["rerun this case: pytest 'documents/cases.md::nothing-below'"])


def test_an_error_on_another_line_than_expected_is_both_missing_and_unexpected(pytester):
    result = document(pytester, "## Off by one\n\n```gpu\ndevice H100-SXM   # error: [unknown-name]\n"
                                "w = nope * 2\n```\n")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([line.replace("[", "[[]") for line in (
        "documents/cases.md:4: expected error[unknown-name]; got nothing on this line",
        "documents/cases.md:5: unexpected error[unknown-name] at 5:5: unknown name `nope`*",
        "    documents/cases.md:5:5: error[unknown-name]: unknown name `nope`")])


def test_an_expectation_above_a_line_concerns_the_line_below_it_and_blocks_are_independent(pytester):
    # The second block does not see the first one's device: it is a spec of its own.
    result = document(pytester, "## One\n\n```gpu\ndevice H100-SXM\n```\n\n## Two\n\n```gpu\n"
                                "# error: 1 [no-device] add a line such as `device H100-SXM` above it\n"
                                "x*2 on 4096² bf16 is ≈ 20 µs\n```\n")
    result.assert_outcomes(passed=2)


def test_a_near_miss_fence_or_a_hidden_block_in_a_document_fails_it(pytester):
    result = document(pytester, "## A\n\n```GPU\ndevice H10-SXM\n```\n\n<!-- gpu\ndevice H100-SXM\n-->\n\n"
                                "```gpu\ndevice H100-SXM\n```\n")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["documents/cases.md: line 3: ```GPU is not a gpu block*",
                                 "documents/cases.md: line 8: a hidden <!-- gpu --> block*"])


def test_a_continued_block_needs_one_before_it_and_a_document_needs_blocks(pytester):
    result = document(pytester, "## A\n\n```gpu continued\ndevice H100-SXM\n```\n")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*line 3: a ```gpu continued block with no block before it to continue*"])


def test_items_under_one_heading_or_none_are_named_by_their_line(pytester):
    text = "```gpu\ndevice H100-SXM\n```\n\n## Same\n\n```gpu\ndevice H100-SXM\n```\n\n```gpu\ndevice A100\n```\n"
    result = document(pytester, text)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*cases.md::line 1 PASSED*", "*cases.md::Same (line 7) PASSED*",
                                 "*cases.md::Same (line 11) PASSED*"])


def test_gpuspec_plugin_leaves_excluded_documents_to_their_collector_and_reads_the_rest(pytester):
    pytester.makeini("[pytest]\ngpuspec_markdown = true\ngpuspec_exclude = documents/*.md\n")
    pytester.makefile(".md", README="```gpu\ndevice H100-SXM\ndevice.sms = 132\n```\n")
    result = document(pytester, "## A\n\n```gpu\ndevice H10-SXM   # error: [unknown-device]\n```\n")
    result.assert_outcomes(passed=2)  # the case, and README's one claim
    result.stdout.fnmatch_lines(["*README.md::device.sms = 132*PASSED*", "*documents/cases.md::A PASSED*"])
    pytester.makeini("[pytest]\ngpuspec_markdown = true\n")  # without the exclusion both collect it
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)


# --- rules every case is held to, beyond its own expectations ---

def outcome(kind="error", line=3, column=1, tag="syntax", words="an error", hint=None, printed=None) -> Outcome:
    return Outcome(kind, line, column, tag, words, hint, printed)


def test_an_error_that_shows_the_grammars_internal_names_fails():
    case = Case("c", 1, [2, 3], [Expectation("error", 3, None, "syntax", "", 3)])
    wrong = mismatches(case, [outcome(words="expected __ANON_0 or _NL")], "")
    assert wrong == [(3, "error[syntax] at 3:1: expected __ANON_0 or _NL shows the grammar's internal names")]


def test_a_mistake_the_message_does_not_end_with_fails():
    case = Case("c", 1, [2, 3], [Expectation("mistake", 3, None, None, "slip", 3)])
    found = [outcome("fail", tag="model", words="x = 1, not 2; a slip", hint="a slip")]
    assert mismatches(case, found, "") == []
    found = [outcome("fail", tag="model", words="x = 1, not 2; a slip?", hint="a slip")]
    assert [line for line, _ in mismatches(case, found, "")] == [3]


def test_errors_out_of_document_order_fail():
    case = Case("c", 1, [2, 3], [Expectation("error", 3, None, "a", "", 3), Expectation("error", 2, None, "b", "", 2)])
    assert mismatches(case, [outcome(line=2, tag="b"), outcome(line=3, tag="a")], "") == []
    wrong = mismatches(case, [outcome(line=3, tag="a"), outcome(line=2, tag="b")], "")
    assert wrong == [(1, "errors are not reported in document order: [(3, 1), (2, 1)]")]


def test_an_error_the_report_does_not_print_at_its_place_fails():
    case = Case("c", 1, [2, 3], [Expectation("error", 3, None, "syntax", "", 3)])
    found = [outcome(printed="d.md:3:1: error[syntax]: ")]
    assert mismatches(case, found, "d.md:3:1: error[syntax]: an error\n") == []
    assert mismatches(case, found, "d.md:2:1: error[syntax]: an error\n") == [
        (3, "error[syntax] at 3:1: an error is not printed at its place: no `d.md:3:1: error[syntax]:` in the text "
            "report")]
