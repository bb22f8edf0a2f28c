"""`gpuspec fmt`: one canonical layout for spec text, comments and quoted sentences kept as written.

The layout: four spaces per block level; one space around operators, comparators and `±`, none inside brackets
or around `.`, `^`, `²`, and range dashes; `, ` between items; a number and its unit apart (`20 µs`) except `%`
and `×`; at least two spaces before a comment at the end of a
line (a column comments were aligned to is kept); no trailing spaces; at most two blank lines in a row;
one line break at the end. Lines between `# fmt: off` and `# fmt: on` are kept as written (a spec that shows
other spellings on purpose). The formatted text must parse to the same spec as the original, read as `gpuspec check`
reads it (a lone CR is a line break there too), or nothing is written. A file keeps its line breaks (CRLF stays
CRLF) and its byte-order mark; in Markdown only the bodies of gpu fences change, every other byte is kept.
"""
from __future__ import annotations

import re

from gpuspec.text import normalized

_TOKEN = re.compile(r"""
    (?P<string>"[^"]*"|“[^”]*”)
  | (?P<bound>(?:memory|compute|overhead)-bound\b)
  | (?P<fact>[A-Za-z][A-Za-z0-9_.-]*-[0-9][A-Za-z0-9_.]*\.[A-Za-z_][A-Za-z0-9_]*)
  | (?P<persecond>(?<=[0-9])/s(?![\w(]))
  | (?P<dims>[0-9]+(?:[x×][0-9]+)+)
  | (?P<number>(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?(?:\+(?![0-9A-Za-z_(]))?)
  | (?P<word>(?![²³])[^\W\d_]\w*)
  | (?P<op>\+/-|\+-|~=|==|<=|>=|\.\.|[-+*/^=<>~≈≤≥±–×²³%(),:\[\].])
  | (?P<other>\S)
""", re.VERBOSE)
_TIGHT = {"^", ".", "..", "–"}  # no space on either side
_TIGHT_LEFT = {"²", "³"}  # no space before
_CATALOG_KEYWORDS = {"device", "from", "model", "decode", "prefill", "train"}
# 80×, 33%, 16.8M, 32Ki (nodes.COUNT_SUFFIXES: a count's suffix is written against it)
_ATTACHED_UNITS = {"%", "×", "x", "k", "K", "M", "G", "T", "P", "Ki", "Mi", "Gi"}
_COUNT_PREFIXES = {("unit", prefix) for prefix in ("k", "K", "M", "G", "T", "P", "Ki", "Mi", "Gi")}  # 200k launches/s


class FormatError(ValueError):
    """The text could not be formatted safely; nothing is changed."""


def format_text(text: str) -> str:
    """The canonical layout of a spec's text (see the module docstring)."""
    out: list[str] = []
    levels = [0]
    open_quote = False
    blank = 0
    verbatim = False
    for raw in normalized(text).split("\n"):
        marker = raw.strip().replace(" ", "").lower()
        if verbatim or marker == "#fmt:off":
            out.append(raw.rstrip())
            verbatim = marker != "#fmt:on"
            blank = 0
            continue
        if open_quote:  # inside a quoted sentence that spans lines: keep it as written
            out.append(raw.rstrip())
            open_quote = _quote_still_open(raw, True)
            continue
        stripped = raw.strip()
        if not stripped:
            blank += 1
            if blank <= 2:
                out.append("")
            continue
        blank = 0
        width = len(raw) - len(raw.lstrip(" \t"))
        width = len(raw[:width].expandtabs(8))
        if stripped.startswith("#"):
            level = _level(levels, width, commit=False)
            out.append("    " * level + stripped)
            continue
        level = _level(levels, width, commit=True)
        code, comment = _split_comment(stripped)
        opening = _unclosed_quote(code)
        if opening is not None:  # a quoted sentence starts here and goes on: lay out only what comes before it
            head = _format_code(code[:opening])
            out.append("    " * level + (head + " " if head else "") + code[opening:].rstrip())
            open_quote = True
            continue
        line = "    " * level + _format_code(code)
        if comment:  # two spaces before it, or the column it was aligned to where the code still fits
            column = len(raw.rstrip()) - len(comment)
            line += " " * max(2, column - len(line))
            line += comment
        out.append(line.rstrip())
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def _level(levels: list[int], width: int, commit: bool) -> int:
    """The block depth of a line indented `width` columns (as the parser's indenter counts it)."""
    if width > levels[-1]:
        if commit:
            levels.append(width)
        return len(levels) - (1 if commit else 0)
    while len(levels) > 1 and width < levels[-1]:
        if commit:
            levels.pop()
        else:
            return max(i for i, w in enumerate(levels) if w <= width)
    return len(levels) - 1


def _quote_still_open(text: str, inside: bool) -> bool:
    for char in text:
        if inside:
            inside = char not in ('"', "”")
        elif char in ('"', "“"):
            inside = True
        elif char == "#":
            break
    return inside


def _unclosed_quote(code: str) -> int | None:
    """Where a quote opens that this line does not close, or None."""
    inside, start = False, None
    for i, char in enumerate(code):
        if inside:
            if char in ('"', "”"):
                inside = False
        elif char in ('"', "“"):
            inside, start = True, i
    return start if inside else None


def _split_comment(line: str) -> tuple[str, str]:
    """The code of a line and its comment (a `#` outside quotes)."""
    inside = False
    for i, char in enumerate(line):
        if inside:
            inside = char not in ('"', "”")
        elif char in ('"', "“"):
            inside = True
        elif char == "#":
            return line[:i].rstrip(), line[i:].rstrip()
    return line, ""


def _format_code(code: str) -> str:
    tokens = _tokens(code)
    pieces: list[str] = []
    previous: tuple[str, str] | None = None
    for kind, value in tokens:
        if kind == "op" and value == "-" and (previous is None or previous[1] in _UNARY_AFTER):
            kind = "unary"
        pieces.append(value if previous is None else _gap(previous, (kind, value)) + value)
        previous = (kind, value)
    return "".join(pieces)


def _tokens(code: str) -> list[tuple[str, str]]:
    """The tokens of a line of code, with device and model names and units joined into one token each."""
    raw = [(m.lastgroup, m.group(), m.start(), m.end()) for m in _TOKEN.finditer(code)]
    joined: list[tuple[str, str]] = []
    i = 0
    while i < len(raw):
        kind, value, start, end = raw[i]
        if joined and joined[-1][1] in _CATALOG_KEYWORDS and kind != "op":
            # H100-SXM, llama3.1-8b: everything written without a space is the name
            while i + 1 < len(raw) and raw[i + 1][2] == end and (raw[i + 1][0] in ("word", "number", "dims")
                                                                  or raw[i + 1][1] in ("-", ".", "+")):
                value, end = value + raw[i + 1][1], raw[i + 1][3]
                i += 1
            joined.append(("catalog", value))
        elif kind == "word" and joined and (joined[-1][0] == "number" or joined[-1] in _COUNT_PREFIXES):
            if i + 2 < len(raw) and raw[i + 1][1] == "/" and raw[i + 1][2] == end and raw[i + 2][0] == "word" \
                    and raw[i + 2][2] == raw[i + 1][3]:
                value = value + "/" + raw[i + 2][1]
                i += 2
            joined.append(("unit", value))
        elif kind == "op" and value in ("%", "×") and joined and joined[-1][0] == "number" \
                and not (value == "×" and i + 1 < len(raw) and (raw[i + 1][0] == "number" or raw[i + 1][1] == "(")):
            joined.append(("unit", value))  # 80×, 40%; but 2 × 8192² multiplies
        elif kind == "persecond":
            joined.append(("unit", value))  # 1000/s
        elif kind == "op" and value == "/" and joined and (joined[-1][0] == "number" or joined[-1] in _COUNT_PREFIXES) \
                and i + 1 < len(raw) and raw[i + 1][1] == "s" and raw[i + 1][2] == end \
                and not (i + 2 < len(raw) and raw[i + 2][2] == raw[i + 1][3] and raw[i + 2][1] in ("(", ".")):
            joined.append(("unit", "/s"))  # `200 /s` and `200k/s`: a count per second, as the parser reads them
            i += 1
        else:
            joined.append((kind, value))
        i += 1
    return joined


def _gap(previous: tuple[str, str], current: tuple[str, str]) -> str:
    """The space between two tokens."""
    (pkind, pvalue), (kind, value) = previous, current
    if kind == "unit":
        attached = value in _ATTACHED_UNITS or value.startswith("/") or value.partition("/")[0] in _ATTACHED_UNITS
        return "" if attached else " "  # 200k/s, as a count per second is written
    if value in (",", ")", "]", ":") or pvalue in ("(", "[") or pkind == "unary":
        return ""
    if value in _TIGHT or pvalue in _TIGHT or value in _TIGHT_LEFT:
        return ""
    if value in ("(", "[") and pkind in ("word", "catalog"):
        return ""  # a call or a tensor type: exp(x), bf16[4096]
    return " "


# After these, a minus sign is a sign, not a subtraction.
_UNARY_AFTER = {"(", "[", ",", "=", "==", "<", ">", "<=", ">=", "≤", "≥", "≈", "~", "~=", "±", "+-", "+/-", "+",
                "-", "*", "/", "^", "is", "with"}


def fingerprint(text: str, path: str = "<spec>"):
    """What a spec says, without where or how it is written: its nodes, minus spans and source text.
    None when it does not parse (a file that does not parse is not formatted)."""
    from gpuspec.text import SpecText

    found = _meaning(SpecText(path, text))
    return None if isinstance(found, str) else found


def _meaning(source):
    """The fingerprint of spec text as check reads it, or the first syntax error (file:line:column: message)."""
    from gpuspec.diagnostics import SpecError
    from gpuspec.parse import parse
    from gpuspec.text import line_separators

    # check refuses these before parsing; fmt would strip one that ends a line and turn the refusal into verdicts
    separators = line_separators(source)
    if separators:
        span, message = separators[0]
        return f"{span}: {message}"
    try:
        return _shape(parse(source).statements)
    except SpecError as error:
        first = error.diagnostics[0] if error.diagnostics else None
        return f"{first.span}: {first.message}" if first and first.span else "it does not parse"
    except RecursionError:
        return "it is nested too deeply to parse"


def _shape(value):
    import attrs

    if attrs.has(type(value)):
        # `text` of a claim, a statement or a value written as arithmetic is its source as written (spacing included);
    # elsewhere it is the value
        skipped = ("span", "text") if type(value).__name__ in ("ClaimNode", "Subject", "Figure") else ("span",)
        return (type(value).__name__,) + tuple(_shape(getattr(value, a.name)) for a in attrs.fields(type(value))
                                              if a.name not in skipped and not a.name.endswith("_span"))
    if isinstance(value, (list, tuple)):
        return tuple(_shape(v) for v in value)
    return value


def format_spec(text: str, path: str = "<spec>") -> str:
    """The formatted text of a .gpu file, written with the file's line break (`\r\n` stays `\r\n`; the most
    common one where it mixes them). FormatError if it does not parse, or if formatting would change what it
    says as `gpuspec check` reads it."""
    from gpuspec.text import SpecText, escaped, newline_of

    source = SpecText(path, text)  # the text as check reads it: every line break a line break
    before = _meaning(source)
    if isinstance(before, str):
        raise FormatError(f"{escaped(path)} does not parse ({escaped(before)}); it was left as it is")
    after_text = format_text(source.text)
    if _meaning(SpecText(path, after_text)) != before:
        raise FormatError(f"formatting {escaped(path)} would change what it says; it was left as it is")
    newline = newline_of(text)
    return after_text if newline == "\n" else after_text.replace("\n", newline)


def format_markdown(document: str, path: str = "<doc>") -> str:
    """The document with the body of each ```gpu fence formatted (at the fence's indentation). Every other line,
    and every line break outside the fences' bodies, is kept byte for byte; a body's new lines take the line
    break of its fence. FormatError if the blocks do not parse, or if formatting would change what they say."""
    from markdown_it import MarkdownIt

    from gpuspec import markdown
    from gpuspec.text import escaped, split_lines

    lines, breaks = split_lines(document)
    text = "\n".join(lines)  # the document as markdown-it and check read it
    fences = [token for token in MarkdownIt("commonmark").parse(text)
              if token.type == "fence" and token.info.split()[:1] == [markdown.FENCE_LANGUAGE]
              and token.map is not None and "".join(markdown.fence_body(token)).strip()]
    if not fences:
        return document
    before = _meaning(markdown.extract(path, text))
    if isinstance(before, str):
        raise FormatError(f"the gpu blocks of {escaped(path)} do not parse ({escaped(before)}); "
                          "it was left as it is")
    for token in reversed(fences):
        first, _ = token.map
        body = markdown.fence_body(token)
        # The container's prefix (list indentation, a block quote's `> `) of the first line with content.
        prefix = next(markdown.container_prefix(lines[first + 1 + i], line) for i, line in enumerate(body) if line)
        formatted = format_text("\n".join(body) + "\n").rstrip("\n").split("\n")
        start, end = first + 1, first + 1 + len(body)
        lines[start:end] = [prefix + line if line else prefix.rstrip() for line in formatted]
        breaks[start:end] = [breaks[first]] * (len(formatted) - 1) + [breaks[end - 1]]
    if _meaning(markdown.extract(path, "\n".join(lines))) != before:
        raise FormatError(f"formatting the gpu blocks of {escaped(path)} would change what they say; "
                          "it was left as it is")
    return "".join(line + brk for line, brk in zip(lines, breaks))
