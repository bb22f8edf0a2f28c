"""The pytest plugin keeps the rule for globs: a malformed `gpuspec_exclude` pattern is a usage error in words (pytest
exits 4), never an internal error."""
from __future__ import annotations

pytest_plugins = ["pytester"]


def test_a_malformed_exclude_glob_in_the_ini_is_a_usage_error(pytester):
    pytester.makefile(".gpu", ok="device H100-SXM\nx*2 on 4096² bf16 is ≈ 20 µs\n")
    pytester.makeini("[pytest]\ngpuspec_exclude =\n    drafts\n    a[z-a]\n")
    result = pytester.runpytest()
    assert result.ret == 4
    err = result.stderr.str()
    assert "gpuspec_exclude: `a[z-a]` is not a glob pattern: `[z-a]` is no set of characters" in err
    assert "INTERNALERROR" not in err + result.stdout.str() and "Traceback" not in err
