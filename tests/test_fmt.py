"""`gpuspec fmt`: the canonical layout (golden cases for each rule), idempotence and the meaning check on every
bundled spec, refusing what would change meaning, the command line, and Markdown fences."""
from __future__ import annotations

import pytest
from conftest import ROOT
from markdown_it import MarkdownIt

from gpuspec import fmt
from gpuspec.cli import main
from gpuspec.fmt import FormatError, fingerprint, format_markdown, format_spec, format_text


def bundled_specs() -> list[tuple[str, str]]:
    """(name, text) of every spec under specs/ and every gpu block of README.md."""
    found = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in sorted((ROOT / "specs").rglob("*.gpu"))]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for token in MarkdownIt("commonmark").parse(readme):
        if token.type == "fence" and token.info.split()[:1] == ["gpu"]:
            found.append((f"README.md:{token.map[0] + 1}", token.content))
    return found


BUNDLED = bundled_specs()


def test_the_bundled_specs_are_found():
    names = [name for name, _ in BUNDLED]
    assert "specs/gpu-execution.gpu" in names
    assert sum(name.startswith("README.md:") for name in names) >= 2


@pytest.mark.parametrize("name,text", BUNDLED, ids=[name for name, _ in BUNDLED])
def test_formatting_a_bundled_spec_is_idempotent_and_keeps_its_meaning(name, text):
    assert fingerprint(text) is not None, f"{name} does not parse"
    once = format_text(text)
    assert format_text(once) == once
    assert fingerprint(once) == fingerprint(text)
    assert format_spec(text, name) == once  # the meaning check agrees


# --- Golden cases: one per layout rule ---------------------------------------------------------------------

H100 = "device H100-SXM\n"
TENSOR = "x = bf16[4096, 4096]\n"

GOLDEN = {
    "blocks are indented four spaces": (
        H100 + TENSOR + "y = x * 2:\n  62 waves\n  1 kernels\n",
        H100 + TENSOR + "y = x * 2:\n    62 waves\n    1 kernels\n"),
    "a block indented with a tab is four spaces": (
        H100 + TENSOR + "y = x * 2:\n\t62 waves\n",
        H100 + TENSOR + "y = x * 2:\n    62 waves\n"),
    "a deeply indented block is four spaces": (
        H100 + TENSOR + "y = x * 2:\n          62 waves\n          1 kernels\nz = x * 3 is 1 kernels\n",
        H100 + TENSOR + "y = x * 2:\n    62 waves\n    1 kernels\nz = x * 3 is 1 kernels\n"),
    "one space around operators": (
        H100 + TENSOR + "y = x*2+1 fused:\n    1 kernels\nw = (2+3)/4*8.03e9 B\n",
        H100 + TENSOR + "y = x * 2 + 1 fused:\n    1 kernels\nw = (2 + 3) / 4 * 8.03e9 B\n"),
    "one space around comparators and ±": (
        H100 + TENSOR + "y = x * 2:\n    t_mem/t_math≈80×\n    ≈20 µs±5%\n    time<=25 µs\n    time>=15 µs\n"
        "    waves  =  62\n    ~20 µs +- 2 µs\n",
        H100 + TENSOR + "y = x * 2:\n    t_mem / t_math ≈ 80×\n    ≈ 20 µs ± 5%\n    time <= 25 µs\n    time >= 15 µs\n"
        "    waves = 62\n    ~ 20 µs +- 2 µs\n"),
    "no space inside brackets, one after a comma": (
        H100 + "x = bf16[ 4096 ,4096 ]\nw = ( 2 + 1 )\ny = exp( x ) is 1 kernels\nz = max( x,x ) is 1 kernels\n",
        H100 + "x = bf16[4096, 4096]\nw = (2 + 1)\ny = exp(x) is 1 kernels\nz = max(x, x) is 1 kernels\n"),
    "no space around . ^ ² and range dashes": (
        H100 + "device . sms = 132\nw = 2 ^ 10\nx*2 on 4096 ² bf16 is 62 waves\ndevice.l2_latency = 200 – 300 cycles\n"
        "device.l2_latency = 200 .. 300 cycles\n",
        H100 + "device.sms = 132\nw = 2^10\nx * 2 on 4096² bf16 is 62 waves\ndevice.l2_latency = 200–300 cycles\n"
        "device.l2_latency = 200..300 cycles\n"),
    "a number and its unit apart": (
        H100 + TENSOR + "y = x * 2 is ≈20µs, 67.1MB moved, ≈20us\nw = 3.35TB/s\n",
        H100 + TENSOR + "y = x * 2 is ≈ 20 µs, 67.1 MB moved, ≈ 20 us\nw = 3.35 TB/s\n"),
    "percent, times and SI suffixes attached": (
        H100 + TENSOR + "set tolerance = 10 %\ny = x * 2:\n    t_mem / t_math ≈ 80 ×\n    busy_share ≈ 100 %\n"
        "    16.8 M elements\n",
        H100 + TENSOR + "set tolerance = 10%\ny = x * 2:\n    t_mem / t_math ≈ 80×\n    busy_share ≈ 100%\n"
        "    16.8M elements\n"),
    "binary count suffixes and counts per second written against their number": (
        H100 + TENSOR + "y = x * 2\nt = 10Ki launches of y\ns = decode llama3-8b, batch 1, context 32Ki\n"
        "s.tokens_per_s ≈ 20 /s\nw = 200 k/s\ns.tokens_per_s ≈ 1.2 k tokens/s\n",
        H100 + TENSOR + "y = x * 2\nt = 10Ki launches of y\ns = decode llama3-8b, batch 1, context 32Ki\n"
        "s.tokens_per_s ≈ 20/s\nw = 200k/s\ns.tokens_per_s ≈ 1.2k tokens/s\n"),
    "a lower bound keeps its plus": (
        H100 + "device.hbm_latency = 400+ cycles\n",
        H100 + "device.hbm_latency = 400+ cycles\n"),
    "device and model names are kept whole": (
        "device  H100-SXM\ndevice half-h100 from H100-SXM with sms=66\nmodel deep from llama3.1-8b with layers=64\n"
        "decode mixtral-8x7b,batch 1 is memory-bound\n",
        "device H100-SXM\ndevice half-h100 from H100-SXM with sms = 66\nmodel deep from llama3.1-8b with layers = 64\n"
        "decode mixtral-8x7b, batch 1 is memory-bound\n"),
    "a minus sign is a sign after an operator, a bracket or a comparator": (
        H100 + "w = - 3*( 2+1 )\nv = 3 - -2\nu = 2 ^ (-1)\nt = max( 1,-1 )\ns = 4*-2\nr=-1\n",
        H100 + "w = -3 * (2 + 1)\nv = 3 - -2\nu = 2^(-1)\nt = max(1, -1)\ns = 4 * -2\nr = -1\n"),
    "comments are kept as written, two spaces after the code or at the column they were aligned to": (
        "# a   header   comment,  x*2\n" + H100 + "w = 2*3 # w   is 6\nv = 1      #   far away\nu=1+2+3   # pushed\n",
        "# a   header   comment,  x*2\n" + H100 + "w = 2 * 3  # w   is 6\nv = 1      #   far away\n"
        "u = 1 + 2 + 3  # pushed\n"),
    "lines between fmt: off and fmt: on are kept as written": (
        H100 + "# fmt: off\nw = 2*3   \n# fmt: on\nv=1\n",
        H100 + "# fmt: off\nw = 2*3\n# fmt: on\nv = 1\n"),
    "a comment in a block is indented with the block": (
        H100 + TENSOR + "y = x * 2:\n  # about waves:  62\n  62 waves\n",
        H100 + TENSOR + "y = x * 2:\n    # about waves:  62\n    62 waves\n"),
    "quoted sentences are kept as written": (
        H100 + TENSOR + "\"x is 4096 × 4096 = 16,777,216 numbers;  a # is not a comment here\"\n"
        "y = x*2:\n  “Curly: 132 × 8 = 1,056 blocks per wave,≈ 62 waves.”   # a comment\n  62 waves\n",
        H100 + TENSOR + "\"x is 4096 × 4096 = 16,777,216 numbers;  a # is not a comment here\"\n"
        "y = x * 2:\n    “Curly: 132 × 8 = 1,056 blocks per wave,≈ 62 waves.”  # a comment\n    62 waves\n"),
    "a quoted sentence over several lines is kept as written": (
        H100 + TENSOR + "y = x*2:\n  \"An SM holds at most 2,048 resident threads,\n"
        "   so ≤ 8 blocks of 256 at once:   # not a comment\n   132 × 8 = 1,056 blocks per wave.\"\n  62 waves\n",
        H100 + TENSOR + "y = x * 2:\n    \"An SM holds at most 2,048 resident threads,\n"
        "   so ≤ 8 blocks of 256 at once:   # not a comment\n   132 × 8 = 1,056 blocks per wave.\"\n    62 waves\n"),
    "runs of blank lines are capped at two": (
        H100 + "\n\n\n\n\n" + TENSOR + "\n\n\n" + "device.sms = 132\n",
        H100 + "\n\n" + TENSOR + "\n\n" + "device.sms = 132\n"),
    "trailing spaces go and the text ends with one line break": (
        H100.rstrip("\n") + "   \n" + "device.sms = 132  \n\n\n\n",
        H100 + "device.sms = 132\n"),
    "a missing final line break is added": (
        H100 + "device.sms = 132",
        H100 + "device.sms = 132\n"),
}


@pytest.mark.parametrize("rule", list(GOLDEN))
def test_golden_layout(rule):
    given, expected = GOLDEN[rule]
    assert format_text(given) == expected
    assert format_text(expected) == expected  # the canonical form is a fixed point
    assert fingerprint(given) is not None, "the golden input should parse"
    assert fingerprint(expected) == fingerprint(given)
    assert format_spec(given) == expected


@pytest.mark.parametrize("name,text", [(n, t) for n, t in BUNDLED if n.startswith("specs/")])
def test_the_bundled_spec_files_are_already_laid_out_canonically(name, text):
    assert format_text(text) == text, f"run `gpuspec fmt {name}`"


def test_the_readme_example_line_is_laid_out_as_documented():
    given = "x*2 on 4096² bf16 is memory-bound,≈20µs,62 waves\n"
    assert format_text(given) == "x * 2 on 4096² bf16 is memory-bound, ≈ 20 µs, 62 waves\n"


# --- The meaning check -----------------------------------------------------------------------------------

def test_format_spec_refuses_text_that_does_not_parse():
    with pytest.raises(FormatError, match="does not parse"):
        format_spec("device H100-SXM\nx*2 on 4096² bf16 is @\n", "bad.gpu")


def test_format_spec_refuses_a_layout_that_would_parse_differently():
    # `ismemory-bound` reads as `is memory-bound`, but the layout splits it into `ismemory - bound`.
    text = "device H100-SXM\nx*2 on 4096² bf16 ismemory-bound\n"
    assert fingerprint(text) is not None
    assert fingerprint(format_text(text)) != fingerprint(text)
    with pytest.raises(FormatError, match="would change what it says"):
        format_spec(text, "a.gpu")


@pytest.mark.parametrize("change", [
    ("x * 2", "x + 2"),                     # another operator
    ("62 waves", "62 blocks"),              # another metric
    ("≈ 20 µs", "< 20 µs"),                 # another comparator
    ("device.sms = 132\n", ""),             # a claim dropped
], ids=["operator", "metric", "comparator", "dropped-claim"])
def test_format_spec_refuses_a_format_text_that_changes_the_structure(monkeypatch, change):
    text = H100 + TENSOR + "y = x * 2:\n    62 waves\n    ≈ 20 µs\ndevice.sms = 132\n"
    old, new = change
    monkeypatch.setattr(fmt, "format_text", lambda t: t.replace(old, new))
    with pytest.raises(FormatError, match="would change what it says"):
        format_spec(text, "a.gpu")


@pytest.mark.parametrize("change", [
    ("62 waves", "63 waves"),               # another number
    ("= 132", "= 144"),                     # another number in a direct claim
    ("memory-bound", "compute-bound"),      # another bound word
    ("bound = memory", "bound = compute"),  # another word
    ("\"x is small\"", "\"x is large\""),   # another quoted sentence
], ids=["number", "direct-claim-number", "bound-word", "word", "quote"])
def test_format_spec_refuses_a_format_text_that_changes_a_number_word_or_quote(monkeypatch, change):
    text = (H100 + TENSOR + "\"x is small\"\ny = x * 2:\n    62 waves\n    memory-bound\n    bound = memory\n"
            "device.sms = 132\n")
    old, new = change
    assert old in text
    monkeypatch.setattr(fmt, "format_text", lambda t: t.replace(old, new))
    with pytest.raises(FormatError, match="would change what it says"):
        format_spec(text, "a.gpu")


def test_fingerprints_differ_when_the_numbers_differ():
    assert fingerprint(H100 + "device.sms = 132\n") != fingerprint(H100 + "device.sms = 144\n")


def test_fingerprints_ignore_layout_and_comments():
    assert fingerprint(H100 + "device.sms   =  132   # c\n") == fingerprint(H100 + "\n\ndevice.sms = 132\n")


# --- The command line ------------------------------------------------------------------------------------

UGLY = "device  H100-SXM\nx = bf16[4096,4096]\ny = x*2:\n  62 waves   # keep  me\n"
PRETTY = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2:\n    62 waves  # keep  me\n"


def write(folder, name, text):
    path = folder / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_fmt_check_exits_1_when_a_file_would_change_and_changes_nothing(tmp_path, capsys):
    path = write(tmp_path, "a.gpu", UGLY)
    assert main(["fmt", "--check", str(path)]) == 1
    assert f"would reformat {path}" in capsys.readouterr().out
    assert path.read_bytes() == UGLY.encode()


def test_fmt_check_exits_0_when_nothing_would_change(tmp_path, capsys):
    path = write(tmp_path, "a.gpu", PRETTY)
    assert main(["fmt", "--check", str(path)]) == 0
    assert capsys.readouterr().out == ""
    assert path.read_bytes() == PRETTY.encode()


def test_fmt_diff_prints_a_unified_diff_and_changes_nothing(tmp_path, capsys):
    path = write(tmp_path, "a.gpu", UGLY)
    code = main(["fmt", "--diff", str(path)])
    out = capsys.readouterr().out
    assert code == 1
    assert path.read_bytes() == UGLY.encode()
    lines = out.splitlines()
    assert lines[0] == f"--- {path}" and lines[1] == f"+++ {path} (formatted)"
    assert lines[2].startswith("@@ ")
    assert "-device  H100-SXM" in lines and "+device H100-SXM" in lines
    assert "-y = x*2:" in lines and "+y = x * 2:" in lines
    assert "+    62 waves  # keep  me" in lines


def test_fmt_diff_prints_nothing_for_a_formatted_file(tmp_path, capsys):
    path = write(tmp_path, "a.gpu", PRETTY)
    assert main(["fmt", "--diff", str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_fmt_rewrites_the_file_and_a_second_run_changes_nothing(tmp_path, capsys):
    path = write(tmp_path, "a.gpu", UGLY)
    assert main(["fmt", str(path)]) == 0
    assert capsys.readouterr().out == f"reformatted {path}\n"
    assert path.read_bytes() == PRETTY.encode()
    assert main(["fmt", str(path)]) == 0
    assert capsys.readouterr().out == ""
    assert path.read_bytes() == PRETTY.encode()
    assert main(["fmt", "--check", str(path)]) == 0


def test_fmt_keeps_a_byte_order_mark_and_the_files_permissions(tmp_path, capsys):
    path = write(tmp_path, "a.gpu", "\ufeff" + UGLY)
    path.chmod(0o640)
    assert main(["fmt", str(path)]) == 0
    assert path.read_bytes() == ("\ufeff" + PRETTY).encode()
    assert path.stat().st_mode & 0o777 == 0o640


def test_fmt_leaves_a_file_that_does_not_parse_alone_and_says_so(tmp_path, capsys):
    text = "device  H100-SXM\nx*2 on 4096² bf16 is @\n"
    path = write(tmp_path, "bad.gpu", text)
    assert main(["fmt", str(path)]) == 2
    assert "does not parse" in capsys.readouterr().err
    assert path.read_bytes() == text.encode()


def test_fmt_leaves_a_file_it_would_change_the_meaning_of_alone(tmp_path, capsys):
    text = "device  H100-SXM\nx*2 on 4096² bf16 ismemory-bound\n"
    path = write(tmp_path, "a.gpu", text)
    assert main(["fmt", str(path)]) == 2
    assert "would change what it says" in capsys.readouterr().err
    assert path.read_bytes() == text.encode()


def test_fmt_of_a_folder_formats_specs_and_markdown_and_leaves_other_files(tmp_path, capsys):
    spec = write(tmp_path, "a.gpu", UGLY)
    doc = write(tmp_path, "doc.md", "# Doc\n\n```gpu\n" + UGLY + "```\n")
    prose = "# Prose\n\nx*2  is  fine  here.\n"
    other = write(tmp_path, "prose.md", prose)
    assert main(["fmt", str(tmp_path)]) == 0
    assert spec.read_text(encoding="utf-8") == PRETTY
    assert doc.read_text(encoding="utf-8") == "# Doc\n\n```gpu\n" + PRETTY + "```\n"
    assert other.read_text(encoding="utf-8") == prose


# --- Markdown -----------------------------------------------------------------------------------------------

DOCUMENT = """# The  multiply

Prose  with x*2 and   odd   spacing stays.

```python
y=x*2   # python is not ours
```

1. In a list:

   ```gpu
   device  H100-SXM
   x = bf16[4096,4096]
   y = x*2:
     62 waves   # keep  me
   ```

<!-- gpu device.sms=132 -->

~~~gpu title=more
device.warp_size=32
~~~
"""

FORMATTED = """# The  multiply

Prose  with x*2 and   odd   spacing stays.

```python
y=x*2   # python is not ours
```

1. In a list:

   ```gpu
   device H100-SXM
   x = bf16[4096, 4096]
   y = x * 2:
       62 waves  # keep  me
   ```

<!-- gpu device.sms=132 -->

~~~gpu title=more
device.warp_size = 32
~~~
"""


def test_markdown_only_the_gpu_fence_bodies_change_at_the_fences_indentation():
    assert format_markdown(DOCUMENT, "doc.md") == FORMATTED
    assert format_markdown(FORMATTED, "doc.md") == FORMATTED
    before, after = DOCUMENT.split("\n"), FORMATTED.split("\n")
    assert len(before) == len(after)
    changed = [i + 1 for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert changed == [12, 13, 14, 15, 21]  # fence body lines only


def test_markdown_fmt_on_the_command_line_keeps_the_document_checkable(tmp_path, capsys):
    path = write(tmp_path, "doc.md", DOCUMENT)
    assert main(["fmt", "--check", str(path)]) == 1
    assert main(["fmt", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == FORMATTED
    capsys.readouterr()
    assert main(["check", str(path)]) == 0
    assert main(["fmt", "--check", str(path)]) == 0


def test_markdown_with_an_empty_gpu_fence_is_left_as_it_is():
    document = "# T\n\n```gpu\n```\n\n```gpu\n\n```\n"
    assert format_markdown(document) == document


def test_markdown_fence_that_does_not_parse_is_refused():
    with pytest.raises(FormatError):
        format_markdown("```gpu\ndevice H100-SXM\nx*2 on 4096² bf16 is @\n```\n", "doc.md")


def test_markdown_fence_opened_on_a_list_markers_line_stays_in_the_list():
    document = "-   ```gpu\n    device  H100-SXM\n    device.sms=132\n    ```\n"
    assert format_markdown(document) == "-   ```gpu\n    device H100-SXM\n    device.sms = 132\n    ```\n"


def test_markdown_fence_in_a_block_quote_stays_in_the_quote():
    document = "> ```gpu\n> device  H100-SXM\n> device.sms=132\n> ```\n"
    assert format_markdown(document) == "> ```gpu\n> device H100-SXM\n> device.sms = 132\n> ```\n"


# --- Line breaks, byte-order marks, names: nothing lost, nothing changed in meaning ------------------------------

def test_format_text_lays_out_every_kind_of_line_break_as_one():
    assert format_text("device H100-SXM\r\ndevice.sms=132\rw=1\n") == "device H100-SXM\ndevice.sms = 132\nw = 1\n"


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_fmt_keeps_the_files_line_breaks(tmp_path, capsys, newline):
    path = write(tmp_path, "a.gpu", UGLY.replace("\n", newline))
    assert format_spec(UGLY.replace("\n", newline)) == PRETTY.replace("\n", newline)
    assert main(["fmt", str(path)]) == 0
    assert path.read_bytes() == PRETTY.replace("\n", newline).encode()
    assert main(["fmt", "--check", str(path)]) == 0


def test_fmt_keeps_a_byte_order_mark_and_crlf_together(tmp_path, capsys):
    path = write(tmp_path, "a.gpu", "\ufeff" + UGLY.replace("\n", "\r\n"))
    assert main(["fmt", str(path)]) == 0
    assert path.read_bytes() == ("\ufeff" + PRETTY.replace("\n", "\r\n")).encode()


def test_fmt_makes_mixed_line_breaks_the_most_common_kind_and_says_so_in_a_diff(tmp_path, capsys):
    text = "device H100-SXM\r\ndevice.sms = 132\r\nw = 1\n"
    path = write(tmp_path, "a.gpu", text)
    assert main(["fmt", "--diff", str(path)]) == 1
    assert capsys.readouterr().out == f"{path}: every line break becomes \\r\\n\n"
    assert main(["fmt", str(path)]) == 0
    assert path.read_bytes() == text.replace("\r\n", "\n").replace("\n", "\r\n").encode()


def test_the_meaning_check_reads_a_lone_cr_as_check_does():
    # check reads `# note\rdevice A100-80GB` as a comment and a device line: so must the guard, and fmt keeps both.
    text = "device H100-SXM\n# note\rdevice  A100-80GB\n"
    assert fingerprint(text) == fingerprint("device H100-SXM\n# note\ndevice A100-80GB\n")
    assert fingerprint(text) != fingerprint("device H100-SXM\n# note device A100-80GB\n")
    assert format_spec(text) == "device H100-SXM\n# note\ndevice A100-80GB\n"


def test_a_file_that_does_not_parse_is_refused_with_the_first_error_located(tmp_path, capsys):
    path = write(tmp_path, "bad.gpu", "device  H100-SXM\rx*2 on 4096² bf16 is @\r")
    assert main(["fmt", str(path)]) == 2
    assert f"{path}:2:" in capsys.readouterr().err
    assert path.read_bytes() == b"device  H100-SXM\rx*2 on 4096\xc2\xb2 bf16 is @\r"


def test_fmt_refuses_bytes_that_are_not_utf8_at_their_place(tmp_path, capsys):
    path = tmp_path / "a.gpu"
    path.write_bytes(b"device  H100-SXM\nw = \xff\n")
    assert main(["fmt", str(path)]) == 2
    assert f"{path}:2:5: byte 0xff is not UTF-8 text" in capsys.readouterr().err
    assert path.read_bytes() == b"device  H100-SXM\nw = \xff\n"


def test_fmt_of_standard_input_with_other_paths_is_refused_with_the_reason(tmp_path, capsys):
    # `fmt -` alone formats standard input to standard output (tests/test_cli_stdin.py)
    assert main(["fmt", "-", str(tmp_path)]) == 2
    assert "standard input" in capsys.readouterr().err


def test_fmt_prints_file_names_and_diffs_with_control_and_bidi_characters_escaped(tmp_path, capsys):
    path = write(tmp_path, "a\u202e\x1b[31m.gpu", "device  H100-SXM  # \x1b]0;title\x07 \u2066\n")
    shown = str(tmp_path) + "/a\\u202e\\x1b[31m.gpu"
    assert main(["fmt", "--check", str(path)]) == 1
    assert capsys.readouterr().out == f"would reformat {shown}\n"
    assert main(["fmt", "--diff", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"--- {shown}\n" in out and "\\x1b]0;title\\x07 \\u2066" in out
    assert "\x1b" not in out and "\u202e" not in out and "\u2066" not in out and "\x07" not in out
    assert main(["fmt", str(path)]) == 0
    assert capsys.readouterr().out == f"reformatted {shown}\n"


def test_fmt_writes_through_a_symlink_and_the_link_stays(tmp_path, capsys):
    target = write(tmp_path, "a.gpu", UGLY)
    link = tmp_path / "link.gpu"
    link.symlink_to(target)
    assert main(["fmt", str(link)]) == 0
    assert link.is_symlink() and target.read_bytes() == PRETTY.encode()


def test_fmt_refuses_a_file_with_another_hard_link_and_leaves_both_names_alike(tmp_path, capsys):
    import os

    path = write(tmp_path, "a.gpu", UGLY)
    os.link(path, tmp_path / "b.gpu")
    assert main(["fmt", str(path)]) == 2
    assert "2 hard links" in capsys.readouterr().err
    assert path.read_bytes() == (tmp_path / "b.gpu").read_bytes() == UGLY.encode()


def test_markdown_prose_and_its_line_breaks_are_kept_byte_for_byte():
    document = ("# Title  \r\n\r\nProse  with x*2,\rodd   breaks\nand trailing spaces.   \r\n\r\n"
                "```gpu\r\ndevice  H100-SXM\r\ndevice.sms=132\r\n```\r\n\r\nTail  x*2 \r")
    expected = document.replace("device  H100", "device H100").replace("sms=132", "sms = 132")
    assert format_markdown(document, "doc.md") == expected
    assert format_markdown(expected, "doc.md") == expected


def test_markdown_a_fence_body_that_shrinks_keeps_the_breaks_around_it():
    document = "Prose\r\n\r\n```gpu\r\ndevice  H100-SXM\r\n\r\n\r\n\r\n```\rmore prose\n"
    assert format_markdown(document, "doc.md") == "Prose\r\n\r\n```gpu\r\ndevice H100-SXM\r\n```\rmore prose\n"


def test_markdown_with_lone_cr_line_breaks_is_formatted_and_still_checks(tmp_path, capsys):
    document = "# T\r\r```gpu\rdevice  H100-SXM\rdevice.sms=132\r```\r"
    path = write(tmp_path, "doc.md", document)
    assert main(["fmt", str(path)]) == 0
    assert path.read_bytes() == document.replace("device  H", "device H").replace("=", " = ").encode()
    assert main(["check", str(path)]) == 0


def test_markdown_meaning_check_covers_the_whole_document_as_check_reads_it(monkeypatch):
    # The second block only makes sense after the first (one scope): the check is of the document's spec.
    document = "```gpu\ndevice  H100-SXM\n```\n\nProse.\n\n```gpu\ndevice.sms=132\n```\n"
    monkeypatch.setattr(fmt, "format_text", lambda text: text.replace("132", "144"))
    with pytest.raises(FormatError, match="would change what they say"):
        format_markdown(document, "doc.md")


def test_markdown_whose_blocks_do_not_parse_is_refused_with_the_documents_position():
    with pytest.raises(FormatError, match=r"doc\.md:5:"):
        format_markdown("# T\n\n```gpu\ndevice  H100-SXM\nx*2 on 4096² bf16 is @\n```\n", "doc.md")
