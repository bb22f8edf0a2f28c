"""The parse cache: an unchanged spec is not parsed again, and nothing about the cache can change a result."""
import ast
import os
import shutil
import time
from pathlib import Path

import attrs
from fuzzing import fuzz_settings, mutated_specs, valid_specs
from hypothesis import given
from hypothesis import strategies as st

from gpuspec import cache, cachedir, resources
from gpuspec.api import compile_text, run_check
from gpuspec.diagnostics import SpecError
from gpuspec.markdown import extract
from gpuspec.parse import parse
from gpuspec.text import Span, SpecText

SPEC = "device H100-SXM\nx*2 on 4096² bf16 is memory-bound, ≈20µs, 62 waves\n"


def same_nodes(a, b) -> bool:
    """Whether two node trees are alike in every field and every span (nodes compare by identity)."""
    if type(a) is not type(b):
        return False
    if type(a) is tuple:
        return len(a) == len(b) and all(same_nodes(x, y) for x, y in zip(a, b))
    if type(a) is Span:
        return attrs.astuple(a) == attrs.astuple(b)
    if attrs.has(type(a)):
        return all(same_nodes(getattr(a, f.name), getattr(b, f.name)) for f in attrs.fields(type(a)))
    return a == b


def entries() -> list[Path]:
    return sorted(Path(cachedir.location()).glob("spec-*.json"))


def test_a_cached_parse_is_the_same_spec(monkeypatch):
    source = SpecText("a.gpu", SPEC)
    first = compile_text(source)
    assert cache.lookup(source) is not None
    calls = []
    monkeypatch.setattr("gpuspec.parse.parse", lambda s: calls.append(s))
    second = compile_text(source)
    assert calls == []  # served from the cache
    assert [(c.metric, c.expected.written) for c in first.claims] == [(c.metric, c.expected.written)
                                                                     for c in second.claims]


def round_trips(source: SpecText) -> bool:
    """Whether `source`, parsed, stored and loaded, comes back a new tree alike in every node and span."""
    spec = parse(source)
    cache.store(source, spec)
    back = cache.lookup(source)
    return back is not None and back is not spec and same_nodes(spec, back)


def test_every_bundled_spec_and_the_readme_come_back_node_for_node(root):
    for path in sorted((root / "specs").glob("*.gpu")):
        assert round_trips(SpecText(str(path), path.read_text(encoding="utf-8"))), path
    readme = root / "README.md"
    blocks = extract(str(readme), readme.read_text(encoding="utf-8"))  # line and column offsets too
    assert blocks.column_offsets and round_trips(blocks)


@given(text=st.one_of(valid_specs(), mutated_specs()))
@fuzz_settings(share=0.2)
def test_every_spec_that_parses_comes_back_node_for_node(text):
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    source = SpecText("grown.gpu", text.replace("\0", ""))
    try:
        parse(source)
    except SpecError:
        return
    assert round_trips(source)


def test_a_changed_text_is_parsed_again():
    compile_text(SpecText("a.gpu", SPEC))
    assert cache.lookup(SpecText("a.gpu", SPEC + "device.sms = 132\n")) is None
    assert cache.lookup(SpecText("elsewhere.gpu", SPEC)) is None  # spans name the file: another path, another entry


def test_the_cache_can_be_turned_off(monkeypatch):
    compile_text(SpecText("b.gpu", SPEC))
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    assert cache.lookup(SpecText("b.gpu", SPEC)) is None


def test_a_damaged_entry_is_ignored_and_replaced(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    source = SpecText("c.gpu", SPEC)
    compile_text(source)
    [entry] = entries()
    entry.write_bytes(b"not JSON")
    assert cache.lookup(source) is None
    assert len(compile_text(source).claims) == 3
    assert cache.lookup(source) is not None  # parsed and stored again


def test_a_cache_folder_others_can_write_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "gpuspec").mkdir(mode=0o777)
    os.chmod(tmp_path / "gpuspec", 0o777)
    assert len(compile_text(SpecText("d.gpu", SPEC)).claims) == 3
    assert list((tmp_path / "gpuspec").iterdir()) == []  # nothing written there either


def test_results_are_the_same_with_and_without_the_cache(root, monkeypatch):
    warm = run_check([str(root / "specs")])
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    cold = run_check([str(root / "specs")])
    assert [(v.status, v.message) for v in warm.verdicts] == [(v.status, v.message) for v in cold.verdicts]


def test_the_key_covers_every_file_that_shapes_the_nodes(tmp_path, monkeypatch):
    paths = cache.code_paths()
    names = {path.name for path in paths}
    assert {"gpuspec.lark", "parse.py", "nodes.py", "cache.py"} <= names
    assert any(path.parent.name == "lark" for path in paths)  # the installed Lark's version

    copies = []
    for i, path in enumerate(paths):
        copy = tmp_path / f"{i}-{path.name}"
        shutil.copyfile(path, copy)
        copies.append(copy)
    monkeypatch.setattr(cache, "code_paths", lambda: copies)
    source = SpecText("a.gpu", "x = 1 B\n")
    monkeypatch.setattr(cache, "_CODE_KEY", [])
    before = cache._key(source)
    for copy in copies:
        original = copy.read_bytes()
        copy.write_bytes(original + b"\n")  # a change that keeps every other byte
        monkeypatch.setattr(cache, "_CODE_KEY", [])
        assert cache._key(source) != before, copy.name
        copy.write_bytes(original)
    monkeypatch.setattr(cache, "_CODE_KEY", [])
    assert cache._key(source) == before


def test_the_key_covers_every_gpuspec_module_the_parser_imports():
    package = Path(cache.__file__).parent
    seen, todo = set(), ["parse"]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        # What each module imports as it loads (an import inside a function, such as text.py's for writing
        # files, is not part of building nodes).
        for node in ast.parse((package / f"{module}.py").read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gpuspec."):
                todo.append(node.module.removeprefix("gpuspec."))
            elif isinstance(node, ast.ImportFrom) and node.module == "gpuspec":
                todo.extend(alias.name for alias in node.names if (package / f"{alias.name}.py").exists())
    assert {f"{module}.py" for module in seen} - {"cachedir.py"} <= set(cache._CODE), seen


def test_the_folder_is_kept_within_its_limits_oldest_first(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(cachedir, "MAX_ENTRIES", 4)  # trimmed to 3 when over
    monkeypatch.setattr(cachedir, "_trim_due", lambda: False)  # no trim while filling
    sources = [SpecText(f"s{i}.gpu", f"x{i} = {i} B\n") for i in range(5)]
    for i, source in enumerate(sources[:4]):
        before = set(entries())
        cache.store(source, parse(source))
        [written] = set(entries()) - before
        os.utime(written, ns=((4 - i) * 10**9, (4 - i) * 10**9))  # the first written last, a second apart
    dead = tmp_path / "gpuspec" / ".spec-left-by-a-killed-writer.json.0123.tmp"
    dead.write_bytes(b"")
    os.utime(dead, (time.time() - 7200, time.time() - 7200))
    monkeypatch.setattr(cachedir, "_trim_due", lambda: True)
    cache.store(sources[4], parse(sources[4]))  # the fifth entry, and a trim
    assert len(entries()) == 3
    assert not dead.exists()
    kept = [source.path for source in sources if cache.lookup(source) is not None]
    assert kept == ["s0.gpu", "s1.gpu", "s4.gpu"]  # s3 and s2 were the oldest


def test_the_folder_is_kept_within_its_size_in_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(cachedir, "_trim_due", lambda: True)
    source = SpecText("big.gpu", SPEC)
    cache.store(source, parse(source))
    size = entries()[0].stat().st_size
    monkeypatch.setattr(cachedir, "MAX_BYTES", size * 2)
    for i in range(4):
        other = SpecText(f"big{i}.gpu", SPEC)
        cache.store(other, parse(other))
    assert sum(entry.stat().st_size for entry in entries()) <= size * 2
    assert len(entries()) == 1  # down to nine tenths: room for one


def test_one_store_in_so_many_trims_the_folder(monkeypatch):
    monkeypatch.setattr(cachedir, "_stores", [0])
    due = [cachedir._trim_due() for _ in range(cachedir.TRIM_ONE_IN * 40)]
    assert all(due[cachedir.TRIM_ONE_IN - 1::cachedir.TRIM_ONE_IN])  # every so many stores of a process
    assert 40 < sum(due) < 200  # and by chance about as often again, so that short runs trim too


def test_the_catalog_cache_is_keyed_by_the_text_not_its_size_or_time(tmp_path, monkeypatch):
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    original = (resources.data_dir("catalog") / "devices.toml").read_text(encoding="utf-8")
    assert 'hbm_bandwidth = { value = "3.35 TB/s"' in original
    toml = catalog / "devices.toml"
    toml.write_text(original, encoding="utf-8")
    real_data_dir = resources.data_dir
    monkeypatch.setattr(resources, "data_dir", lambda name: catalog if name == "catalog" else real_data_dir(name))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    resources.catalog_data.cache_clear()
    try:
        assert resources.catalog_data("devices")["devices"]["H100-SXM"]["hbm_bandwidth"]["value"] == "3.35 TB/s"
        assert list((tmp_path / "xdg" / "gpuspec").glob("catalog-*.json"))  # kept
        stat = toml.stat()
        toml.write_text(original.replace('value = "3.35 TB/s"', 'value = "3.36 TB/s"', 1), encoding="utf-8")
        os.utime(toml, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same time
        resources.catalog_data.cache_clear()
        assert resources.catalog_data("devices")["devices"]["H100-SXM"]["hbm_bandwidth"]["value"] == "3.36 TB/s"
    finally:
        resources.catalog_data.cache_clear()
