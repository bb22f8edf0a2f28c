"""The parse cache: an unchanged spec is not parsed again, and nothing about the cache can change a result."""
import os

from gpuspec import cache
from gpuspec.pipeline import compile_text, run_check
from gpuspec.text import SpecText

SPEC = "device H100-SXM\nx*2 on 4096² bf16 is memory-bound, ≈20µs, 62 waves\n"


def test_a_cached_parse_is_the_same_spec(monkeypatch):
    source = SpecText("a.gpu", SPEC)
    first = compile_text(source)
    assert cache.load(source) is not None
    calls = []
    monkeypatch.setattr("gpuspec.parse.parse", lambda s: calls.append(s))
    second = compile_text(source)
    assert calls == []  # served from the cache
    assert [(c.metric, c.expected.written) for c in first.claims] == [(c.metric, c.expected.written)
                                                                     for c in second.claims]


def test_a_changed_text_is_parsed_again():
    assert cache.load(SpecText("a.gpu", SPEC + "device.sms = 132\n")) is None


def test_the_cache_can_be_turned_off(monkeypatch):
    compile_text(SpecText("b.gpu", SPEC))
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    assert cache.load(SpecText("b.gpu", SPEC)) is None


def test_a_damaged_entry_is_ignored(tmp_path):
    source = SpecText("c.gpu", SPEC)
    compile_text(source)
    folder = cache._folder()
    for entry in folder.iterdir():
        entry.write_bytes(b"not a pickle")
    assert cache.load(source) is None
    assert len(compile_text(source).claims) == 3


def test_a_cache_folder_others_can_write_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "gpuspec").mkdir(mode=0o777)
    os.chmod(tmp_path / "gpuspec", 0o777)
    assert cache._folder() is None
    assert len(compile_text(SpecText("d.gpu", SPEC)).claims) == 3


def test_results_are_the_same_with_and_without_the_cache(root, monkeypatch):
    warm = run_check([str(root / "specs")])
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    cold = run_check([str(root / "specs")])
    assert [(v.status, v.message) for v in warm.verdicts] == [(v.status, v.message) for v in cold.verdicts]


def test_a_change_to_the_node_classes_invalidates_the_cache(tmp_path, monkeypatch):
    from gpuspec import cache

    before = cache._key("a.gpu", "x = 1 B\n", 0, None)
    (tmp_path / "nodes.py").write_text("# node classes with a field more\n")
    monkeypatch.setattr(cache, "__file__", str(tmp_path / "cache.py"))
    monkeypatch.setattr(cache, "_GRAMMAR_HASH", [])
    assert cache._key("a.gpu", "x = 1 B\n", 0, None) != before
