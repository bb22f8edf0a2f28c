"""gpuspec checks its own numbers: the bundled specs and the README's language example hold."""
from gpuspec.api import run_check


def test_bundled_specs_pass(root):
    report = run_check([str(root / "specs")])
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    failed = [f"{v.claim.span}: {v.message}" for v in report.verdicts if v.status == "fail"]
    assert not failed
    assert report.count("pass") >= 40


def test_lesson_spec_quotes_the_sentences_it_checks(root):
    report = run_check([str(root / "specs" / "gpu-execution.gpu")])
    quoted = [v for v in report.verdicts if v.claim.quote]
    assert len(quoted) >= len(report.verdicts) // 2


def test_readme_gpu_blocks_check(root):
    report = run_check([str(root / "README.md")])
    assert not report.diagnostics, [f"{d.span}: {d.message}" for d in report.diagnostics]
    assert report.count("fail") == 0 and report.count("pass") > 30
    # the language example is among them: its decode step and stream claims were checked
    assert any(v.claim.metric == "launch_time" for v in report.verdicts)
    assert any(v.claim.metric == "utilization" for v in report.verdicts)
