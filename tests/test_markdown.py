"""Markdown documents: which blocks are specs (as a CommonMark parser sees them), one scope per document, and
every location reported in the document's own lines and columns."""
from __future__ import annotations

import json
import re

import pytest

from gpuspec import markdown
from gpuspec.api import run_check
from gpuspec.cli import main

FAILING_WAVES = "x*2 on 4096² bf16 is 70 waves"  # 62.06 waves on an H100: fails, and says so at `70 waves`


def write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def check(tmp_path, text, name="doc.md"):
    return run_check([str(write(tmp_path, name, text))])


def where(document: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """The 1-based (line, column) of the `occurrence`-th line of `document` that contains `needle`."""
    seen = 0
    for number, line in enumerate(document.split("\n"), 1):
        if needle in line:
            seen += 1
            if seen == occurrence:
                return number, line.index(needle) + 1
    raise AssertionError(f"{needle!r} not in the document")


def located(report) -> list[tuple[str, int, int]]:
    """(claim text, line, column) of every verdict."""
    return [(v.claim.text, v.claim.span.line, v.claim.span.column) for v in report.verdicts]


def error_block(output: str, code: str) -> tuple[int, int, str, str]:
    """From a text report: the line and column of the first `code` error, the excerpt and the caret line."""
    lines = output.split("\n")
    for i, line in enumerate(lines):
        match = re.search(rf":(\d+):(\d+): error\[{re.escape(code)}\]", line)
        if match:
            return int(match[1]), int(match[2]), lines[i + 1], lines[i + 2]
    raise AssertionError(f"no error[{code}] in:\n{output}")


def assert_caret_under(output: str, code: str, document: str, needle: str, occurrence: int = 1) -> None:
    """The `code` error is reported at `needle`'s place in the document, and its caret is under it."""
    line, column, excerpt, caret = error_block(output, code)
    assert (line, column) == where(document, needle, occurrence), output
    assert excerpt == "    " + document.split("\n")[line - 1], output  # the document's own line, as written
    assert caret.startswith("    ") and caret.strip().startswith("^"), output
    caret_at = len(caret) - len(caret.lstrip(" ")) - 4
    assert excerpt[4:][caret_at:].startswith(needle), (caret_at, output)


def check_cli(tmp_path, capsys, text, name="doc.md") -> tuple[int, str]:
    path = write(tmp_path, name, text)
    code = main(["check", str(path)])
    return code, capsys.readouterr().out


# --- Which blocks are specs ---------------------------------------------------------------------------------

def test_a_fence_inside_a_list_item_is_found_and_reports_the_documents_columns(tmp_path):
    document = f"""# Notes

1. The multiply, on an H100:

   ```gpu
   device H100-SXM
   {FAILING_WAVES}
   ```

2. Next item.
"""
    report = check(tmp_path, document)
    assert not report.diagnostics
    assert located(report) == [("70 waves", *where(document, "70 waves"))]
    assert where(document, "70 waves")[1] == 25  # three columns of list indentation, not 22
    assert report.verdicts[0].status == "fail"


def test_a_fence_in_a_nested_list_keeps_the_documents_columns(tmp_path):
    document = f"""- outer

  - inner

    ```gpu
    device H100-SXM
    {FAILING_WAVES}
    device.sms = 132
    ```
"""
    report = check(tmp_path, document)
    assert not report.diagnostics
    assert located(report) == [("70 waves", *where(document, "70 waves")),
                               ("device.sms = 132", *where(document, "device.sms = 132"))]
    assert where(document, "device.sms")[1] == 5


def test_a_fence_opened_on_the_list_markers_line_reports_the_documents_columns(tmp_path):
    # CommonMark: the item's content starts after `-   `, so the fence and its body are indented four columns.
    document = f"-   ```gpu\n    device H100-SXM\n    {FAILING_WAVES}\n    ```\n"
    report = check(tmp_path, document)
    assert not report.diagnostics
    assert located(report) == [("70 waves", *where(document, "70 waves"))]
    assert where(document, "70 waves") == (3, 26)


def test_a_fence_in_a_block_quote_reports_the_documents_columns(tmp_path):
    document = f"> Quoted:\n>\n> ```gpu\n> device H100-SXM\n> {FAILING_WAVES}\n> ```\n"
    report = check(tmp_path, document)
    assert not report.diagnostics
    assert located(report) == [("70 waves", *where(document, "70 waves"))]
    assert where(document, "70 waves") == (5, 24)


def test_a_four_backtick_fence_is_a_gpu_block(tmp_path):
    document = f"````gpu\ndevice H100-SXM\n{FAILING_WAVES}\n````\n"
    report = check(tmp_path, document)
    assert located(report) == [("70 waves", 3, 22)]


def test_a_tilde_fence_is_a_gpu_block(tmp_path):
    document = f"Text.\n\n~~~gpu\ndevice H100-SXM\n{FAILING_WAVES}\n~~~\n"
    report = check(tmp_path, document)
    assert located(report) == [("70 waves", 5, 22)]


def test_an_info_string_with_more_words_after_gpu_is_a_gpu_block(tmp_path):
    document = f"```gpu title=x\ndevice H100-SXM\n{FAILING_WAVES}\n```\n"
    report = check(tmp_path, document)
    assert located(report) == [("70 waves", 3, 22)]


def test_a_fence_whose_language_merely_starts_with_gpu_is_not_a_spec(tmp_path):
    document = "```gpux\ndevice H10\n```\n\n```gpu\ndevice H100-SXM\ndevice.sms = 132\n```\n"
    report = check(tmp_path, document)
    assert not report.diagnostics
    assert located(report) == [("device.sms = 132", 7, 1)]


def test_a_python_fence_and_an_indented_code_block_are_not_specs(tmp_path):
    document = """```gpu
device H100-SXM
device.sms = 132
```

```python
device H10
x*2 on 4096² bf16 is 70 waves
```

An indented code block that only looks like a fence:

    ```gpu
    device H10
    x*2 on 4096² bf16 is 70 waves
    ```
"""
    report = check(tmp_path, document)
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    assert located(report) == [("device.sms = 132", 3, 1)]


def test_the_word_gpu_in_prose_is_not_a_spec(tmp_path):
    document = """```gpu
device H100-SXM
device.sms = 132
```

The gpu runs x*2 on 4096² bf16 is 70 waves, says the gpu
gpu device H10 and `gpu` in code, and <!-- gpu inline comment device H10 --> inside a paragraph.
"""
    report = check(tmp_path, document)
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    assert located(report) == [("device.sms = 132", 3, 1)]


def test_a_gpu_fence_shown_inside_a_markdown_fence_is_an_example_not_a_spec(tmp_path):
    document = """````markdown
```gpu
device H10
```
<!-- gpu
device H10
-->
````

<!-- gpu device H100-SXM -->
<!-- gpu device.sms = 132 -->
"""
    report = check(tmp_path, document)
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    assert located(report) == [("device.sms = 132", 11, 10)]


def test_an_empty_gpu_block_is_fine(tmp_path, capsys):
    document = "# Empty\n\n```gpu\n```\n\n```gpu\n\n```\n\n```gpu\ndevice H100-SXM\ndevice.sms = 132\n```\n"
    report = check(tmp_path, document)
    assert not report.diagnostics
    assert [v.status for v in report.verdicts] == ["pass"]
    assert main(["check", str(tmp_path / "doc.md")]) == 0


def test_a_document_with_only_an_empty_gpu_block_has_no_errors_and_checked_nothing(tmp_path, capsys):
    from gpuspec.report import EXIT_NOTHING

    code, out = check_cli(tmp_path, capsys, "```gpu\n```\n")
    assert code == EXIT_NOTHING
    assert "error" not in out and "warning" not in out


# --- Hidden blocks ----------------------------------------------------------------------------------------

def test_a_hidden_block_on_one_line_is_a_spec_at_its_columns(tmp_path):
    document = "Prose.\n\n<!-- gpu device H100-SXM -->\n<!--gpu device.sms = 132-->\n"
    report = check(tmp_path, document)
    assert not report.diagnostics
    assert located(report) == [("device.sms = 132", *where(document, "device.sms"))]
    assert where(document, "device.sms") == (4, 9)


def test_a_hidden_block_over_several_lines_is_a_spec(tmp_path):
    document = """The multiply moves 67 MB.
<!-- gpu
device H100-SXM
x*2 on 4096² bf16 is 67 MB moved, 70 waves
-->

<!-- gpu x = bf16[4096, 4096]
y = x * 2 is 62 waves -->
"""
    report = check(tmp_path, document)
    assert not report.diagnostics
    assert located(report) == [("67 MB moved", 4, 22), ("70 waves", 4, 35), ("62 waves", 8, 14)]
    assert [v.status for v in report.verdicts] == ["pass", "fail", "pass"]


def test_the_text_of_the_closing_line_of_a_hidden_block_after_the_comment_is_not_spec(tmp_path):
    document = "<!-- gpu\ndevice H100-SXM\ndevice.sms = 132 --> and prose after it\n"
    report = check(tmp_path, document)
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    assert located(report) == [("device.sms = 132", 3, 1)]


def test_an_ordinary_html_comment_is_not_a_spec(tmp_path):
    document = ("<!-- a note: device H10 -->\n<!-- gpux device H10 -->\n\n"
                "```gpu\ndevice H100-SXM\ndevice.sms = 132\n```\n")
    report = check(tmp_path, document)
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    assert len(report.verdicts) == 1


def test_extract_blanks_every_line_outside_the_blocks():
    document = "# T\n\n- item\n\n  ```gpu\n  device H100-SXM\n  ```\n<!-- gpu device.sms = 132 -->\ntail\n"
    spec = markdown.extract("d.md", document)
    assert spec.text.split("\n") == ["", "", "", "", "", "device H100-SXM", "", "device.sms = 132", "", ""]
    assert spec.column_offsets == {6: 2, 8: 9}


# --- One scope per document, in order -------------------------------------------------------------------

def test_the_blocks_of_a_document_share_one_scope_in_order(tmp_path):
    document = """```gpu
device H100-SXM
```

Then a tensor, in a hidden block:

<!-- gpu x = bf16[4096, 4096] -->

And the claim, which needs both the device of block 1 and the tensor of block 2:

```gpu
x * 2 is 62 waves, memory-bound
```
"""
    report = check(tmp_path, document)
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    assert [(text, line, status) for (text, line, _), status in
            zip(located(report), [v.status for v in report.verdicts])] == [
        ("62 waves", 12, "pass"), ("memory-bound", 12, "pass")]


def test_a_device_set_in_a_later_block_replaces_the_earlier_one_for_the_blocks_after_it(tmp_path):
    document = """```gpu
device H100-SXM
device.sms = 132
```

```gpu
device A100-80GB
device.sms = 132
```
"""
    report = check(tmp_path, document)
    assert [v.status for v in report.verdicts] == ["pass", "fail"]
    assert report.verdicts[1].claim.span.line == 8


def test_a_name_used_before_the_block_that_defines_it_is_an_error_at_its_use(tmp_path, capsys):
    document = """Intro.

```gpu
device H100-SXM
y = x * 2 is 62 waves
```

```gpu
x = bf16[4096, 4096]
```
"""
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 2
    assert "unknown name `x`" in out
    assert_caret_under(out, "unknown-name", document, "x * 2")


# --- Every location is the document's -------------------------------------------------------------------

INDENTED = """# Doc

- An item whose fence is indented:

  ```gpu
  device H100-SXM
{body}
  ```
"""


def indented(*lines: str) -> str:
    return INDENTED.format(body="\n".join("  " + line for line in lines))


def test_verdicts_of_an_indented_fence_are_at_the_documents_line_and_column_in_text_and_json(tmp_path, capsys):
    document = indented("x = bf16[4096, 4096]", "y = x * 2:", "    62 waves", "    70 waves")
    path = write(tmp_path, "doc.md", document)
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    line, column = where(document, "70 waves")
    assert f"{path}:{line}:{column}: fail: y = x * 2" in out
    assert main(["check", "--format", "json", str(path)]) == 1
    results = json.loads(capsys.readouterr().out)["results"]
    assert [(r["claim"], r["line"], r["column"]) for r in results] == [
        ("62 waves", *where(document, "62 waves")), ("70 waves", line, column)]


def test_a_syntax_error_in_an_indented_fence_is_at_the_documents_column_with_the_caret_under_it(tmp_path, capsys):
    document = indented("x*2 on 4096² bf16 is @ 3")
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 2
    assert_caret_under(out, "syntax", document, "@ 3")


def test_a_syntax_error_at_the_end_of_a_line_in_an_indented_fence_points_past_its_last_character(tmp_path, capsys):
    document = indented("x*2 on 4096² bf16 is ≈")
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 2
    line, column, excerpt, caret = error_block(out, "syntax")
    text = document.split("\n")[line - 1]
    assert text.endswith("is ≈") and (line, column) == (where(document, "is ≈")[0], len(text) + 1)
    assert caret.index("^") - 4 == len(text)


def test_an_unknown_device_in_an_indented_fence_is_at_the_documents_column(tmp_path, capsys):
    document = "Intro\n\n- item\n\n  ```gpu\n  device H10-SXM\n  ```\n"
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 2
    assert_caret_under(out, "unknown-device", document, "device H10-SXM")


def test_unit_errors_in_an_indented_fence_are_at_the_documents_columns(tmp_path, capsys):
    document = indented("w = 3 uss", "t = 3 s + 4 B", "q = undefined_name * 2")
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 2
    assert_caret_under(out, "unknown-unit", document, "3 uss")
    assert_caret_under(out, "dimension-mismatch", document, "3 s + 4 B")
    assert_caret_under(out, "unknown-name", document, "undefined_name")


def test_a_number_too_large_in_an_indented_fence_is_at_the_documents_column(tmp_path, capsys):
    # The .gpu form of this error points at `1e999` (column 5 of `w = 1e999 B`); in a fence indented
    # two columns it must point at column 7 of the document line.
    document = indented("w = 1e999 B")
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 2
    assert_caret_under(out, "bad-number", document, "1e999")


def test_a_bad_indentation_in_an_indented_fence_is_at_the_documents_column(tmp_path, capsys):
    document = indented("x = bf16[4096]", "y = x * 2:", "        62 waves", "    1 kernels")
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 2
    assert_caret_under(out, "bad-indentation", document, "1 kernels")


def test_errors_in_a_hidden_block_are_at_the_documents_columns(tmp_path, capsys):
    document = "Prose.\n\n<!-- gpu device H10-SXM -->\n<!-- gpu\n  w = 3 uss\n-->\n"
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 2
    assert_caret_under(out, "unknown-device", document, "device H10-SXM")
    assert_caret_under(out, "unknown-unit", document, "3 uss")


def test_a_syntax_error_in_a_one_line_hidden_block_is_at_the_documents_column(tmp_path, capsys):
    document = "<!-- gpu device H100-SXM -->\n<!-- gpu x*2 on 4096² bf16 is @ 3 -->\n"
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 2
    assert_caret_under(out, "syntax", document, "@ 3")


# --- A malformed block is an error ----------------------------------------------------------------------

def test_a_malformed_fence_makes_the_check_invalid_not_a_silent_pass(tmp_path, capsys):
    document = "```gpu\ndevice H100-SXM\ndevice.sms = 132\n```\n\n```gpu\nthis is not a spec at all\n```\n"
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 2
    assert re.search(r"doc\.md:7:\d+: error\[syntax\]", out), out
    assert "0 failed" in out.splitlines()[-1] and "1 error in 1 file" in out


def test_a_malformed_hidden_block_makes_the_check_invalid(tmp_path, capsys):
    code, out = check_cli(tmp_path, capsys, "<!-- gpu\ndevice H100-SXM\nx*2 on is is\n-->\n")
    assert code == 2
    assert "doc.md:3:" in out and "error[syntax]" in out


def test_an_unclosed_gpu_fence_runs_to_the_end_of_the_document_and_its_errors_count(tmp_path, capsys):
    code, out = check_cli(tmp_path, capsys, "Text.\n\n```gpu\ndevice H100-SXM\nnot a claim ??\n")
    assert code == 2
    assert "doc.md:5:" in out


# --- Folders ----------------------------------------------------------------------------------------------

def test_a_folder_check_covers_gpu_files_and_markdown_with_gpu_blocks_only(tmp_path, capsys):
    docs = tmp_path / "docs"
    write(docs, "a.gpu", "device H100-SXM\ndevice.sms = 132\n")
    write(docs, "with-fence.md", "# A\n\n```gpu\ndevice H100-SXM\ndevice.warp_size = 32\n```\n")
    write(docs, "sub/with-hidden.markdown", "<!-- gpu\ndevice H100-SXM\ndevice.sms = 132\n-->\n")
    write(docs, "sub/with-tildes.md", "~~~gpu\ndevice H100-SXM\ndevice.sms = 132\n~~~\n")
    write(docs, "prose.md", "# Prose\n\nThe gpu is fast; device H10 is not a claim here.\n")
    write(docs, "python.md", "```python\nprint('gpu')\n```\n")
    write(docs, "notes.txt", "```gpu\ndevice H10\n```\n")
    report = run_check([str(docs)])
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    assert sorted(report.files) == sorted(str(docs / name) for name in (
        "a.gpu", "with-fence.md", "sub/with-hidden.markdown", "sub/with-tildes.md"))
    assert len(report.verdicts) == 4 and all(v.status == "pass" for v in report.verdicts)
    assert main(["check", str(docs)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "4 passed, 0 failed"


def test_a_folder_check_leaves_markdown_that_only_mentions_gpu_fences_in_inline_code_alone(tmp_path):
    # "every Markdown file that holds gpu blocks": a document *about* gpu fences holds none.
    docs = tmp_path / "docs"
    write(docs, "a.gpu", "device H100-SXM\ndevice.sms = 132\n")
    write(docs, "howto.md", "Write your claims in a ```` ```gpu ```` fence or a `<!-- gpu ... -->` comment.\n")
    report = run_check([str(docs)])
    assert list(report.files) == [str(docs / "a.gpu")]


def test_a_folder_check_reports_a_malformed_markdown_block_as_invalid(tmp_path, capsys):
    write(tmp_path, "a.gpu", "device H100-SXM\ndevice.sms = 132\n")
    write(tmp_path, "broken.md", "```gpu\ndevice H100-SXM\ndevice.sms = = 132\n```\n")
    assert main(["check", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert "broken.md:3:" in out and "error[syntax]" in out


# --- Line breaks: a lone CR and CRLF end lines as they do for CommonMark -----------------------------------------

@pytest.mark.parametrize("newline", ["\r", "\r\n"], ids=["cr", "crlf"])
def test_markdown_with_other_line_breaks_is_read_at_the_same_lines_and_columns(tmp_path, capsys, newline):
    document = "# T\n\nProse.\n\n- item\n\n  ```gpu\n  device H100-SXM\n  " + FAILING_WAVES + "\n  ```\n"
    lf = check(tmp_path, document, "lf.md")
    other = check(tmp_path, document.replace("\n", newline), "other.md")
    assert where(document, "70 waves") == (9, 24)
    assert located(other) == located(lf) == [("70 waves", 9, 24)]
    code, out = check_cli(tmp_path, capsys, document.replace("\n", newline), "cli.md")
    assert code == 1 and "cli.md:9:24: fail:" in out
    main(["check", "--format", "json", str(tmp_path / "cli.md")])
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert (result["line"], result["column"], result["claim"]) == (9, 24, "70 waves")


def test_markdown_with_lone_cr_line_breaks_shows_errors_on_the_documents_lines(tmp_path, capsys):
    document = "# T\r\r```gpu\rdevice H100-SXM\rx*2 on 4096² bf16 is @\r```\r"
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 2
    assert_caret_under(out, "syntax", document.replace("\r", "\n"), "@")


def test_the_pytest_plugin_collects_markdown_with_lone_cr_line_breaks(tmp_path):
    import subprocess
    import sys

    (tmp_path / "doc.md").write_bytes(("# T\r\r```gpu\rdevice H100-SXM\r" + FAILING_WAVES + ", memory-bound\r```\r")
                                      .encode())
    (tmp_path / "crlf.md").write_bytes(b"```gpu\r\ndevice H100-SXM\r\ndevice.sms = 132\r\n```\r\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                             "--gpuspec-markdown", "-rf", "doc.md", "crlf.md"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "INTERNALERROR" not in result.stdout + result.stderr, result.stdout + result.stderr
    assert result.returncode == 1, result.stdout
    assert "1 failed, 2 passed" in result.stdout
    assert "doc.md:5:" in result.stdout  # the failing claim at the document's line


# --- Near misses: blocks nearly meant as gpu blocks get a warning with the fix ---------------------------------

NEAR_MISSES = {
    "upper-case fence": ("```GPU\ndevice H100-SXM\n```\n", (1, 4), "```GPU is not a gpu block", "write ```gpu"),
    "capitalised tilde fence": ("~~~Gpu\ndevice H100-SXM\n~~~\n", (1, 4), "~~~Gpu is not a gpu block",
                                "write ~~~gpu"),
    "punctuation after gpu": ("```gpu,\ndevice H100-SXM\n```\n", (1, 4), "must be the word `gpu` alone",
                              "with a space before anything that follows it"),
    "braces": ("``` {.gpu}\ndevice H100-SXM\n```\n", (1, 5), "not in braces", "write ```gpu"),
    "hidden block inside a div": ("<div>\n<!-- gpu device H100-SXM -->\n</div>\n", (2, 1),
                                  "inside an HTML block (`<div>` on line 1)", "after a blank line"),
    "upper-case hidden block": ("Prose.\n\n<!-- GPU\ndevice H100-SXM\n-->\n", (3, 1),
                                "`<!-- GPU` is not a hidden gpu block", "write `<!-- gpu`"),
    "fence inside details": ("<details>\n```gpu\ndevice H100-SXM\n```\n</details>\n", (2, 1),
                             "this gpu fence is inside an HTML block", "leave a blank line"),
    "hidden block inside a paragraph": ("Prose <!-- gpu device H100-SXM --> here.\n", (1, 7),
                                        "inside a paragraph", "lines of its own"),
    "indented in a list": ("- item\n\n  ```GPU\n  device H100-SXM\n  ```\n", (3, 6), "```GPU is not a gpu block",
                           "write ```gpu"),
}


@pytest.mark.parametrize("name", list(NEAR_MISSES))
def test_a_near_miss_gets_a_located_warning_with_the_fix_and_is_not_an_error(tmp_path, name):
    document, place, message, fix = NEAR_MISSES[name]
    report = check(tmp_path, document)
    assert not report.diagnostics and not report.verdicts
    [warning] = report.warnings
    assert warning.code == "near-miss"
    assert (warning.span.file, warning.span.line, warning.span.column) == (str(tmp_path / "doc.md"), *place)
    assert message in warning.message and fix in warning.help
    assert markdown.near_misses("doc.md", document) == (warning,) or markdown.near_misses("doc.md", document)


def test_near_misses_are_printed_in_the_text_report_with_a_caret_and_the_fix(tmp_path, capsys):
    document = "# T\n\n```GPU\ndevice H100-SXM\n```\n\n```gpu\ndevice H100-SXM\ndevice.sms = 132\n```\n"
    code, out = check_cli(tmp_path, capsys, document)
    assert code == 0  # the real block passes; the warning changes no verdict
    assert f"{tmp_path / 'doc.md'}:3:4: warning[near-miss]: ```GPU is not a gpu block" in out
    assert "\n    ```GPU\n       ^^^\n    help: write ```gpu\n" in out


def test_a_folder_check_finds_a_document_whose_only_blocks_are_near_misses(tmp_path):
    write(tmp_path, "near.md", "# Notes\n\n```GPU\ndevice H100-SXM\n```\n")
    write(tmp_path, "prose.md", "# Prose\n\nThe GPU is fast; ```GPU``` in code is fine.\n")
    report = run_check([str(tmp_path)])
    assert report.files == (str(tmp_path / "near.md"),)
    assert [w.span.line for w in report.warnings] == [3]


@pytest.mark.parametrize("document", [
    "```gpux\ndevice H10\n```\n",                                  # another language that starts with gpu
    "````markdown\n```GPU\ndevice H10\n```\n<!-- GPU x -->\n````\n",  # an example inside a fence
    "Inline code `<!-- gpu x -->` and ```GPU``` in prose.\n",       # code spans
    "<!-- a note about the GPU -->\n",                              # an ordinary comment
    "    ```GPU\n    device H10\n    ```\n",                       # an indented code block
], ids=["gpux", "example-in-a-fence", "code-spans", "ordinary-comment", "indented-code"])
def test_what_is_plainly_not_a_gpu_block_gets_no_warning(document):
    assert markdown.near_misses("doc.md", document) == ()


def test_a_real_block_beside_a_near_miss_is_checked_and_the_near_miss_warned(tmp_path):
    document = "<!-- gpu device H100-SXM -->\n<!-- GPU device.sms = 144 -->\n\n```gpu\ndevice.sms = 132\n```\n"
    report = check(tmp_path, document)
    assert [v.status for v in report.verdicts] == ["pass"]
    assert [(w.span.line, w.span.column) for w in report.warnings] == [(2, 1)]


def test_the_pytest_plugin_warns_of_near_misses_with_the_fix(tmp_path):
    import subprocess
    import sys

    (tmp_path / "doc.md").write_text("# T\n\n```GPU\ndevice H100-SXM\n```\n\n```gpu\ndevice H100-SXM\n"
                                     "device.sms = 132\n```\n", encoding="utf-8")
    (tmp_path / "only.md").write_text("# Only a near miss\n\n<!-- GPU device H100-SXM -->\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                             "--gpuspec-markdown", "doc.md", "only.md"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 2 warnings" in result.stdout
    assert "doc.md:3:4: ```GPU is not a gpu block: the fence's language is lowercase `gpu`; write ```gpu" \
        in result.stdout
    assert "only.md:3:1: `<!-- GPU` is not a hidden gpu block" in result.stdout
