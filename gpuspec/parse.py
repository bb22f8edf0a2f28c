"""Spec text -> Spec AST: an LALR parser over grammar/gpuspec.lark, and syntax errors in words.

The parser is Lark's (a contextual lexer, LALR(1) tables, an indentation postlexer, the builder run as each rule is
reduced), but it runs here, over tables Lark made: parse_tables.RUNTIME, generated from the grammar. Lark itself
is imported only to say what is wrong with text the tables refuse (it parses that text again and raises its own
errors, with the tables of parse_tables.DATA), or to make the tables of a grammar edited since they were generated.
Starting gpuspec then costs neither Lark's import nor its tables' loading, nor the compiling of a regular expression
per parser state.
"""
from __future__ import annotations

import bisect
import functools
import hashlib
import math
import re
import threading

import attrs

from gpuspec import nodes
from gpuspec.diagnostics import Diagnostic, PartlyRead
from gpuspec.resources import data_dir
from gpuspec.text import Span, SpecText, span

_COMPARATORS = {"≈": "≈", "~=": "≈", "~": "≈", "=": "=", "==": "=", "<": "<", ">": ">",
                "≤": "≤", "<=": "≤", "≥": "≥", ">=": "≥"}

# How each terminal is named in an error message; keywords and symbols are shown as written.
_TERMINAL_WORDS = {
    "NUMBER": "a number",
    "NUMBER_PLUS": "a lower bound such as `400+`",
    "DIM": "a dimension (a whole number)",
    "DIMS_X": "a shape such as `4096x4096`",
    "NAME": "a name",
    "CATALOG_NAME": "a device or model name",
    "UNIT": "a unit",
    "STRING": "a quoted sentence",
    "BOUND": "`memory-bound`, `compute-bound` or `overhead-bound`",
    "APPROX": "`≈`", "EQUAL": "`=`", "LE": "`≤`", "GE": "`≥`", "LT": "`<`", "GT": "`>`",
    "TOL": "`±`", "RANGE_SEP": "`–`", "TIMES": "`×`",
    "_NL": "the end of the line",
    "_INDENT": "an indented block",
    "_DEDENT": "the end of the indented block",
    "$END": "the end of the file",
}
_OPERATORS = {"PLUS": "+", "MINUS": "-", "STAR": "*", "TIMES": "×", "SLASH": "/", "AT": "@", "CARET": "^",
              "SUP2": "²", "SUP3": "³"}
_COMPARISONS = {"APPROX", "EQUAL", "LE", "GE", "LT", "GT"}


class Token(str):
    """A token as Lark's lexer makes it: the text matched, its terminal's name and where it is."""

    __slots__ = ("type", "value", "start_pos", "line", "column", "end_line", "end_column", "end_pos")

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"


def _token(kind: str, value: str, start: int, line: int, column: int, end_line: int, end_column: int,
           end: int) -> Token:
    token = str.__new__(Token, value)
    token.type, token.value, token.start_pos, token.end_pos = kind, value, start, end
    token.line, token.column, token.end_line, token.end_column = line, column, end_line, end_column
    return token


def _borrow(kind: str, value: str, token: Token) -> Token:
    return _token(kind, value, token.start_pos, token.line, token.column, token.end_line, token.end_column,
                  token.end_pos)


class _Tree:
    """What Lark makes of a rule without a builder method: only `_rules`, whose children go to their parent."""

    __slots__ = ("data", "children")

    def __init__(self, data: str, children: list):
        self.data, self.children = data, children


class _BadNumber(Exception):
    """A token the grammar takes but the language refuses (a number too large, an option written twice)."""

    def __init__(self, token: Token, reason: str, code: str = "bad-number", help: str | None = None):
        self.token, self.reason, self.code, self.help = token, reason, code, help


class _BadIndent(Exception):
    def __init__(self, token: Token):
        self.token = token


class _Refused(Exception):
    """Text the tables do not accept: Lark parses it again, to say where and why in its own words."""


# The indentation postlexer's settings (Lark's Indenter, with these, is what parse_tables.DATA is loaded with).
_NL, _INDENT, _DEDENT, _TAB_LEN = "_NL", "_INDENT", "_DEDENT", 8
_OPENING, _CLOSING = frozenset(("LPAR", "LSQB")), frozenset(("RPAR", "RSQB"))


class _Brackets:
    """The brackets of the text being parsed, each paired with its partner as the lexer passes them on.

    `(` and `)` are anonymous tokens that no node carries, so a node's extent can stop short of its own brackets;
    pairing them once per parse lets the builder find those in constant time per call (or per bracket of a
    statement), where scanning the text from each node was quadratic in the depth of `exp(exp(...))`.
    """

    def __init__(self):
        self.clear()

    def clear(self) -> None:
        self.offsets: list[int] = []  # where each bracket starts, in the order of the text
        self.tokens: list[Token] = []
        self.partners: dict[int, Token] = {}  # a bracket's offset -> the token that closes (or opens) it
        self.opened: list[Token] = []

    def add(self, token: Token) -> None:
        """`token`, a bracket, as the lexer passes it on."""
        if token.type in _OPENING:
            self.opened.append(token)
        elif self.opened:
            opening = self.opened.pop()
            self.partners[opening.start_pos], self.partners[token.start_pos] = token, opening
        self.offsets.append(token.start_pos)
        self.tokens.append(token)

    def within(self, start: int, end: int) -> list[Token]:
        return self.tokens[bisect.bisect_left(self.offsets, start):bisect.bisect_left(self.offsets, end)]

    def after(self, offset: int) -> Token | None:
        at = bisect.bisect_left(self.offsets, offset)
        return self.tokens[at] if at < len(self.tokens) else None


_BRACKETS = _Brackets()


# --- the tables: made by Lark from the grammar ---------------------------------------------------------------

# How Lark builds the parser; scripts/generate_parser_tables.py builds it the same way to write parse_tables.py.
LARK_OPTIONS = {"parser": "lalr", "maybe_placeholders": True}


def grammar_text() -> str:
    return (data_dir("grammar") / "gpuspec.lark").read_text(encoding="utf-8")


def _grammar_sha256() -> str:
    return hashlib.sha256(grammar_text().encode("utf-8")).hexdigest()


def _indenter():
    """Lark's indentation postlexer with gpuspec's settings; an indentation that matches no enclosing block is a
    _BadIndent, located."""
    from lark.indenter import DedentError, Indenter

    class Indentation(Indenter):
        NL_type, INDENT_type, DEDENT_type, tab_len = _NL, _INDENT, _DEDENT, _TAB_LEN
        OPEN_PAREN_types, CLOSE_PAREN_types = sorted(_OPENING), sorted(_CLOSING)

        def handle_NL(self, token):
            try:
                yield from super().handle_NL(token)
            except DedentError:
                raise _BadIndent(token) from None

    return Indentation()


def build_from_grammar(grammar: str):
    """Lark's LALR parser built from the grammar's text (no cache: nothing is read from or written to disk). It
    builds no nodes: gpuspec runs its tables (runtime_tables) with the builder."""
    from lark import Lark

    return Lark(grammar, postlex=_indenter(), cache=False, **LARK_OPTIONS)


def _installed_lark_version() -> str | None:
    """The installed Lark's version, read from its __init__.py without importing it (that costs more than a
    whole check of a cached spec)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("lark")
        with open(found.origin, encoding="utf-8") as file:
            match = re.search(r"""^__version__\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""", file.read(), re.M)
        return match.group(1) if match else None
    except Exception:  # no Lark, or one laid out otherwise: as if the versions differed
        return None


def _tables_fit() -> bool:
    """Whether parse_tables was made from this grammar by the installed Lark."""
    from gpuspec import parse_tables

    return (parse_tables.GRAMMAR_SHA256 == _grammar_sha256()
            and parse_tables.LARK_VERSION == _installed_lark_version())


class _Lark:
    """Lark's parser and the classes of its errors and patterns, from the one import of Lark that made it (a test
    runner that drops the modules a test imported must not leave this code catching another copy's errors)."""

    def __init__(self, parser):
        from lark import exceptions
        from lark.lexer import PatternStr

        self.parser, self.errors, self.PatternStr = parser, exceptions, PatternStr


@functools.lru_cache(maxsize=1)
def _lark() -> _Lark:
    """Lark's parser, for syntax errors: loaded from parse_tables (building them takes a quarter of a second),
    or built from the grammar when they were made from another grammar or by another Lark."""
    from gpuspec import parse_tables

    try:
        if _tables_fit():
            from lark import Lark

            memo, data = parse_tables.lark_tables()
            return _Lark(Lark._load_from_dict(data, memo, postlex=_indenter()))
    except Exception:  # tables Lark cannot load: build them
        pass
    return _Lark(build_from_grammar(grammar_text()))


@functools.lru_cache(maxsize=1)
def _runtime() -> _Runtime:
    """The tables gpuspec parses with, and the builder's method for each rule: parse_tables.RUNTIME, or, when it
    was made from another grammar or by another Lark, the tables of the Lark parser built from the grammar."""
    from gpuspec import parse_tables

    tables = parse_tables.RUNTIME if _tables_fit() else runtime_tables(_lark().parser)
    return _Runtime(tables, _BUILDER)


def runtime_tables(parser) -> dict:
    """What the runtime needs of a Lark LALR parser (built with LARK_OPTIONS and the indentation postlexer), as
    plain data: each terminal's pattern and the characters a match of it may start with; per parser state, the
    terminals its lexer tries, in Lark's order (and the keywords a terminal's match may turn out to be), and its
    actions; per rule, its left side, its length and how its children are shaped before the builder sees them
    (Lark's ParseTreeBuilder: tokens filtered out, `_rule`s inlined, None for what `[optional]` left out,
    `?rule`s with one child replaced by it)."""
    from functools import partial

    from lark.lexer import PatternStr, _create_unless, _regexp_has_newline
    from lark.parse_tree_builder import (
        ChildFilterLALR,
        ChildFilterLALR_NoPlaceholders,
        ExpandSingleChild,
        ParseTreeBuilder,
    )
    from lark.parsers.lalr_analysis import Shift
    from lark.tree import Tree

    frontend = parser.parser
    contextual = frontend.lexer.lexer
    table = frontend.parser.parser.parse_table
    conf = parser.lexer_conf
    if conf.use_bytes or conf.g_regex_flags or parser.options.lexer_callbacks:
        raise ValueError("a lexer option the runtime does not follow")

    def scanner(terminals) -> list:
        """The terminals a BasicLexer of these tries, in its order, each with the keywords its match may be."""
        kept, callbacks = _create_unless(terminals, conf.g_regex_flags, re, False)
        order = []
        for terminal in kept:
            keywords = {}
            if terminal.name in callbacks:
                for keyword in callbacks[terminal.name].scanner.terminals:
                    if not isinstance(keyword.pattern, PatternStr) or keyword.pattern.flags:
                        raise ValueError(f"{keyword.name}: a keyword the runtime does not follow")
                    keywords.setdefault(keyword.pattern.value, keyword.name)
            order.append([terminal.name, keywords])
        return order

    states = sorted(table.states)
    if states != list(range(len(states))):
        raise ValueError("parser states are not numbered 0..n-1")
    lexers, lexer_of, state_lexer = [], {}, []
    for state in states:
        basic = contextual.lexers[state]
        if id(basic) not in lexer_of:
            lexer_of[id(basic)] = len(lexers)
            lexers.append(scanner(basic.terminals))
        state_lexer.append(lexer_of[id(basic)])

    rules = list(parser.rules)
    number = {rule: i for i, rule in enumerate(rules)}
    actions = [{symbol: arg if action is Shift else ~number[arg]
                for symbol, (action, arg) in sorted(table.states[state].items())} for state in states]

    shapes, kept = [], set()
    for rule, wrappers in ParseTreeBuilder(rules, Tree, False, False, True).rule_builders:
        single, children = False, None  # children: (index, inlined, Nones before it) for each kept, Nones after
        for wrapper in wrappers:
            if wrapper is ExpandSingleChild:
                single = True
            elif isinstance(wrapper, partial) and wrapper.func is ChildFilterLALR:
                children = [[list(kept) for kept in wrapper.args[0]], wrapper.args[1]]
            elif isinstance(wrapper, partial) and wrapper.func is ChildFilterLALR_NoPlaceholders:
                children = [[[index, inlined, 0] for index, inlined in wrapper.args[0]], 0]
            else:
                raise ValueError(f"{rule}: a step of Lark's tree building the runtime does not follow")
        name = rule.alias or rule.options.template_source or rule.origin.name
        shapes.append([rule.origin.name, len(rule.expansion), name, single, children])
        indices = range(len(rule.expansion)) if children is None else [index for index, _, _ in children[0]]
        kept.update(rule.expansion[index].name for index in indices if rule.expansion[index].is_term)

    terminals = {t.name: [t.pattern.to_regexp(), *_first_characters(t.pattern.to_regexp())]
                 for t in parser.terminals}
    return {
        "terminals": terminals,
        "newline": sorted(t.name for t in parser.terminals if _regexp_has_newline(t.pattern.to_regexp())),
        "ignore": sorted(conf.ignore),
        "kept": sorted(kept),  # the terminals some rule's value holds (the others' tokens need not be made)
        "lexers": lexers,
        "state_lexer": state_lexer,
        "actions": actions,
        "rules": shapes,
        "start": table.start_states["start"],
        "end": table.end_states["start"],
    }


def _first_characters(regexp: str) -> tuple[str, str | None]:
    """The characters a match of `regexp` may start with: (those below 128, those above or None for any). More
    than it needs is safe (the lexer only tries fewer terminals for it); it reads Python's own parse of the
    pattern, and says any character for anything it does not know."""
    anything = ("".join(map(chr, range(128))), None)
    try:
        try:
            from re import _compiler as compiler, _constants as constants, _parser as parser  # Python 3.11+
        except ImportError:  # Python 3.10
            import sre_compile as compiler
            import sre_constants as constants
            import sre_parse as parser
        parsed = parser.parse(regexp)
        if parsed.state.flags & (re.IGNORECASE | re.DOTALL):
            return anything
        low, high, nullable = _first(list(parsed), (compiler, constants, parser))
    except Exception:  # a construct this does not know
        return anything
    if nullable:
        return anything
    return "".join(sorted(low)), None if high is None else "".join(sorted(high))


def _first(items: list, sre: tuple) -> tuple[set, set | None, bool]:
    """(ASCII characters, other characters or None for any, whether it may match nothing) of a parsed sequence."""
    c = sre[1]
    low, high = set(), set()
    for op, arg in items:
        nullable = False
        if op is c.LITERAL:
            lo, hi = ({chr(arg)}, set()) if arg < 128 else (set(), {chr(arg)})
        elif op is c.IN:
            lo, hi = _class(arg, sre)
        elif op in (c.NOT_LITERAL, c.ANY):
            return set(map(chr, range(128))), None, False
        elif op is c.BRANCH:
            lo, hi = set(), set()
            for branch in arg[1]:
                more_low, more_high, empty = _first(list(branch), sre)
                lo |= more_low
                hi = None if hi is None or more_high is None else hi | more_high
                nullable = nullable or empty
        elif op is c.SUBPATTERN:
            if arg[1] & (re.IGNORECASE | re.DOTALL):
                raise ValueError("a group with flags")
            lo, hi, nullable = _first(list(arg[3]), sre)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) or op is getattr(c, "POSSESSIVE_REPEAT", None):
            lo, hi, nullable = _first(list(arg[2]), sre)
            nullable = nullable or arg[0] == 0
        elif op is getattr(c, "ATOMIC_GROUP", None):
            lo, hi, nullable = _first(list(arg), sre)
        elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):  # zero width: what follows decides
            lo, hi, nullable = set(), set(), True
        else:
            raise ValueError(f"{op}: not followed")
        low |= lo
        high = None if high is None or hi is None else high | hi
        if not nullable:
            return low, high, False
    return low, high, True


def _class(items: list, sre: tuple) -> tuple[set, set | None]:
    """The characters of a class `[...]`: its ASCII ones exactly (Python's regex engine asked about each), and the
    others listed when the class names them one by one or in short ranges, else any."""
    compiler, c, parser = sre
    pattern = compiler.compile(parser.SubPattern(parser.parse("").state, [(c.IN, items)]))
    low = {chr(i) for i in range(128) if pattern.fullmatch(chr(i))}
    if any(op in (c.NEGATE, c.CATEGORY) for op, _ in items):
        return low, None
    high = set()
    for op, arg in items:
        if op is c.LITERAL and arg >= 128:
            high.add(chr(arg))
        elif op is c.RANGE and arg[1] >= 128:
            if arg[1] - max(arg[0], 128) > 256:
                return low, None
            high |= {chr(i) for i in range(max(arg[0], 128), arg[1] + 1)}
    return low, high


class _Runtime:
    """Lark's contextual lexer, indentation postlexer and LALR parser, run over `tables` (runtime_tables) with
    `builder`'s method for each rule. A state's lexer tries its terminals in Lark's order and takes the first that
    matches, as Lark's alternation of them does; it tries only those a match may start with the character at hand,
    so no regular expression but each terminal's own is ever compiled."""

    def __init__(self, tables: dict, builder):
        self.tables = tables
        self.terminals = tables["terminals"]
        self.newline = frozenset(tables["newline"])
        self.ignore = frozenset(tables["ignore"])
        self.kept = frozenset(tables["kept"])
        self.lexers = tables["lexers"]
        self.state_lexer = tables["state_lexer"]
        self.actions = tables["actions"]
        self.start, self.end = tables["start"], tables["end"]
        self.rules = [(origin, size, _reducer(name, single, children, getattr(builder, name, None)),
                       _kept_alone(single, children, size)) for origin, size, name, single, children in tables["rules"]]
        self.compiled: dict[str, re.Pattern] = {}
        self.candidates: list[dict] = [{} for _ in self.lexers]

    def _candidates(self, lexer: int, char: str) -> tuple:
        """The terminals `lexer` tries at `char`, in order: (pattern, name, keywords its match may be, whether it
        may hold a line break), those whose match cannot start with `char` left out."""
        found = []
        for name, keywords in self.lexers[lexer]:
            regexp, low, high = self.terminals[name]
            if char in low if char < "\x80" else (high is None or char in high):
                pattern = self.compiled.get(name)
                if pattern is None:
                    pattern = self.compiled[name] = re.compile(regexp)
                found.append((pattern, name, keywords or None, name in self.newline))
        found = self.candidates[lexer][char] = tuple(found)
        return found

    def parse(self, text: str, brackets: _Brackets):
        """The builder's value for `text`. Raises _Refused where Lark's parser would raise a syntax error, and
        _BadIndent (or what the builder raises) where Lark's would."""
        actions, rules, state_lexer, candidates = self.actions, self.rules, self.state_lexer, self.candidates
        ignore, kept, end_state = self.ignore, self.kept, self.end
        states, values = [self.start], []
        pos, end, line, line_start = 0, len(text), 1, 0
        paren, indents = 0, [0]
        while True:
            queue = None  # what the postlexer passes on after this token, last first: (terminal, token)
            if pos < end:
                lexer = state_lexer[states[-1]]
                found = candidates[lexer]
                while True:  # the next token, past what the grammar ignores
                    char = text[pos]
                    tried = found.get(char)
                    if tried is None:
                        tried = self._candidates(lexer, char)
                    for pattern, kind, keywords, breaks in tried:
                        match = pattern.match(text, pos)
                        if match is not None:
                            break
                    else:
                        raise _Refused
                    value = match.group()
                    start, column, token_line = pos, pos - line_start + 1, line
                    pos += len(value)
                    if breaks and "\n" in value:
                        line += value.count("\n")
                        line_start = start + value.rindex("\n") + 1
                    if kind not in ignore:
                        if keywords is not None:
                            kind = keywords.get(value, kind)
                        break
                    if pos >= end:
                        kind = None
                        break
                if kind is None:  # only what the grammar ignores, to the end
                    continue
                if kind in kept:  # a token no rule keeps is only its terminal on the parser's stack
                    token = str.__new__(Token, value)
                    token.type, token.value, token.start_pos, token.end_pos = kind, value, start, pos
                    token.line, token.column, token.end_line, token.end_column = (token_line, column, line,
                                                                                  pos - line_start + 1)
                else:
                    token = None
                # The postlexer: brackets paired, then indentation (as Lark's Indenter, after the parser has taken
                # every token before it).
                if kind == _NL:
                    if paren:
                        continue
                    indent_text = value.rsplit("\n", 1)[1]
                    indent = indent_text.count(" ") + indent_text.count("\t") * _TAB_LEN
                    if indent > indents[-1]:
                        indents.append(indent)
                        queue = [(_INDENT, None)]
                    elif indent < indents[-1]:
                        queue = []
                        while indent < indents[-1]:
                            indents.pop()
                            queue.append((_DEDENT, None))
                        if indent != indents[-1]:
                            queue.append((None, _token(_NL, value, start, token_line, column, line,
                                                       pos - line_start + 1, pos)))
                        queue.reverse()
                elif kind in _OPENING or kind in _CLOSING:
                    if token is None:
                        token = _token(kind, value, start, token_line, column, line, pos - line_start + 1, pos)
                    brackets.add(token)
                    if kind in _OPENING:
                        paren += 1
                    else:
                        paren -= 1
                        if paren < 0:
                            queue = [(_Refused, None)]
            else:  # the end: the blocks still open close, then the parse does
                queue = [("$END", None)] + [(_DEDENT, None)] * (len(indents) - 1)
                kind, token = queue.pop()
            while True:  # the LALR parser takes the token, then each the postlexer passes on after it
                if kind is None:
                    raise _BadIndent(token)
                if kind is _Refused:
                    raise _Refused
                while True:
                    action = actions[states[-1]].get(kind)
                    if action is None:
                        raise _Refused
                    if action >= 0:
                        states.append(action)
                        values.append(token)
                        break
                    origin, size, reduce, keep = rules[~action]
                    if keep is not None:  # the rule's value is one of its children, as it is
                        if size == 1:
                            states[-1] = actions[states[-2]][origin]
                            if kind == "$END" and states[-1] == end_state:
                                return values[-1]
                            continue
                        value = values[keep - size]
                        del states[-size:]
                        del values[-size:]
                    elif size:
                        value = reduce(values[-size:])
                        del states[-size:]
                        del values[-size:]
                    else:
                        value = reduce([])
                    values.append(value)
                    states.append(actions[states[-1]][origin])
                    if kind == "$END" and states[-1] == end_state:
                        return values[-1]
                if not queue:
                    break
                kind, token = queue.pop()


def _first_token(children) -> Token:
    """The first token of what an option's rule kept (a token, or a list of tokens and nodes)."""
    if isinstance(children, Token):
        return children
    return next(child for child in children if isinstance(child, Token))


def _kept_alone(single: bool, children, size: int) -> int | None:
    """The index of the child that is a rule's value, as it is, when Lark's shaping always leaves that one child
    alone (`?sum: product`, `?atom: "(" expr ")"`), or None."""
    if not single:
        return None
    if children is None:
        return 0 if size == 1 else None
    included, nones_after = children
    if len(included) == 1 and nones_after == 0 and not included[0][1] and not included[0][2]:
        return included[0][0]
    return None


def _reducer(name: str, single: bool, children, method):
    """What a rule's reduction returns, from the values of its right side: Lark's shaping (see runtime_tables),
    then the builder's method (or, for an `_rule`, a _Tree whose children its parent takes)."""
    build = method if method is not None else functools.partial(_Tree, name)
    if single:
        inner = build

        def build(kept):
            return kept[0] if len(kept) == 1 else inner(kept)

    if children is None:
        return build
    included, nones_after = children
    if not any(inlined for _, inlined, _ in included):  # each child kept or left out, a None where told
        template = []
        for index, _, nones in included:
            template += [None] * nones + [index]
        template += [None] * nones_after
        if None not in template:
            if template == list(range(len(template))):
                count = len(template)
                return lambda values: build(values[:count])
            indices = tuple(template)
            return lambda values: build([values[index] for index in indices])
        picks = tuple(template)
        return lambda values: build([None if index is None else values[index] for index in picks])

    def shaped(values):
        kept = []
        for index, inlined, nones in included:
            if nones:
                kept += [None] * nones
            if inlined:
                if kept:
                    kept += values[index].children
                else:
                    kept = values[index].children
            else:
                kept.append(values[index])
        if nones_after:
            kept += [None] * nones_after
        return build(kept)

    return shaped


# The builder, the bracket pairs and the postlexer hold the state of the one parse under way: threads (the Python
# API called from several, a thread pool of checks) take turns.
_ONE_AT_A_TIME = threading.Lock()


def parse(source: SpecText) -> nodes.Spec:
    """Parse one spec. Raises SyntaxErrors (a SpecError) with every syntax error of the file, each located: after an
    error the parse starts again at the next statement (or, in an indented block, the next claim), and the
    statements that did parse come with the errors, for their own errors to be found too. Safe to call from
    several threads."""
    with _ONE_AT_A_TIME:
        return _parse_alone(source)


class _Stopped(Exception):
    """Where a parse stopped: the diagnostic, and the 0-based line of the text where it did; `first` when the
    token it stopped at starts its line (the statement before it was left incomplete)."""

    def __init__(self, diagnostic: Diagnostic, line: int | None, first: bool, block: bool = True,
                 indent: bool = False):
        self.diagnostic, self.line, self.first = diagnostic, line, first
        self.block = block  # whether the line may be a claim of a block, to stand in for and read on
        self.indent = indent  # the line's indentation is what is wrong: inside a block, stand in at the block's


def _parse_alone(source: SpecText) -> nodes.Spec:
    try:
        statements = _attempt(source)
    except _Stopped as stopped:
        found, skipped, stood_in = _later_errors(source, stopped)
        errors = [stopped.diagnostic, *found]
        partial, hidden = None, []
        if len(found) < _MOST_ERRORS:
            partial, hidden = _partial(source, skipped, stood_in)
        raise SyntaxErrors([*errors, *hidden], partial, _document_lines(source, stood_in)) from None
    hidden = _hidden_claims(source, list(_BUILDER.quotes))
    spec = nodes.Spec(source.path, statements)
    if hidden:
        raise SyntaxErrors(hidden, spec)
    return spec


class SyntaxErrors(PartlyRead):
    """Every syntax error of a spec, and the statements that did parse (see PartlyRead)."""


def _attempt(source: SpecText, worded: bool = True) -> tuple:
    """The statements of `source`, or _Stopped where it does not parse; `worded=False` raises _Refused instead,
    without asking Lark why (which loads it: a quote's lines are only asked whether they parse)."""
    text = source.text if source.text.endswith("\n") else source.text + "\n"
    _BUILDER.begin(source, text)
    _BRACKETS.clear()
    try:
        return _runtime().parse(text, _BRACKETS)
    except _Refused:
        if not worded:
            raise
    except (_BadNumber, _BadIndent) as error:
        raise _stopped_by(error, source) from None
    finally:
        _BRACKETS.clear()  # the tokens are not kept past the parse
    raise _lark_error(source, text)


def _lark_error(source: SpecText, text: str) -> _Stopped:
    """Where and why Lark's parser stops on text the tables refused (with the same tables, it stops where they
    did), as the _Stopped to raise."""
    lark = _lark()
    try:
        lark.parser.parse(text)
    except lark.errors.UnexpectedInput as error:
        unclosed = _unclosed(source, text, error, lark.errors)
        if unclosed is not None:
            return unclosed
        diagnostic = _syntax_diagnostic(error, source)
        token = getattr(error, "token", None)
        if isinstance(error, lark.errors.UnexpectedEOF) or (token is not None and token.type == "$END"):
            return _Stopped(diagnostic, None, False)
        if token is not None and token.type == "_INDENT":  # a block where none opens: skip to the next statement
            return _Stopped(diagnostic, token.end_line - 1, False, block=False, indent=True)
        line = (token.line if token is not None else error.line) or 1
        column = (token.column if token is not None else error.column) or 1
        first = token is not None and token.type not in ("_NL", "_DEDENT") and column == 1
        return _Stopped(diagnostic, line - 1, first)
    except (_BadNumber, _BadIndent) as error:
        return _stopped_by(error, source)
    finally:
        _BRACKETS.clear()
    raise RuntimeError("Lark parses text that gpuspec/parse_tables.py refuses: the tables are not Lark's; run "
                       "scripts/generate_parser_tables.py")


_CLOSES = {"(": ")", "[": "]"}


def _unclosed(source: SpecText, text: str, error, errors) -> _Stopped | None:
    """Where the parse stopped after a bracket that nothing closes, opened on an earlier line (or at the end of the
    file): the error at the bracket, as for a quote never closed. Inside brackets a statement runs on over lines, so
    the statements after it were read inside it; reading starts again at the statement where it stopped."""
    token = getattr(error, "token", None)
    ended = isinstance(error, errors.UnexpectedEOF) or (token is not None and token.type == "$END")
    if ended:
        offset = len(text)
    elif isinstance(error, errors.UnexpectedCharacters):
        if error.char in ('"', "“"):  # a quote never closed is the error to report
            return None
        offset = error.pos_in_stream
    elif token is not None and token.start_pos is not None:
        offset = token.start_pos
    else:
        return None
    opening = _never_closed(text, offset)
    if opening is None:
        return None
    line = text.count("\n", 0, opening) + 1
    stopped_line = text.count("\n", 0, offset) + 1
    if not ended and stopped_line == line:  # on the bracket's own line, what stopped it is the better error
        return None
    column = opening - (text.rfind("\n", 0, opening) + 1) + 1
    mark = text[opening]
    where = _position(source, line, column)
    message = f"this `{mark}` is never closed"
    if not ended:
        at = _position(source, stopped_line, offset - (text.rfind("\n", 0, offset) + 1) + 1)
        message += f": the lines after it, up to {at[0]}:{at[1]}, were read inside its brackets"
    diagnostic = Diagnostic("syntax", message, Span(source.path, where[0], where[1], where[0], where[1] + 1),
                            f"close it with `{_CLOSES[mark]}`: inside brackets a statement runs on over lines until "
                            "they close")
    if ended:
        return _Stopped(diagnostic, None, False)
    # read on at the statement where the parse stopped (the last one to start after the bracket's line, up to it)
    starts = [start for start in _statement_starts(text.split("\n")) if line - 1 < start < stopped_line]
    if not starts:
        return _Stopped(diagnostic, None, False)
    return _Stopped(diagnostic, starts[-1], True)


_BRACKET_OR_SKIP = re.compile(r'[()\[\]#"“]')


def _never_closed(text: str, end: int) -> int | None:
    """The offset of the innermost bracket open at `end` (outside quotes and comments, as the lexer reads them)
    that nothing after it closes, or None."""
    stack: list[int] = []
    at_end: list[int] | None = None
    lowest = 0  # the fewest of those brackets left open anywhere after `end`
    unmatched = set()  # quote marks with no closing mark after them (so none after a later one either)
    index = 0
    while True:
        found = _BRACKET_OR_SKIP.search(text, index)
        if at_end is None and (found is None or found.start() >= end):
            if not stack:  # nothing open where the parse stopped
                return None
            at_end, lowest = list(stack), len(stack)
        if found is None:
            break
        index, char = found.start(), found.group()
        if char in ('"', "“"):
            closing = -1 if char in unmatched else text.find('"' if char == '"' else "”", index + 1)
            if closing < 0:
                unmatched.add(char)
                index += 1
            else:
                index = closing + 1
            continue
        if char == "#":
            newline = text.find("\n", index)
            if newline < 0:
                break
            index = newline
            continue
        if char in "([":
            stack.append(index)
        elif stack:
            stack.pop()
            if at_end is not None:
                lowest = min(lowest, len(stack))
                if not lowest:
                    return None
        index += 1
    never = at_end[:lowest]
    return never[-1] if never else None


def _stopped_by(error: _BadNumber | _BadIndent, source: SpecText) -> _Stopped:
    if isinstance(error, _BadNumber):
        token = error.token
        shift = (source.column_offsets or {}).get(token.line, 0)
        span = Span(source.path, token.line + source.line_offset, token.column + shift,
                    token.end_line + source.line_offset, token.end_column + shift)
        return _Stopped(Diagnostic(error.code, error.reason, span, error.help), token.line - 1, False)
    line = error.token.end_line + source.line_offset
    column = len(error.token.value.rsplit("\n", 1)[-1].expandtabs(8)) + 1
    column += (source.column_offsets or {}).get(error.token.end_line, 0)
    span = Span(source.path, line, column, line, column + 1)
    return _Stopped(Diagnostic("bad-indentation", "this line's indentation matches no enclosing block", span,
                               "indent every claim of a block by the same amount"),
                    error.token.end_line - 1, False, indent=True)


# What stands in for a claim line that did not parse, so that the rest of its block is still read.
_PLACEHOLDER_CLAIM = "memory-bound"
_MOST_ERRORS = 1000  # past this many, a file is not what its author meant to be a spec: stop reporting
_RETRIES = 20  # the most statements _partial leaves out beyond those the errors did, before it reads nothing


def _later_errors(source: SpecText, stopped: _Stopped) -> tuple[list[Diagnostic], set[int], dict[int, str]]:
    """The syntax errors after the first: the parse starts again at the statement after the one that failed (a
    line at the margin, outside a quote), or at the same statement with a failed claim line of its block stood in
    for, and goes on to the next error. Each start reads only what is after it, so the file is read about once
    however many errors it has. Also what did not parse: the 0-based lines of the statements left out (`skipped`),
    and the claim lines stood in for (index -> indentation), for _partial to read the rest."""
    lines = source.text.split("\n")
    starts = _statement_starts(lines)
    found: list[Diagnostic] = []
    skipped: set[int] = set()
    stood_in: dict[int, str] = {}
    begin, replaced = 0, {}  # the line this attempt started at; claim lines stood in for (index -> indentation)
    while stopped.line is not None and len(found) < _MOST_ERRORS:
        at = begin + stopped.line
        statement = starts[bisect.bisect_right(starts, at) - 1] if starts and starts[0] <= at else 0
        following = bisect.bisect_right(starts, at)
        end = starts[following] if following < len(starts) else len(lines)
        if stopped.first and at in starts and at > begin:  # the statement before it was cut short: retry this one
            previous = _statement_of(lines, starts, at - 1, begin)
            if not _parses(source, lines, previous, at, replaced):
                skipped.update(range(previous, at))
            begin, replaced = at, {}
        elif stopped.indent and at not in starts and at > statement and at not in replaced \
                and _claim_line(lines, at) and _block_indent(lines, statement, at) is not None:
            # a line of a block indented wrongly (too far, or back to no enclosing level): it and the lines after it
            # at other indentations are stood in for at the block's own, and the block is read on from its next line
            # at the block's indentation (one error for a run of lines indented alike)
            replaced = {index: indent for index, indent in replaced.items() if index >= statement}
            block = _block_indent(lines, statement, at)
            for index in _misindented(lines, at, block):
                replaced[index] = stood_in[index] = block
            begin = statement
        elif stopped.block and at not in starts and at > statement and lines[at].strip() and at not in replaced \
                and _claim_line(lines, at):
            replaced = {index: indent for index, indent in replaced.items() if index >= statement}
            replaced[at] = stood_in[at] = lines[at][:len(lines[at]) - len(lines[at].lstrip(" \t"))]
            begin = statement
        else:
            # an indented line where no block opens goes alone (the statement above it is whole); else the statement
            skipped.update(range(_statement_of(lines, starts, at, begin) if stopped.block else at, end))
            if following >= len(starts):
                break
            begin, replaced = starts[following], {}
        segment = [replaced[i] + _PLACEHOLDER_CLAIM if i in replaced else lines[i] for i in range(begin, len(lines))]
        shifts = {line - begin: shift for line, shift in (source.column_offsets or {}).items() if line > begin}
        try:
            _attempt(SpecText(source.path, "\n".join(segment), source.line_offset + begin, shifts or None))
            break
        except _Stopped as next_stop:
            where = _place(next_stop.diagnostic)
            if all(_place(seen) != where for seen in (stopped.diagnostic, *found)):
                found.append(next_stop.diagnostic)
            stopped = next_stop
    if stopped.line is None:  # the file ended inside the last statement read
        skipped.update(range(_statement_of(lines, starts, len(lines) - 1, begin), len(lines)))
    return found, skipped, stood_in


def _block_indent(lines: list[str], statement: int, at: int) -> str | None:
    """The indentation of the block that line `at` is in: that of the first line of the statement starting on line
    `statement` after its first (a comment or a blank line is none), if that line comes before `at`."""
    for index in range(statement + 1, at):
        line = lines[index]
        code = line.strip()
        if not code or code.startswith("#"):
            continue
        indent = line[:len(line) - len(line.lstrip(" \t"))]
        return indent or None
    return None


def _misindented(lines: list[str], at: int, block: str) -> list[int]:
    """Line `at`, indented wrongly inside a block indented `block`, and the lines after it up to the next one at the
    block's indentation or at the margin (blank lines and comments aside), while each is one claim line."""
    found = [at]
    for index in range(at + 1, len(lines)):
        line = lines[index]
        code = line.strip()
        if not code or code.startswith("#"):
            continue
        if line[:1] not in (" ", "\t") or line[:len(block)] == block and line[len(block):][:1] not in (" ", "\t") \
                or not _claim_line(lines, index):
            break
        found.append(index)
    return found


def _statement_of(lines: list[str], starts: list[int], at: int, begin: int = 0) -> int:
    """The first line of the statement that line `at` is part of, as the parser read it from line `begin`: the
    statement starting at or before it, or an earlier one that leaves a bracket open (the lines after an open
    bracket continue it, though they start at the margin)."""
    index = bisect.bisect_right(starts, at) - 1
    if index < 0 or starts[index] < begin:
        return begin
    while index > 0 and starts[index - 1] >= begin and _leaves_open(lines, starts[index - 1], starts[index]):
        index -= 1
    return starts[index]


_QUOTED = re.compile(r'"[^"]*"|“[^”]*”')


def _leaves_open(lines: list[str], first: int, end: int) -> bool:
    """Whether lines first..end-1 open more brackets than they close (outside quotes and comments, roughly)."""
    depth = 0
    for line in lines[first:end]:
        code = _QUOTED.sub("", line).split("#", 1)[0]
        depth += code.count("(") + code.count("[") - code.count(")") - code.count("]")
    return depth > 0


def _parses(source: SpecText, lines: list[str], first: int, end: int, replaced: dict[int, str]) -> bool:
    """Whether lines first..end-1 (a statement, its claim lines in `replaced` stood in for) parse on their own."""
    segment = [replaced[i] + _PLACEHOLDER_CLAIM if i in replaced else lines[i] for i in range(first, end)]
    try:
        _attempt(SpecText(source.path, "\n".join(segment), source.line_offset + first))
    except _Stopped:
        return False
    return True


def _partial(source: SpecText, skipped: set[int], stood_in: dict[int, str]) \
        -> tuple[nodes.Spec | None, list[Diagnostic]]:
    """What of a spec with syntax errors can be read: its text with the statements that did not parse left out
    (each stood in for by an Unparsed node: the names it would have defined) and the claim lines that did not parse
    stood in for, parsed; and the problems of its quotes (_hidden_claims). None where that text does not parse
    either (the errors found are then all there is to say)."""
    lines = source.text.split("\n")
    ordered_starts = _statement_starts(lines)
    for _ in range(_RETRIES):
        kept = ["" if i in skipped else stood_in[i] + _PLACEHOLDER_CLAIM if i in stood_in else line
                for i, line in enumerate(lines)]
        try:
            statements = _attempt(SpecText(source.path, "\n".join(kept), source.line_offset,
                                           source.column_offsets))
            break
        except _Stopped as stopped:  # a statement the errors found did not leave out: leave it out too
            at = len(lines) - 1 if stopped.line is None else stopped.line
            first = _statement_of(lines, ordered_starts, at)
            if stopped.first and at in ordered_starts and at > 0:
                first = _statement_of(lines, ordered_starts, at - 1)
            following = bisect.bisect_right(ordered_starts, at)
            more = set(range(first, ordered_starts[following] if following < len(ordered_starts) else len(lines)))
            if more <= skipped:
                return None, []
            skipped = skipped | more
    else:
        return None, []
    hidden = _hidden_claims(source, list(_BUILDER.quotes))
    starts = set(ordered_starts)
    unparsed = [_unparsed(source, lines, index) for index in sorted(skipped & starts)]
    ordered = sorted([*statements, *(u for u in unparsed if u is not None)], key=lambda node: node.span.line)
    return nodes.Spec(source.path, ordered), hidden


_DEFINES = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)")
_SELECTS = re.compile(r"(device|model)(?:\s+([A-Za-z0-9][A-Za-z0-9_.+-]*))?(?:\s|#|$)")


def _unparsed(source: SpecText, lines: list[str], index: int) -> nodes.Unparsed | None:
    """What the statement on line `index` (0-based), which did not parse, would have defined, by its first words:
    `y = ...` the name y, `device X ...` a device (X, whatever follows), `model X ...` a model. None for anything
    else (a claim, `set`, a quote, lines that are no statement)."""
    text = lines[index]
    line = index + 1 + source.line_offset
    span = Span(source.path, line, 1, line, len(text) + 1)
    selects = _SELECTS.match(text)
    if selects is not None:
        name = selects[2] or ""
        return nodes.Unparsed((), name if selects[1] == "device" else None,
                              name if selects[1] == "model" else None, span=span)
    defines = _DEFINES.match(text)
    if defines is not None:
        return nodes.Unparsed((defines[1],), None, None, span=span)
    return None


def _document_lines(source: SpecText, indexes) -> frozenset[int]:
    return frozenset(index + 1 + source.line_offset for index in indexes)


# The most lines a quoted sentence may run over: past this, a quote is taken to have been left open.
LONGEST_QUOTE = 12


def _hidden_claims(source: SpecText, quotes: list[Token]) -> list[Diagnostic]:
    """The problems of the quotes that run over several lines: a quote over more than LONGEST_QUOTE lines, and a
    line inside one that reads as a statement or a claim on its own. A quote left open, or closed a few lines late,
    would otherwise take the claims after it into its words, where nothing checks them."""
    problems = []
    for token in quotes:
        rows = str(token.value).split("\n")
        closing = rows[-1][-1]
        opened_at = _position(source, token.line, token.column)
        if len(rows) > LONGEST_QUOTE:
            line, column = opened_at
            closed_at = _position(source, token.end_line, token.end_column - 1)
            problems.append(Diagnostic(
                "open-quote", f"this quoted sentence runs over {len(rows)} lines, to the `{closing}` at "
                f"{closed_at[0]}:{closed_at[1]}: a quote left open takes the claims after it into its words",
                Span(source.path, line, column, line, column + 1),
                f"close it where the sentence ends; a quote runs over at most {LONGEST_QUOTE} lines"))
            continue
        for offset, row in enumerate(rows[1:], 1):
            words = (row[:-1] if offset == len(rows) - 1 else row).strip()
            what = _reads_as(words) if words else None
            if what is None:
                continue
            indent = len(row) - len(row.lstrip())
            line, column = _position(source, token.line + offset, indent + 1)
            problems.append(Diagnostic(
                "open-quote", f"this line reads as {what}, but it is inside the quoted sentence opened at "
                f"{opened_at[0]}:{opened_at[1]}, so it is not checked",
                Span(source.path, line, column, line, column + len(words.split("#")[0].rstrip() or words)),
                f"if the sentence ends before it, close the quote there (`{closing}`); if the line is part of the "
                "sentence, break the sentence elsewhere, so that no line of it reads as a claim"))
    return problems


def _position(source: SpecText, line: int, column: int) -> tuple[int, int]:
    """A parser position (line and column of the text parsed) in the file's own lines and columns."""
    return line + source.line_offset, column + (source.column_offsets or {}).get(line, 0)


def _reads_as(words: str) -> str | None:
    """What a line of a quote would be on its own: `a claim` (a claim line, or a claim of a block), `a statement`
    (a device, a setting, a definition), or None (words, or a bare expression that claims nothing)."""
    for text, block in ((words, False), ("q:\n    " + words, True)):
        try:
            statements = _attempt(SpecText("<quote>", text), worded=False)
        except (_Refused, _Stopped, RecursionError):
            continue
        for statement in statements:
            if isinstance(statement, nodes.Quote):  # a quote inside the quote (“...” inside "...")
                continue
            claims = isinstance(statement, nodes.Subject) and any(
                isinstance(item, nodes.ClaimNode) for item in statement.claims.items)
            if claims or isinstance(statement, nodes.DirectClaim):
                return "a claim"
            if not block and (not isinstance(statement, nodes.Subject) or statement.name is not None):
                return "a statement"
    return None


def _place(diagnostic: Diagnostic) -> tuple:
    span = diagnostic.span
    return diagnostic.code, diagnostic.message, span.line if span else None, span.column if span else None


def _claim_line(lines: list[str], index: int) -> bool:
    """Whether a line can be stood in for by one claim: indented, and neither opening nor closing a quote or a
    bracket that runs over other lines."""
    line = lines[index]
    code = line.split("#", 1)[0] if '"' not in line and "“" not in line else line
    return (line[:1] in (" ", "\t") and code.count('"') % 2 == 0 and code.count("“") == code.count("”")
            and code.count("(") == code.count(")") and code.count("[") == code.count("]"))


def _statement_starts(lines: list[str]) -> list[int]:
    """The 0-based lines where a statement starts: those with text at the margin that is not a comment, outside
    a quoted sentence running over several lines. A quote mark that nothing closes before the end of the file opens
    no quote (the parser stops at it: reading starts again after its line)."""
    starts: list[int] = []
    ignored: set[tuple[int, int]] = set()  # (line, column) of quote marks never closed
    first = 0
    while True:
        found, unclosed = _scan_starts(lines, first, ignored)
        starts = [start for start in starts if start < first] + found
        if unclosed is None:
            return starts
        ignored.add(unclosed)
        first = unclosed[0]


def _scan_starts(lines: list[str], first: int, ignored: set[tuple[int, int]]) \
        -> tuple[list[int], tuple[int, int] | None]:
    """The statement starts from line `first` on (outside any quote there), and where the quote open at the end
    of the file opened, if one is."""
    starts, quoted, opened = [], None, None  # quoted: the mark that closes the open quote
    for index in range(first, len(lines)):
        line = lines[index]
        if quoted is None and line[:1] not in ("", " ", "\t", "#"):
            starts.append(index)
        for column, char in enumerate(line):
            if quoted is not None:
                if char == quoted:
                    quoted = None
            elif char == "#":
                break
            elif char in ('"', "“") and (index, column) not in ignored:
                quoted, opened = '"' if char == '"' else "”", (index, column)
    return starts, opened if quoted is not None else None


def _describe(names: set[str]) -> str:
    lark = _lark()
    terminals = {t.name: t for t in lark.parser.terminals}
    words = set()
    operators = [symbol for name, symbol in _OPERATORS.items() if name in names]
    if len(operators) > 1:
        words.add(f"an operator ({' '.join(operators)})")
    elif operators:
        words.add(f"`{operators[0]}`")
    if names & _COMPARISONS:
        words.add("a comparison (= ≈ < ≤ > ≥)")
    for name in names - set(_OPERATORS) - _COMPARISONS:
        if name in _TERMINAL_WORDS:
            words.add(_TERMINAL_WORDS[name])
        elif name in terminals and isinstance(terminals[name].pattern, lark.PatternStr):
            words.add(f"`{terminals[name].pattern.value}`")
    ordered = sorted(words, key=lambda w: (w.startswith("the end"), w))
    if len(ordered) <= 1:
        return "".join(ordered) or "something else"
    return ", ".join(ordered[:-1]) + " or " + ordered[-1]


def _expected(error) -> set[str]:
    """What the parser could have taken where it stopped: its table's entries for the state it was in. (The
    lexer's own list leaves out symbols its unit pattern also matches, such as `×` and `²`.)"""
    state = getattr(error, "state", None)
    try:
        return {name for name in state.parse_conf.parse_table.states[state.position] if name.isupper()}
    except (AttributeError, KeyError, TypeError):
        return set(error.expected)


def _syntax_diagnostic(error, source: SpecText) -> Diagnostic:
    errors = _lark().errors
    UnexpectedCharacters, UnexpectedEOF, UnexpectedToken = (errors.UnexpectedCharacters, errors.UnexpectedEOF,
                                                            errors.UnexpectedToken)
    help = None
    line = error.line + source.line_offset if error.line and error.line > 0 else source.line_offset + 1
    column = error.column if error.column and error.column > 0 else 1
    if isinstance(error, UnexpectedCharacters) and error.char in ('"', "“"):  # no closing mark anywhere after it
        closing = '"' if error.char == '"' else "”"
        found, expected, width = "a quoted sentence that is never closed", None, 1
        help = f"end the sentence with `{closing}` (a quote may run over a few lines, up to its closing mark)"
    elif isinstance(error, UnexpectedCharacters):
        found = f"unexpected character `{error.char}`"
        expected, width = _describe(set(error.allowed or ())), 1
    elif isinstance(error, UnexpectedToken) and error.token.type != "$END":
        token = error.token
        expected_names = _expected(error)
        expected, width = _describe(expected_names), max(1, len(str(token.value).split("\n")[0]))
        if token.type == "_INDENT":  # the indenter places it at the line break; point at the indented line
            found, line, column = "unexpected indentation", token.end_line + source.line_offset, 1
            width = max(1, token.end_column - 1)
        elif token.type == "_DEDENT":
            found = "the indented block ends here"
        elif token.type == "_NL":
            found, width = "the line ends early", 1
        else:
            found = f"unexpected `{token.value}`"
            if token.type in ("PLUS", "MINUS") and "TIMES" in expected_names and "PLUS" not in expected_names:
                help = "a claimed value that is a sum goes in brackets, the unit after them: `= (4096 + 128) * 2 B`"
            elif token.type == "NUMBER" and str(getattr(error, "token_history", None) or "").endswith("x')]"):
                help = "multiply with `*` or `×`: `x` after a number is a ratio (`80x`)"
            else:
                help = _suffix_help(source, token) or _late_close_help(source, token)
    else:
        expected = _describe(set(getattr(error, "expected", ()) or ()))
        found, width = "the file ends early", 1
        if isinstance(error, UnexpectedEOF) or getattr(error, "token", None) is not None:
            lines = source.text.rstrip("\n").split("\n")
            line, column = len(lines) + source.line_offset, len(lines[-1]) + 1
    column += (source.column_offsets or {}).get(line - source.line_offset, 0)
    span = Span(source.path, line, column, line, column + width)
    return Diagnostic("syntax", f"{found}; expected {expected}" if expected else found, span, help)


_SUFFIXED = re.compile(r"([0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|k|K|M|G)[ \t]+$")


def _suffix_help(source: SpecText, token: Token) -> str | None:
    """`67.1M FLOP`: a count suffix, then a unit (which the parser does not expect there); what to write."""
    from gpuspec import units  # for an error's help only: no node depends on it
    lines = source.text.split("\n", token.line)
    before = _SUFFIXED.search(lines[token.line - 1][:token.column - 1]) if len(lines) >= token.line else None
    if before is None:
        return None
    combined = units.suffixed_unit(before[2], str(token.value))
    if combined is None:
        return None
    return f"a count suffix before a unit: write the prefix on the unit, `{before[1]} {combined}`"


def _late_close_help(source: SpecText, token: Token) -> str | None:
    """Where the token comes right after a quote mark that closes a quote opened on an earlier line (`"two"` after a
    quote left open: its first mark closes that quote, and `two` is read as code), what happened."""
    text = source.text
    before = text[:token.start_pos].rstrip(" \t")
    if not before.endswith(('"', "”")) or "\n" not in before:
        return None
    quote, opened, line, column = None, None, 1, 0
    for char in before[:-1]:  # the quote state just before that mark, read as the lexer reads it
        column += 1
        if char == "\n":
            line, column = line + 1, 0
            if quote is None:
                continue
        if quote is not None:
            if char == quote:
                quote = None
        elif char in ('"', "“"):
            quote, opened = ('"' if char == '"' else "”"), (line, column)
        elif char == "#":
            quote = "\n"  # a comment, to the end of its line
    if quote in (None, "\n") or opened is None or opened[0] == token.line or quote != before[-1]:
        return None
    where = _position(source, *opened)
    return (f"the quoted sentence opened at {where[0]}:{where[1]} ends at the `{before[-1]}` before this, and what "
            "follows it is read as a statement: a quote left open above?")


class _Extent:
    """Where a rule's text starts and ends: from the first and the last of the tokens and nodes it was built from.

    Children come in the order they were written, so only the ends of the list need looking at.
    """

    __slots__ = ("start", "end", "line", "column", "end_line", "end_column")

    def __init__(self, children, shift=None):
        # Tokens, and nodes in a text without shifted columns, are looked at here; lists and the rest by _edge.
        for item in children:
            if item is None:
                continue
            if item.__class__ is Token:
                if item.start_pos is None:
                    continue
                self.start, self.line, self.column = item.start_pos, item.line, item.column
                break
            span = None if shift else getattr(item, "span", None)
            if span is not None and span.__class__ is Span:
                self.start, self.line, self.column = span.start, span.line, span.column
                break
            first = _edge((item,), False, shift)
            if first is not None:
                self.start, self.line, self.column = first[0], first[1], first[2]
                break
        else:
            self.start = None
            return
        for item in reversed(children):
            if item is None:
                continue
            if item.__class__ is Token:
                if item.start_pos is None:
                    continue
                self.end, self.end_line, self.end_column = item.end_pos, item.end_line, item.end_column
                return
            span = None if shift else getattr(item, "span", None)
            if span is not None and span.__class__ is Span:
                self.end, self.end_line, self.end_column = span.end, span.end_line, span.end_column
                return
            last = _edge((item,), True, shift)
            if last is not None:
                self.end, self.end_line, self.end_column = last[3], last[4], last[5]
                return

    @property
    def empty(self) -> bool:
        return self.start is None


def _edge(items, from_end: bool, shift=None):
    """(start, line, column, end, end_line, end_column) of the first (or last) positioned item, in the
    parser's own columns (a node's span is shifted back by `shift`, the dedent of Markdown blocks)."""
    for item in (reversed(items) if from_end else items):
        if item is None:
            continue
        if isinstance(item, Token):
            if item.start_pos is not None:
                return item.start_pos, item.line, item.column, item.end_pos, item.end_line, item.end_column
            continue
        if isinstance(item, (list, tuple)):
            found = _edge(item, from_end, shift)
        else:
            span = getattr(item, "span", None)
            if span is None:
                found = None
            elif shift:
                found = (span.start, span.line, span.column - shift.get(span.line, 0), span.end, span.end_line,
                         span.end_column - shift.get(span.end_line, 0))
            else:
                found = (span.start, span.line, span.column, span.end, span.end_line, span.end_column)
        if found is not None:
            return found
    return None


def _without_extent(method):
    """For a rule whose value takes no position from its own extent (it passes on a token or a list, or a tuple
    its parent reads): the builder method gets None for it, and no extent is worked out."""
    def build(self, children):
        return method(self, None, children)
    build.__name__ = method.__name__
    return build


def _with_extent(method):
    def build(self, children):
        return method(self, _Extent(children, self._shift), children)
    build.__name__ = method.__name__
    return build


class _Builder:
    """Turns what the parser matched into nodes, rule by rule as it parses; it only builds, never looks up.

    One instance serves every parse: `begin(source, text)` sets the file it reports positions in.
    """

    def begin(self, source: SpecText, text: str) -> None:
        self._source, self._text = source, text
        self.quotes: list[Token] = []  # the quotes that run over several lines, for _hidden_claims
        # What every position needs, read once per parse.
        self._path, self._offset, self._shift = source.path, source.line_offset, source.column_offsets

    # --- positions ---
    def _span(self, extent: _Extent) -> Span | None:
        if extent.start is None:
            return None
        offset, shift = self._offset, self._shift
        if shift:
            return span(self._path, extent.line + offset, extent.column + shift.get(extent.line, 0),
                        extent.end_line + offset, extent.end_column + shift.get(extent.end_line, 0),
                        extent.start, extent.end)
        return span(self._path, extent.line + offset, extent.column, extent.end_line + offset, extent.end_column,
                    extent.start, extent.end)

    def _tspan(self, token: Token) -> Span:
        offset, shift = self._offset, self._shift
        if shift:
            return span(self._path, token.line + offset, token.column + shift.get(token.line, 0),
                        token.end_line + offset, token.end_column + shift.get(token.end_line, 0),
                        token.start_pos, token.end_pos)
        return span(self._path, token.line + offset, token.column, token.end_line + offset, token.end_column,
                    token.start_pos, token.end_pos)

    def _slice(self, extent: _Extent) -> str:
        return self._text[extent.start:extent.end]

    def _bracketed(self, extent: _Extent) -> _Extent:
        """The extent widened over the brackets it opens or closes at its ends. `(` and `)` are anonymous tokens
        that no child carries, so `(a + b) ≈ 20 µs` would start at `a`, and `z = (x + 1)` end at `1`. Used for
        statements and claims, which never nest in brackets, so looking at each bracket inside is linear."""
        if extent.empty:
            return extent
        first = last = None
        for token in _BRACKETS.within(extent.start, extent.end):
            partner = _BRACKETS.partners.get(token.start_pos)
            if partner is None:
                continue
            if partner.start_pos < extent.start:
                if first is None or partner.start_pos < first.start_pos:
                    first = partner
            elif partner.start_pos >= extent.end:
                if last is None or partner.end_pos > last.end_pos:
                    last = partner
        if first is not None:
            extent.start, extent.line, extent.column = first.start_pos, first.line, first.column
        if last is not None:
            extent.end, extent.end_line, extent.end_column = last.end_pos, last.end_line, last.end_column
        return extent

    def _call_extent(self, extent: _Extent, name: Token) -> _Extent:
        """A call's extent, from its name to the bracket that closes the one after it (no child carries it)."""
        opening = _BRACKETS.after(name.end_pos)
        closing = _BRACKETS.partners.get(opening.start_pos) if opening is not None else None
        if closing is not None and closing.end_pos > extent.end:
            extent.end, extent.end_line, extent.end_column = closing.end_pos, closing.end_line, closing.end_column
        return extent

    def _number(self, token: Token) -> nodes.Number:
        text = str(token).rstrip("+")
        if len(text) > 40 or not math.isfinite(float(text.replace(",", ""))):
            raise _BadNumber(token, "this number is too large: gpuspec works in 64-bit floats, up to about 1.8e308")
        return nodes.Number(text, span=self._tspan(token))

    def _count(self, token: Token, suffix: Token | None) -> nodes.Number:
        """A count as written, with the SI suffix it may carry: `10k launches`, `context 32k` (`32Ki`: 32,768)."""
        if suffix is None:
            return self._number(token)
        if str(suffix) not in nodes.COUNT_SUFFIXES or token.end_pos != suffix.start_pos:
            raise _BadNumber(suffix, f"`{token}{'' if token.end_pos == suffix.start_pos else ' '}{suffix}` is not "
                             "a count: a count is a whole number, or one with k, M or G (Ki, Mi, Gi) against it, "
                             "such as `10k`")
        number = self._number(token)
        return nodes.Number(number.text + str(suffix), span=self._span(_Extent([token, suffix])))

    def _dim(self, token: Token) -> int:
        if len(token) > 18:
            raise _BadNumber(token, "this dimension is too large: at most 18 digits")
        return int(token)

    # --- statements ---
    @_without_extent
    def start(self, meta, children):
        return tuple(c for c in children if c is not None and not isinstance(c, Token))

    @_with_extent
    def device_stmt(self, meta, children):
        tokens = [c for c in children if isinstance(c, Token) and c.type == "CATALOG_NAME"]
        names = [str(c) for c in tokens]
        assignments = [c for c in children if isinstance(c, nodes.Assignment)]
        return nodes.DeviceStatement(names[0], names[1] if len(names) > 1 else None, assignments,
                                     self._tspan(tokens[0]), span=self._span(meta))

    @_with_extent
    def model_stmt(self, meta, children):
        tokens = [c for c in children if isinstance(c, Token) and c.type == "CATALOG_NAME"]
        names = [str(c) for c in tokens]
        assignments = [c for c in children if isinstance(c, nodes.Assignment)]
        return nodes.ModelStatement(names[0], names[1] if len(names) > 1 else None, assignments,
                                    self._tspan(tokens[0]), span=self._span(meta))

    @_with_extent
    def stream(self, meta, children):
        count, suffix, _, _, name = children
        return nodes.StreamNode(self._count(count, suffix), str(name), span=self._span(meta))

    @_with_extent
    def decode(self, meta, children):
        return nodes.Decode(str(children[1]), [c for c in children[2:] if isinstance(c, nodes.DecodeSetting)],
                            str(children[0]), span=self._span(meta))

    @_with_extent
    def decode_pair(self, meta, children):
        name, value, suffix = children
        return nodes.DecodeSetting(str(name), self._count(value, suffix), None, span=self._span(meta))

    @_with_extent
    def decode_word(self, meta, children):
        name, value = children
        return nodes.DecodeSetting(str(name), None, str(value), span=self._span(meta))

    @_with_extent
    def kernels_per_layer(self, meta, children):
        return nodes.DecodeSetting("kernels_per_layer", self._number(children[0]), None, span=self._span(meta))

    @_with_extent
    def assignment(self, meta, children):
        name, _, value = children
        meta = self._bracketed(meta)
        return nodes.Assignment(str(name), value, span=self._span(meta))

    @_with_extent
    def set_stmt(self, meta, children):
        _, name, _, (amount, words) = children
        return nodes.Setting(str(name), amount, words, span=self._span(meta))

    @_with_extent
    def setting_amount(self, meta, children):
        _, number, unit = children
        phrase = nodes.Phrase(str(unit), span=self._tspan(unit)) if unit else None
        return nodes.Amount("point", self._number(number), None, phrase, span=self._span(meta)), ()

    @_without_extent
    def setting_words(self, meta, children):
        return None, tuple(str(c) for c in children)

    @_with_extent
    def quote(self, meta, children):
        # A quote may run over several lines; its words are kept, its line breaks are not.
        if "\n" in children[0]:
            self.quotes.append(children[0])
        return nodes.Quote(" ".join(str(children[0])[1:-1].split()), span=self._span(meta))

    @_with_extent
    def tensor_binding(self, meta, children):
        name, _, tensor = children
        meta = self._bracketed(meta)
        return nodes.TensorBinding(str(name), tensor, span=self._span(meta))

    @_with_extent
    def value_binding(self, meta, children):
        name, _, expr, options, claims = children
        meta = self._bracketed(meta)
        return nodes.Subject(str(name), expr, options, claims, self._slice(meta).strip(), span=self._span(meta))

    @_with_extent
    def subject(self, meta, children):
        expr, options, claims = children
        meta = self._bracketed(meta)
        return nodes.Subject(None, expr, options, claims, self._slice(meta).strip(), span=self._span(meta))

    @_with_extent
    def direct_claim(self, meta, children):
        subject, comparator, value, tolerance = children
        meta = self._bracketed(meta)
        claim = nodes.ClaimNode(_COMPARATORS[str(comparator)], subject, value, tolerance, self._slice(meta).strip(),
                            span=self._span(meta))
        return nodes.DirectClaim(claim, span=self._span(meta))

    # --- workload options ---
    @_with_extent
    def options(self, meta, children):
        _, on, *rest = children
        if not rest:  # the usual case: `on <shape>` alone, or nothing
            return nodes.Options(on, None, None, False, None, None, None, span=self._span(meta))
        if len(rest) > 1:
            self._once_each(rest)
        mode = next((r[1] for r in rest if r[0] == "mode"), None)
        threads = next((r[1] for r in rest if r[0] == "threads"), None)
        graph = any(r[0] == "graph" for r in rest)
        tile = next((r[1] for r in rest if r[0] == "tiles"), None)
        across = next((r[1] for r in rest if r[0] == "across"), None)
        observed = [r for r in rest if r[0] == "observed"]
        if len(observed) > 1:  # one figure says what the workload did; a second would be lost or contradict it
            raise _BadNumber(observed[1][2][0], "a workload takes one observed figure: claim the others on it "
                                                "(`observed_mbu ≈ 60%`)", "observed-figure")
        observed = observed[0][1] if observed else None
        return nodes.Options(on, mode, threads, graph, tile, across, observed, span=self._span(meta))

    _OPTION_WORDS = {"mode": "a workload runs in one mode", "threads": "a workload has one block size",
                     "tiles": "a matmul has one tile", "graph": "a workload is one CUDA graph", "across": "a collective runs across one set of "
                     "GPUs"}

    def _once_each(self, options: list) -> None:
        """Each option at most once: a second mode (`eager fused`), block size, tile or `across` would silently
        replace the first. The error is at the second, naming the first. (Observed figures say so themselves.)"""
        first: dict[str, tuple] = {}
        for option in options:
            kind = option[0]
            if kind == "observed":
                continue
            if kind not in first:
                first[kind] = option
                continue
            earlier = first[kind]
            at = self._tspan(_first_token(earlier[2]))
            (written, extent), (before, _) = self._option_text(option), self._option_text(earlier)
            if written == before:
                reason = f"`{written}` is written already, at {at.line}:{at.column}"
            else:
                reason = f"`{written}` after `{before}` ({at.line}:{at.column}): {self._OPTION_WORDS[kind]}"
            # the error spans the whole option
            token = _token("OPTION", written, extent.start, extent.line, extent.column, extent.end_line,
                           extent.end_column, extent.end)
            raise _BadNumber(token, reason, "duplicate-option",
                             f"keep one: `{before}` or `{written}`" if written != before else "write it once")

    def _option_text(self, option: tuple) -> tuple[str, _Extent]:
        """An option as written (its words, spaced once), and where."""
        tokens = option[2] if isinstance(option[2], list) else [option[2]]
        extent = _Extent([t for t in tokens if isinstance(t, Token)])
        return " ".join(self._slice(extent).split()), extent

    @_without_extent
    def eager(self, meta, children):
        return ("mode", "eager", children[0])

    @_without_extent
    def fused(self, meta, children):
        return ("mode", "fused", children[0])

    @_without_extent
    def tiles(self, meta, children):
        sizes = str(children[1]).replace("×", "x").split("x")
        if len(sizes) != 2 or any(len(size) > 6 for size in sizes):
            raise _BadNumber(children[1], "a tile is two sizes, rows x columns, such as 128x256")
        return ("tiles", (int(sizes[0]), int(sizes[1])), children)

    @_without_extent
    def across(self, meta, children):
        _, count, what, _, link = children
        return ("across", (self._number(count), str(what), str(link) if link is not None else None), children)

    @_with_extent
    def observed(self, meta, children):
        _, number, phrase = children
        unit, words = (phrase.unit, phrase.words) if phrase is not None else (None, ())
        return ("observed", nodes.Observed(self._number(number), unit, words, span=self._span(meta)), children)

    @_without_extent
    def compiled(self, meta, children):
        return ("mode", "compiled", children[0])

    @_without_extent
    def graph(self, meta, children):
        return ("graph", True, children)

    @_with_extent
    def threads(self, meta, children):
        return ("threads", self._number(children[1]), children)

    # --- claims ---
    @_with_extent
    def claims_tail(self, meta, children):
        items = []
        for child in children:
            if isinstance(child, list):
                items.extend(child)
            elif isinstance(child, nodes.Quote):
                items.append(child)
        return nodes.Block(items, span=self._span(meta))

    @_without_extent
    def claim_list(self, meta, children):
        return list(children)

    @_without_extent
    def practice_list(self, meta, children):
        return [attrs.evolve(claim, practice=True) for claim in children[1]]

    @_with_extent
    def bound_claim(self, meta, children):
        token = children[0]
        word = nodes.Word(str(token).split("-")[0], span=self._tspan(token))
        return nodes.ClaimNode("=", None, word, None, str(token), span=self._span(meta))

    @_with_extent
    def bare_claim(self, meta, children):
        amount, tolerance = children
        return nodes.ClaimNode("=", None, amount, tolerance, self._slice(meta).strip(), span=self._span(meta))

    @_with_extent
    def implicit_claim(self, meta, children):
        comparator, value, tolerance = children
        meta = self._bracketed(meta)
        return nodes.ClaimNode(_COMPARATORS[str(comparator)], None, value, tolerance, self._slice(meta).strip(),
                               span=self._span(meta))

    @_with_extent
    def explicit_claim(self, meta, children):
        subject, comparator, value, tolerance = children
        meta = self._bracketed(meta)
        return nodes.ClaimNode(_COMPARATORS[str(comparator)], subject, value, tolerance, self._slice(meta).strip(),
                           span=self._span(meta))

    @_with_extent
    def word(self, meta, children):
        return nodes.Word(str(children[0]), span=self._span(meta))

    @_with_extent
    def point(self, meta, children):
        number, phrase = children
        return nodes.Amount("point", self._number(number), None, phrase, span=self._span(meta))

    @_with_extent
    def figure_value(self, meta, children):
        formula, phrase = children
        if isinstance(formula, nodes.Quantity):  # one number, perhaps in brackets: the usual point
            return nodes.Amount("point", formula.number, None, phrase, span=self._span(meta))
        meta = self._bracketed(meta)
        return nodes.Figure(formula, phrase, self._slice(meta).strip(), span=self._span(meta))

    @_with_extent
    def ratio_value(self, meta, children):
        formula, times, *words = children
        phrase = nodes.Phrase(str(times), tuple(str(w) for w in words), span=self._span(_Extent([times, *words])))
        if isinstance(formula, nodes.Quantity):
            return nodes.Amount("point", formula.number, None, phrase, span=self._span(meta))
        meta = self._bracketed(meta)
        return nodes.Figure(formula, phrase, self._slice(meta).strip(), span=self._span(meta))

    @_with_extent
    def fnumber(self, meta, children):
        return nodes.Quantity(self._number(children[0]), None, span=self._span(meta))

    @_with_extent
    def fbinop(self, meta, children):
        left, op, right = children
        return nodes.BinOp("*" if str(op) == "×" else str(op), left, right, span=self._span(meta))

    @_with_extent
    def fnegative_power(self, meta, children):
        base, op, minus, exponent = children
        negative = nodes.Neg(exponent, span=self._span(_Extent([minus, exponent], self._source.column_offsets)))
        return nodes.BinOp("^", base, negative, span=self._span(meta))

    @_with_extent
    def fsquare(self, meta, children):
        return self._power(meta, children[0], children[1], "2", None)

    @_with_extent
    def fcube(self, meta, children):
        return self._power(meta, children[0], children[1], "3", None)

    @_with_extent
    def at_least(self, meta, children):
        number, phrase = children
        return nodes.Amount("at_least", self._number(number), None, phrase, span=self._span(meta))

    @_with_extent
    def range(self, meta, children):
        low, _, high, phrase = children
        return nodes.Amount("range", self._number(low), self._number(high), phrase, span=self._span(meta))

    @_with_extent
    def phrase(self, meta, children):
        unit, *words, per_second = children
        if per_second is not None:  # `200k launches/s`: the count prefix, the noun, per second, as one unit
            unit, words = f"{unit} {' '.join(str(w) for w in words)}{per_second}", []
        return nodes.Phrase(str(unit), tuple(str(w) for w in words), span=self._span(meta))

    @_without_extent
    def unit(self, meta, children):
        return children[0]  # the token, so that spans include it

    @_with_extent
    def tolerance(self, meta, children):
        _, number, unit = children
        return nodes.ToleranceNode(self._number(number), str(unit) if unit else None, span=self._span(meta))

    @_without_extent
    def comparator(self, meta, children):
        return children[0]  # the token, so that the claim's text and span include it

    # --- tensors ---
    @_with_extent
    def shaped(self, meta, children):
        dims, dtype = children
        return nodes.TensorType(str(dtype), dims, span=self._span(meta))

    @_with_extent
    def tensor_type(self, meta, children):
        return nodes.TensorType(str(children[0]), children[1:], span=self._span(meta))

    @_without_extent
    def shape(self, meta, children):
        return list(children)

    @_with_extent
    def product_shape(self, meta, children):
        sizes = []
        for child in children:
            if child.type == "DIMS_X":
                sizes.extend(str(child).replace("×", "x").split("x"))
            elif child.type == "DIM":
                sizes.append(str(child))
        if any(len(size) > 18 for size in sizes):
            raise _BadNumber(children[0], "a dimension of this shape is too large: at most 18 digits")
        return [nodes.Dim(int(size), 1, span=self._span(meta)) for size in sizes]

    @_with_extent
    def single_dim(self, meta, children):
        return nodes.Dim(self._dim(children[0]), 1, span=self._span(meta))

    @_with_extent
    def square_dim(self, meta, children):
        return nodes.Dim(self._dim(children[0]), 2, span=self._span(meta))

    @_with_extent
    def cube_dim(self, meta, children):
        return nodes.Dim(self._dim(children[0]), 3, span=self._span(meta))

    @_with_extent
    def power_dim(self, meta, children):
        return nodes.Dim(self._dim(children[0]), self._dim(children[2]), span=self._span(meta))

    # --- expressions ---
    @_with_extent
    def _binop(self, meta, children):
        left, op, right = children
        return nodes.BinOp(str(op), left, right, span=self._span(meta))

    add = sub = mul = div = matmul = _binop

    @_with_extent
    def pow(self, meta, children):
        left, op, right = children
        if isinstance(right, nodes.Quantity) and right.unit is not None:  # 8192^2 FLOP: the unit is the power's
            exponent = nodes.Quantity(right.number, None, span=right.number.span)
            power = nodes.BinOp("^", left, exponent, span=self._span(_Extent([left, op, exponent], self._source.column_offsets)))
            return nodes.WithUnit(power, right.unit, span=self._span(meta))
        return nodes.BinOp("^", left, right, span=self._span(meta))

    @_with_extent
    def neg(self, meta, children):
        return nodes.Neg(children[1], span=self._span(meta))

    def _power(self, meta, base, token, exponent: str, unit):
        """`8192²` as `8192 ^ 2`; with a unit after it (`8192² FLOP`) the unit is the power's."""
        number = nodes.Quantity(nodes.Number(exponent, span=self._tspan(token)), None, span=self._tspan(token))
        power = nodes.BinOp("^", base, number, span=self._span(_Extent([base, token], self._source.column_offsets)))
        if unit is None:
            return power
        return nodes.WithUnit(power, str(unit), span=self._span(meta))

    @_with_extent
    def square(self, meta, children):
        return self._power(meta, children[0], children[1], "2", children[2])

    @_with_extent
    def cube(self, meta, children):
        return self._power(meta, children[0], children[1], "3", children[2])

    @_with_extent
    def quantity(self, meta, children):
        number, unit = children
        return nodes.Quantity(self._number(number), str(unit) if unit else None, span=self._span(meta))

    @_with_extent
    def name(self, meta, children):
        return nodes.Name(str(children[0]), span=self._span(meta))

    @_with_extent
    def member(self, meta, children):
        return nodes.Member(str(children[0]), str(children[1]), span=self._span(meta))

    @_with_extent
    def model_fact(self, meta, children):
        model, _, attribute = str(children[0]).rpartition(".")
        return nodes.ModelFact(model, attribute, span=self._span(meta))

    @_with_extent
    def device_field(self, meta, children):
        return nodes.DeviceField(str(children[1]), span=self._span(meta))

    @_with_extent
    def call(self, meta, children):
        meta = self._call_extent(meta, children[0])
        return nodes.Call(str(children[0]), children[1:], span=self._span(meta))


_BUILDER = _Builder()
