"""Specs parsed from several threads at once come out as they do one at a time (the Python API may be called from
a thread pool; the parser keeps the state of the parse under way)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gpuspec import parse
from gpuspec.diagnostics import SpecError
from gpuspec.text import SpecText

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted((ROOT / "specs").glob("*.gpu"))


def _parsed(source: SpecText):
    try:
        return repr(parse.parse(source))  # every node's fields, spans included
    except SpecError as error:
        return [d.message for d in error.diagnostics]


def test_specs_parsed_in_threads_are_the_specs_parsed_one_at_a_time():
    sources = [SpecText(str(p), p.read_text(encoding="utf-8")) for p in SPECS]
    sources.append(SpecText("bad.gpu", "device H100-SXM\nx = bf16[4096\n"))  # an error, among the others
    alone = [_parsed(source) for source in sources]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(_parsed, sources * 4))
    assert together == alone * 4
    assert isinstance(alone[-1], list) and all(isinstance(spec, str) for spec in alone[:-1])
