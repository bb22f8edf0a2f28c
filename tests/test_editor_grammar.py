"""The VS Code extension in contrib/vscode: its files are well formed, and its TextMate grammar knows the language.

The grammar is checked against the language's own sources (grammar/gpuspec.lark for the keywords,
gpuspec/metrics.py for the metric names, gpuspec/tensors.py for the dtypes, gpuspec/units.py for the
counting words) and against the bundled specs, tokenized by `MiniTextMate` below: a small test-only
stand-in for the editor's tokenizer.

Regexes. TextMate grammars run on Oniguruma. The main grammar is written in the subset that Python's `re`
compiles unchanged with the same meaning (no `\\G`, `\\h`, `\\p{..}`, possessive or atomic groups, only
fixed-width lookbehinds), and a test holds it to that. The Markdown injection needs the usual fence idiom,
so its patterns go through `_translate` first: `\\G` (TextMate: where the last match ended) becomes an
empty pattern, which is right here because the mini tokenizer only ever matches anchored at the current
position, and a backreference `\\N` in an `end` or `while` pattern (TextMate: the text of the `begin`
match's group N) becomes that text, escaped.

Uses only the standard library (and pytest); the Python sources are read with `ast`, not imported.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "contrib" / "vscode"
GRAMMAR_FILE = EXTENSION / "syntaxes" / "gpuspec.tmLanguage.json"
INJECTION_FILE = EXTENSION / "syntaxes" / "gpuspec-markdown-injection.tmLanguage.json"
LARK_FILE = ROOT / "grammar" / "gpuspec.lark"
SPEC_FILE = ROOT / "specs" / "gpu-execution.gpu"

REGEX_KEYS = ("match", "begin", "end", "while")


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


GRAMMAR = _load(GRAMMAR_FILE)
INJECTION = _load(INJECTION_FILE)


# --- regexes -----------------------------------------------------------------------------------------------

def _regexes(node, where=""):
    """Every (where, key, pattern) of a grammar: match, begin, end and while, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in REGEX_KEYS and isinstance(value, str):
                yield f"{where}/{key}", key, value
            else:
                yield from _regexes(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _regexes(item, f"{where}[{i}]")


def _translate(pattern: str, begin_groups: tuple[str | None, ...] = ()) -> str:
    """An Oniguruma pattern of the Markdown fence idiom as a Python pattern (see the module docstring).
    `begin_groups[n]` is the text of group n of the begin match (0: the whole match)."""
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "G":
                out.append("")
            elif nxt.isdigit() and nxt != "0":
                n = int(nxt)
                out.append(re.escape(begin_groups[n] or "") if n < len(begin_groups) else "")
            else:
                out.append(pattern[i:i + 2])
            i += 2
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


def _oniguruma_only(pattern: str) -> list[str]:
    """Constructs that Python's re lacks or reads differently (or only from Python 3.11 on)."""
    found = [f"\\{m[1]}" for m in re.finditer(r"\\(.)", pattern, re.S) if m[1] in "GhHRXKyYOo"]
    found += [f"\\{m[1]}{{" for m in re.finditer(r"\\([pP])\{", pattern)]
    found += [f"\\{m[1]}<" for m in re.finditer(r"\\([kg])<", pattern)]
    bare = re.sub(r"\\.", "_", pattern, flags=re.S)          # escapes out of the way
    bare = re.sub(r"\[\^?\]?[^\]]*\]", "_", bare)             # then character classes
    found += re.findall(r"\(\?>|[*+?}]\+", bare)              # atomic groups, possessive quantifiers
    found += re.findall(r"\(\?[imx]+\)", bare)                # flags in the middle of a pattern
    return found


def test_every_json_file_of_the_extension_parses():
    files = sorted(EXTENSION.rglob("*.json"))
    names = {p.relative_to(EXTENSION).as_posix() for p in files}
    assert {"package.json", "language-configuration.json", "syntaxes/gpuspec.tmLanguage.json",
            "syntaxes/gpuspec-markdown-injection.tmLanguage.json"} <= names
    for path in files:
        assert isinstance(_load(path), dict), path


def test_package_json_declares_the_language_and_points_at_grammars_that_exist():
    package = _load(EXTENSION / "package.json")
    for field in ("name", "publisher", "version", "engines"):
        assert package.get(field), field
    languages = package["contributes"]["languages"]
    (language,) = [lang for lang in languages if lang["id"] == "gpuspec"]
    assert ".gpu" in language["extensions"]
    assert (EXTENSION / language["configuration"]).is_file()

    grammars = package["contributes"]["grammars"]
    assert grammars
    for entry in grammars:
        path = EXTENSION / entry["path"]
        assert path.is_file(), entry["path"]
        assert _load(path)["scopeName"] == entry["scopeName"], entry["path"]
    by_scope = {g["scopeName"]: g for g in grammars}
    assert by_scope["source.gpuspec"]["language"] == "gpuspec"
    injection = by_scope["markdown.gpuspec.codeblock"]
    assert "text.html.markdown" in injection["injectTo"]
    assert injection["embeddedLanguages"] == {"meta.embedded.block.gpuspec": "gpuspec"}


def test_language_configuration():
    config = _load(EXTENSION / "language-configuration.json")
    assert config["comments"]["lineComment"] == "#"
    assert ["[", "]"] in config["brackets"] and ["(", ")"] in config["brackets"]
    pairs = {(p["open"], p["close"]) for p in config["autoClosingPairs"]}
    assert {('"', '"'), ("“", "”"), ("[", "]"), ("(", ")")} <= pairs
    # VS Code reads these as JavaScript regexes; these are in the subset Python reads the same way.
    increase = re.compile(config["indentationRules"]["increaseIndentPattern"])
    re.compile(config["indentationRules"]["decreaseIndentPattern"])
    assert increase.search("y = x * 2:")
    assert increase.search("step = decode llama3-8b, batch 1 eager:   # a comment")
    assert not increase.search("y is memory-bound, ≈ 20 µs")
    assert not increase.search('"A quoted sentence: with a colon."')
    assert not increase.search("x = 1   # see: here")


def test_the_grammar_is_named_and_found_by_its_scope():
    assert GRAMMAR["scopeName"] == "source.gpuspec"
    assert "gpu" in GRAMMAR["fileTypes"]
    for include in _includes(GRAMMAR):
        if include.startswith("#"):
            assert include[1:] in GRAMMAR["repository"], include


def test_every_regex_of_the_grammar_compiles_in_python_unchanged():
    found = list(_regexes(GRAMMAR))
    assert len(found) > 30
    for where, _, pattern in found:
        assert not _oniguruma_only(pattern), (where, _oniguruma_only(pattern))
        re.compile(pattern)


def test_every_regex_of_the_injection_grammar_compiles_after_translation():
    found = list(_regexes(INJECTION))
    assert {key for _, key, _ in found} == {"begin", "end", "while"}
    for _, key, pattern in found:
        groups = ("", "", "", "```") if key in ("end", "while") else ()
        re.compile(_translate(pattern, groups))


def test_the_translation_is_only_needed_for_the_fence_idiom():
    for where, _, pattern in _regexes(INJECTION):
        leftovers = [c for c in _oniguruma_only(pattern) if c != "\\G"]
        assert not leftovers, (where, leftovers)


def test_the_injection_highlights_gpu_fences_with_the_gpuspec_grammar():
    assert INJECTION["scopeName"] == "markdown.gpuspec.codeblock"
    assert INJECTION["injectionSelector"] == "L:text.html.markdown"
    fence_rules = [rule for rule in _walk(INJECTION) if "begin" in rule and "source.gpuspec" in _includes(rule)]
    assert fence_rules, "no begin/end rule embeds source.gpuspec"
    opening = [rule for rule in fence_rules if "end" in rule]
    assert opening
    begin = re.compile(_translate(opening[0]["begin"]))
    for line in ("```gpu", "```gpu\n", "  ```gpu", "~~~gpu", "````gpu", "```GPU", "```gpu title=\"t.gpu\"",
                 "```gpuspec"):
        assert begin.match(line), line
    for line in ("```", "```python", "```gpus", "```gpu2", "text ```gpu", "``gpu"):
        assert not begin.match(line), line
    # The end pattern closes the block with the fence that opened it.
    m = begin.match("```gpu")
    end = re.compile(_translate(opening[0]["end"], (m[0], *m.groups())))
    assert end.match("```") and not end.match("~~~")


def test_a_markdown_gpu_block_is_tokenized_as_gpuspec():
    markdown = "Some text.\n```gpu\ndevice H100-SXM   # a comment\ny is memory-bound\n```\ndevice after\n"
    lines = MiniTextMate(INJECTION, externals=[GRAMMAR]).tokenize(markdown)
    fence = lines[1]
    assert _has(_piece(fence, "gpu")[0], "fenced_code.block.language")
    for line, piece, scope in [(2, "device", "keyword.other"), (2, "H100-SXM", "entity.name.type.device"),
                               (2, "# a comment", "comment.line"), (3, "memory-bound", "constant.language.bound")]:
        for scopes in _piece(lines[line], piece):
            assert _has(scopes, scope) and _has(scopes, "meta.embedded.block.gpuspec"), (piece, scopes)
    for scopes in _piece(lines[5], "device"):
        assert not _has(scopes, "keyword") and not _has(scopes, "meta.embedded"), scopes


# --- the keywords of grammar/gpuspec.lark ----------------------------------------------------------------

def _lark_definitions(text: str) -> list[tuple[str, str]]:
    """(name, body) of each rule and terminal: a definition runs on over its indented continuation lines."""
    definitions: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("//", "%")):
            continue
        head = re.match(r"([?!_]*[A-Za-z][A-Za-z0-9_]*)(?:\.-?[0-9]+)?\s*:(.*)$", line)
        if head and not line[0].isspace():
            definitions.append([head[1], head[2]])
        elif definitions and line[0].isspace():
            definitions[-1][1] += " " + line.strip()
    return [(name, body) for name, body in definitions]


def lark_keywords() -> set[str]:
    """Alphabetic string literals of the Lark grammar: terminals made only of literals (`CUDA: "CUDA" | "cuda"`)
    and literals written in rules."""
    words: set[str] = set()
    for name, body in _lark_definitions(LARK_FILE.read_text(encoding="utf-8")):
        body = re.sub(r"\s//.*$", "", body)
        terminal = name.lstrip("_?!").isupper()
        literals = re.findall(r'"((?:[^"\\]|\\.)*)"', body)
        if terminal and not re.fullmatch(r'\s*"(?:[^"\\]|\\.)*"(?:\s*\|\s*"(?:[^"\\]|\\.)*")*\s*', body):
            continue  # a regex terminal such as BOUND or NAME
        words.update(w for w in literals if re.fullmatch(r"[A-Za-z]+", w))
    return words


LARK_KEYWORDS = sorted(lark_keywords())
# Two one-letter keywords are keywords only in their place; anywhere else they are names (`a = bf16[4096]`,
# `y = x * 2`). They are checked in a line that puts them there: the word's characters get the scope.
IN_CONTEXT = {
    "a": ("1000 launches of y as a CUDA graph", "as ", "keyword.other"),
    "x": ("x*2 on 4096 x 4096 bf16", "4096", "keyword.operator.shape"),  # the Lark grammar's X terminal
}


def _keyword_regexes() -> list[re.Pattern]:
    rule = GRAMMAR["repository"]["keywords"]
    return [re.compile(r["match"]) for r in rule.get("patterns", [rule]) if "match" in r]


def test_the_keyword_list_is_read_from_the_lark_grammar():
    assert {"device", "model", "from", "with", "set", "on", "is", "eager", "fused", "compiled", "as", "a",
            "CUDA", "cuda", "graph", "threads", "per", "block", "launches", "of", "decode", "kernels", "layer",
            "x"} <= set(LARK_KEYWORDS)
    # Regex terminals are not keywords.
    assert not {"memory", "bound", "NAME", "UNIT"} & set(LARK_KEYWORDS)


@pytest.mark.parametrize("word", LARK_KEYWORDS)
def test_every_keyword_of_the_lark_grammar_is_a_keyword_of_the_textmate_grammar(word):
    if word in IN_CONTEXT:
        text, after, scope = IN_CONTEXT[word]
        (line,) = MiniTextMate(GRAMMAR).tokenize(text)
        assert all(_has(s, scope) for s in _piece(line, word, after)), (word, line.text)
        return
    # The word alone on a line is matched, whole, by one of the keyword rules.
    assert any((m := rx.search(word)) and m.group() == word for rx in _keyword_regexes()), word


def test_the_x_of_a_shape_is_an_operator_and_elsewhere_a_name():
    tokens = MiniTextMate(GRAMMAR).tokenize("x*2 on 4096 x 4096 bf16 is 1 kernels\ny = 4096x1024 bf16\n")
    first, second = tokens[0], tokens[1]
    assert _has(_piece(first, "x")[0], "variable.other")
    assert _has(_piece(first, "x", after="4096")[0], "keyword.operator.shape")
    assert _has(_piece(second, "x", after="4096")[0], "keyword.operator.shape")
    assert _has(_piece(second, "1024")[0], "constant.numeric")


def test_published_arithmetic_is_highlighted_as_numbers_units_operators_and_model_facts():
    lines = MiniTextMate(GRAMMAR).tokenize("    flops ≈ 2 × 8192² FLOP\nrate ≈ 1000/s\n"
                                          "mistral-7b.kv_bytes_per_token = 128 KiB\n")
    assert _has(_piece(lines[0], "×")[0], "keyword.operator.shape")
    assert all(_has(s, "constant.numeric") for s in _piece(lines[0], "8192"))
    assert all(_has(s, "keyword.other.unit") for s in _piece(lines[0], "FLOP"))
    assert all(_has(s, "keyword.other.unit") for s in _piece(lines[1], "/s"))
    assert all(_has(s, "entity.name.type.model") for s in _piece(lines[2], "mistral-7b"))
    assert all(_has(s, "variable.other.property") for s in _piece(lines[2], "kv_bytes_per_token"))


def test_keywords_that_are_plainly_names_are_names():
    lines = MiniTextMate(GRAMMAR).tokenize("a = bf16[4096]\nb = a * 2 + a\n1000 launches of b as a CUDA graph\n"
                                           "    threads = 16,777,216\n")
    assert _has(_piece(lines[0], "a")[0], "entity.name.variable")
    assert not _has(_piece(lines[1], "a")[0], "keyword")
    assert not _has(_piece(lines[1], "a", after="+")[0], "keyword")
    assert _has(_piece(lines[3], "threads")[0], "support.variable.metric")
    for word in ("as", "a", "CUDA", "graph", "of"):
        assert _has(_piece(lines[2], word, after="of b" if word != "of" else "")[0], "keyword"), word


# --- the vocabulary of the Python sources ------------------------------------------------------------------

def _module(path: str) -> ast.Module:
    return ast.parse((ROOT / path).read_text(encoding="utf-8"))


def _assigned(module: ast.Module, name: str) -> ast.expr:
    for node in module.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node.value
    raise AssertionError(f"{name} not found")


def metric_names() -> set[str]:
    module = _module("gpuspec/metrics.py")
    metrics = {call.args[0].value for call in _assigned(module, "_ALL").elts}
    aliases = {key.value for key in _assigned(module, "ALIASES").keys}
    assert "t_mem" in metrics and "traffic" in aliases
    return metrics | aliases


def dtype_names() -> set[str]:
    names = {key.value for key in _assigned(_module("gpuspec/tensors.py"), "DTYPES").keys}
    assert "bf16" in names
    return names


def count_nouns() -> set[str]:
    call = _assigned(_module("gpuspec/units.py"), "COUNT_NOUNS")
    names = ast.literal_eval(call.args[0])
    assert "waves" in names
    return set(names)


@pytest.mark.parametrize("metric", sorted(metric_names()))
def test_every_metric_and_alias_is_a_metric(metric):
    lines = MiniTextMate(GRAMMAR).tokenize(f"    {metric} ≈ 1\ny.{metric} ≈ 1\n")
    for line in lines[:2]:
        assert all(_has(s, "support.variable.metric") for s in _piece(line, metric)), (metric, line)


@pytest.mark.parametrize("dtype", sorted(dtype_names()))
def test_every_dtype_is_a_dtype(dtype):
    lines = MiniTextMate(GRAMMAR).tokenize(f"t = {dtype}[4096]\nx*2 on 4096² {dtype}\n")
    for line, after in zip(lines, ("=", "²")):
        assert all(_has(s, "storage.type.dtype") for s in _piece(line, dtype, after)), (dtype, line.text)


UNITS = ["µs", "us", "μs", "ms", "ns", "s", "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "TB/s",
         "GB/s", "FLOP", "MFLOP", "TFLOP", "TFLOP/s", "TFLOPS", "FLOP/B", "MHz", "GHz", "cycles", "W", "%", "×",
         "x", "M", "tokens/s"]


@pytest.mark.parametrize("unit", UNITS + sorted(count_nouns()))
def test_units_after_numbers(unit):
    for text in (f"    ≈ 20 {unit}", f"    ≈ 20{unit}", f"    16,777,216.5 {unit} moved"):
        (line,) = MiniTextMate(GRAMMAR).tokenize(text)
        pieces = _piece(line, unit, after="20" if "16," not in text else ".5")
        assert all(_has(s, "keyword.other.unit") for s in pieces), (text, line)


def test_a_word_after_a_number_is_not_always_a_unit():
    (line,) = MiniTextMate(GRAMMAR).tokenize("decode llama3-8b, batch 1 as a CUDA graph is ≈ 2 ms")
    assert _has(_piece(line, "as")[0], "keyword") and not _has(_piece(line, "as")[0], "keyword.other.unit")
    assert _has(_piece(line, "ms")[0], "keyword.other.unit")


# --- real lines ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def spec() -> dict[str, list]:
    """The tokenized lines of specs/gpu-execution.gpu, by their text."""
    text = SPEC_FILE.read_text(encoding="utf-8")
    return dict(zip(text.split("\n"), MiniTextMate(GRAMMAR).tokenize(text)))


def _line(spec, text):
    assert text in spec, f"specs/gpu-execution.gpu no longer has the line {text!r}"
    return spec[text]


def test_the_headline_line(spec):
    line = _line(spec, "x*2 on 4096² bf16 is memory-bound, ≈20µs, 62 waves")
    _expect(line, [("x", "variable.other"), ("*", "keyword.operator.arithmetic"), ("2", "constant.numeric"),
                   ("on", "keyword.other"), ("4096", "constant.numeric"), ("²", "keyword.operator.superscript"),
                   ("bf16", "storage.type.dtype"), ("is", "keyword.other"), ("memory-bound", "constant.language.bound"),
                   ("≈", "keyword.operator.comparison"), ("20", "constant.numeric"), ("µs", "keyword.other.unit"),
                   ("62", "constant.numeric"), ("waves", "keyword.other.unit.count"),
                   (",", "punctuation.separator")])
    ascii_line = _line(spec, "x*2 on 4096^2 bf16 is memory-bound, ~20us, 62 waves")
    _expect(ascii_line, [("^", "keyword.operator.arithmetic"), ("~", "keyword.operator.comparison"),
                         ("us", "keyword.other.unit")])


def test_comments_and_quoted_sentences(spec):
    comment = "# --- 3. The memory ladder ------------------------------------------------------------------------"
    assert all(_has(s, "comment.line.number-sign") for s in _line(spec, comment))
    sentence = '"registers: 256 KB per SM, ≈ 1 cycle"'
    scopes = _line(spec, sentence)
    assert all(_has(s, "string.quoted.double") for s in scopes)
    assert not any(_has(s, "keyword") or _has(s, "constant") for s in scopes)
    # A quoted sentence may run over two lines; the second is still in the string.
    second = "    132 × 8 = 1,056 blocks per wave, ≈ 62 waves.\""
    assert all(_has(s, "string.quoted.double") for s in _line(spec, second))
    assert not _has(_piece(_line(spec, "    resident_blocks_per_sm = 8"), "resident_blocks_per_sm")[0], "string")

    tokens = MiniTextMate(GRAMMAR).tokenize('y = x * 2:   # a "comment"\n“curly # quoted”\n')
    assert all(_has(s, "comment.line") for s in _piece(tokens[0], '# a "comment"'))
    assert _has(_piece(tokens[0], ":")[0], "punctuation.section.block.begin")
    assert all(_has(s, "string.quoted") for s in tokens[1])


def test_statements(spec):
    _expect(_line(spec, "device H100-SXM"), [("device", "keyword.other"), ("H100-SXM", "entity.name.type.device")])
    _expect(_line(spec, "device H100-SXM with launch_cost = 5 µs"),
            [("with", "keyword.other"), ("launch_cost", "variable.other.property"),
             ("=", "keyword.operator.assignment"), ("5", "constant.numeric"), ("µs", "keyword.other.unit")])
    _expect(_line(spec, "set tolerance = 10%"),
            [("set", "keyword.other"), ("tolerance", "variable.other.setting"), ("=", "keyword.operator.assignment"),
             ("10", "constant.numeric"), ("%", "keyword.other.unit")])
    _expect(_line(spec, "x = bf16[4096, 4096]"),
            [("x", "entity.name.variable"), ("=", "keyword.operator.assignment"), ("bf16", "storage.type.dtype"),
             ("[", "punctuation.section.brackets"), ("4096", "constant.numeric"), ("]", "punctuation.section")])
    _expect(_line(spec, "step = decode llama3-8b, batch 1, 15 kernels per layer eager:"),
            [("step", "entity.name.variable"), ("decode", "keyword.other"), ("llama3-8b", "entity.name.type.model"),
             ("15", "constant.numeric"), ("kernels", "keyword.other.unit"), ("per", "keyword.other"),
             ("layer", "keyword.other"), ("eager", "keyword.other"), (":", "punctuation.section.block.begin")])
    _expect(_line(spec, "graphed = decode llama3-8b, batch 1, 15 kernels per layer as a CUDA graph:"),
            [("as", "keyword.other"), ("a", "keyword.other", "as "), ("CUDA", "keyword.other"),
             ("graph", "keyword.other", "CUDA ")])
    _expect(_line(spec, "tiny = 1000 launches of small:"),
            [("1000", "constant.numeric"), ("launches", "keyword.other"), ("of", "keyword.other")])
    tokens = MiniTextMate(GRAMMAR).tokenize("model deep from llama3-8b with layers = 64\n")
    _expect(tokens[0], [("model", "keyword.other"), ("deep", "entity.name.type.model"), ("from", "keyword.other"),
                        ("llama3-8b", "entity.name.type.model"), ("layers", "variable.other.property")])


def test_claims(spec):
    _expect(_line(spec, "device.hbm_latency = 400+ cycles"),
            [("device", "variable.language.device"), (".", "punctuation.accessor"),
             ("hbm_latency", "variable.other.property.device-field"), ("=", "keyword.operator.comparison"),
             ("400+", "constant.numeric"), ("+", "keyword.operator.lower-bound"), ("cycles", "keyword.other.unit")])
    _expect(_line(spec, "device.l2_latency = 200–300 cycles"),
            [("200", "constant.numeric"), ("–", "keyword.operator.range"), ("300", "constant.numeric")])
    _expect(_line(spec, "device.memory_size / device.register_file_per_sm ≈ 300,000×"),
            [("/", "keyword.operator.arithmetic"), ("300,000", "constant.numeric"), ("×", "keyword.other.unit")])
    _expect(_line(spec, "y.t_mem ≈ 20 µs"),
            [("y", "variable.other.object"), ("t_mem", "support.variable.metric")])
    _expect(_line(spec, "    waves = 62.06"),
            [("waves", "support.variable.metric"), ("=", "keyword.operator.comparison"),
             ("62.06", "constant.numeric")])
    _expect(_line(spec, "    overhead-bound"), [("overhead-bound", "constant.language.bound")])
    _expect(_line(spec, "y.bytes_read ≤ 33.6 MB"), [("≤", "keyword.operator.comparison"), ("MB", "keyword.other.unit")])
    _expect(_line(spec, "y is 16.8M elements, 33.6 MB read, 33.6 MB written, 67 MB moved, ≈ 33.5 MB read"),
            [("16.8", "constant.numeric"), ("M", "keyword.other.unit")])
    _expect(_line(spec, "y.intensity = 0.25 FLOP/B"), [("FLOP/B", "keyword.other.unit")])
    _expect(_line(spec, "(y.bytes_read + y.bytes_written) / device.hbm_bandwidth ≈ 20 µs"),
            [("(", "punctuation.section.parens"), ("+", "keyword.operator.arithmetic"),
             ("bytes_written", "support.variable.metric")])
    tokens = MiniTextMate(GRAMMAR).tokenize("    ≈ 20 µs ± 5%\n    ≈ 20 µs +/- 2 µs\nweights = 8.03e9 * 2 B\n"
                                            "z = relu(x) * 2\n")
    _expect(tokens[0], [("±", "keyword.operator.tolerance"), ("%", "keyword.other.unit")])
    _expect(tokens[1], [("+/-", "keyword.operator.tolerance")])
    _expect(tokens[2], [("8.03e9", "constant.numeric"), ("B", "keyword.other.unit")])
    _expect(tokens[3], [("relu", "support.function")])


def test_every_comparator_and_ascii_spelling():
    for op in ("≈", "~", "~=", "=", "==", "≤", "<=", "≥", ">=", "<", ">"):
        (line,) = MiniTextMate(GRAMMAR).tokenize(f"y.time {op} 20 µs")
        assert all(_has(s, "keyword.operator.comparison") for s in _piece(line, op)), op
    for op in ("±", "+-", "+/-"):
        (line,) = MiniTextMate(GRAMMAR).tokenize(f"    ≈ 20 µs {op} 5%")
        assert all(_has(s, "keyword.operator.tolerance") for s in _piece(line, op)), op
    for op in ("–", ".."):
        (line,) = MiniTextMate(GRAMMAR).tokenize(f"device.l2_latency = 200{op}300 cycles")
        assert all(_has(s, "keyword.operator.range") for s in _piece(line, op)), op
        assert _has(_piece(line, "300")[0], "constant.numeric")


def _readme_examples() -> str:
    """The README's ```gpu blocks, one after another."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```gpu[ \t]*\n(.*?)^```[ \t]*$", readme, re.M | re.S)
    assert blocks, "README.md has no ```gpu block"
    return "".join(blocks)


@pytest.mark.parametrize("name", ["README.md"] + sorted(p.name for p in (ROOT / "specs").glob("*.gpu")))
def test_every_character_of_the_bundled_examples_gets_a_scope(name):
    text = _readme_examples() if name == "README.md" else (ROOT / "specs" / name).read_text(encoding="utf-8")
    tokenizer = MiniTextMate(GRAMMAR)
    lines = tokenizer.tokenize(text)
    assert not tokenizer.stack, "a string or statement is still open at the end"
    for source_line, scopes in zip(text.split("\n"), lines):
        for char, char_scopes in zip(source_line, scopes):
            assert char.isspace() or len(char_scopes) > 1, (name, source_line, char)


# --- a tiny TextMate-ish tokenizer, for these tests only -------------------------------------------------

class MiniTextMate:
    """At each position, the first rule (in the grammar's order) that matches there wins; an open begin/end
    rule's `end` is tried before its patterns; a `while` rule is checked at the start of each later line.
    Like vscode-textmate, each line is matched with its newline, and rules are tried once more at its very end
    (where the Markdown fence idiom opens its `while` rule). Returns, for each line, the scopes of each
    character (the grammar's own scope first)."""

    def __init__(self, grammar: dict, externals: list[dict] = ()):
        self.grammar = grammar
        self.grammars = {g["scopeName"]: g for g in [grammar, *externals]}
        self.stack: list[dict] = []
        self._compiled: dict[str, re.Pattern] = {}

    def _re(self, pattern: str, groups: tuple = ()) -> re.Pattern:
        text = _translate(pattern, groups)
        if text not in self._compiled:
            self._compiled[text] = re.compile(text)
        return self._compiled[text]

    def _rules(self, patterns: list, grammar: dict, seen: frozenset = frozenset()) -> list[tuple[dict, dict]]:
        out = []
        for pattern in patterns:
            if "include" in pattern:
                ref = pattern["include"]
                if ref in ("$self", "$base"):
                    target, items = grammar, grammar["patterns"]
                elif ref.startswith("#"):
                    target, items = grammar, [grammar["repository"][ref[1:]]]
                else:
                    target = self.grammars[ref.split("#")[0]]
                    items = target["patterns"]
                key = (target["scopeName"], ref)
                if key not in seen:
                    out += self._rules(items, target, seen | {key})
            elif "match" in pattern or "begin" in pattern:
                out.append((pattern, grammar))
            elif "patterns" in pattern:
                out += self._rules(pattern["patterns"], grammar, seen)
        return out

    def _scopes(self, frames: list[dict]) -> list[str]:
        names = [self.grammar["scopeName"]]
        for frame in frames:
            names += [n for n in (frame["rule"].get("name"), frame["rule"].get("contentName")) if n]
        return names

    @staticmethod
    def _paint(scopes, match, base, captures):
        for i in range(match.start(), min(match.end(), len(scopes))):
            scopes[i] = list(base)
        for group, capture in sorted((captures or {}).items(), key=lambda kv: int(kv[0])):
            start, end = match.span(int(group))
            if start >= 0 and capture.get("name"):
                for i in range(start, min(end, len(scopes))):
                    scopes[i].append(capture["name"])

    def tokenize(self, text: str) -> list[_Line]:
        result = []
        for line in text.split("\n"):
            src = line + "\n"
            scopes: list[list[str]] = [[] for _ in line]
            pos = 0
            for depth, frame in enumerate(self.stack):
                if "while" in frame["rule"]:
                    m = self._re(frame["rule"]["while"], frame["groups"]).match(src, pos)
                    if not m:
                        del self.stack[depth:]
                        break
                    pos = m.end()
            stalled = 0
            while pos <= len(src) and stalled < 50:  # like vscode-textmate, once more at the very end
                frame = self.stack[-1] if self.stack else None
                rule_list = self._rules(frame["rule"].get("patterns", []), frame["grammar"]) if frame else \
                    self._rules(self.grammar["patterns"], self.grammar)
                if frame and "end" in frame["rule"]:
                    m = self._re(frame["rule"]["end"], frame["groups"]).match(src, pos)
                    if m:
                        rule = frame["rule"]
                        self._paint(scopes, m, self._scopes(self.stack[:-1]) + [rule["name"]] * ("name" in rule),
                                    rule.get("endCaptures", rule.get("captures")))
                        self.stack.pop()
                        stalled = stalled + 1 if m.end() == pos else 0
                        pos = m.end()
                        continue
                for rule, grammar in rule_list:
                    m = self._re(rule.get("match") or rule["begin"]).match(src, pos)
                    if not m or (m.end() == pos and "match" in rule):
                        continue
                    base = self._scopes(self.stack) + ([rule["name"]] if "name" in rule else [])
                    if "match" in rule:
                        self._paint(scopes, m, base, rule.get("captures"))
                    else:
                        self._paint(scopes, m, base, rule.get("beginCaptures", rule.get("captures")))
                        self.stack.append({"rule": rule, "grammar": grammar, "groups": (m[0], *m.groups())})
                    stalled = stalled + 1 if m.end() == pos else 0
                    pos = m.end()
                    break
                else:
                    if pos < len(line):
                        scopes[pos] = self._scopes(self.stack)
                    pos += 1
                    stalled = 0
            result.append(_Line(line, scopes))
        return result


def _walk(node):
    """Every dict in a grammar."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


def _includes(node) -> set[str]:
    return {d["include"] for d in _walk(node) if "include" in d}


def _has(scopes: list[str], prefix: str) -> bool:
    """Whether a scope is `prefix` or under it (`keyword.other` covers `keyword.other.unit.gpuspec`)."""
    return any(s == prefix or s.startswith(prefix + ".") for s in scopes)


class _Line(list):
    """The scopes of each character of one line, and the line's text."""

    def __init__(self, text: str, scopes: list[list[str]]):
        super().__init__(scopes)
        self.text = text


def _piece(line: _Line, piece: str, after: str = "") -> list[list[str]]:
    """The scopes of each character of the first `piece` after the first `after` in a tokenized line."""
    start = line.text.index(after) + len(after) if after else 0
    at = line.text.index(piece, start)
    return line[at:at + len(piece)]


def _expect(line: _Line, expectations):
    """Each (piece, scope) or (piece, scope, after): every character of the piece has the scope."""
    for piece, scope, *after in expectations:
        found = _piece(line, piece, *after)
        assert found and all(_has(s, scope) for s in found), (line.text, piece, scope, found)
