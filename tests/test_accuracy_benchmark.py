"""benchmarks/accuracy.py: README's accuracy table is what the benchmark computes now, every corpus figure is
read with its source, and the sources kept for an independent check stay out of the data."""
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _accuracy():
    spec = importlib.util.spec_from_file_location("accuracy_benchmark", ROOT / "benchmarks" / "accuracy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def accuracy():
    return _accuracy()


@pytest.fixture(scope="module")
def rows(accuracy):
    return accuracy.evaluate()


def test_readme_shows_the_accuracy_table_the_benchmark_computes(accuracy, rows):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert accuracy.table(rows) in readme, "rerun `python benchmarks/accuracy.py --table` and update README.md"
    figures = len(rows)
    assert f"sets the {figures} published measured figures" in readme


def test_the_corpus_readme_counts_the_figures_there_are(accuracy, rows):
    readme = (ROOT / "benchmarks" / "accuracy" / "corpus" / "README.md").read_text(encoding="utf-8")
    table = accuracy.counts([figure for figure, _ in rows])
    assert table in readme, "rerun `python benchmarks/accuracy.py --counts` and update the corpus README"
    total = len(rows)
    assert re.match(rf"# The accuracy corpus\n\n{total} published, measured figures", readme)
    top = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"sets the {total} published measured figures" in top


def test_every_figure_of_the_corpus_is_read_with_its_origin(accuracy, rows):
    names = set()
    for path in sorted((ROOT / "benchmarks" / "accuracy" / "corpus").glob("*.gpu")):
        names |= set(re.findall(r"^([a-z0-9_]+) = .* observed ", path.read_text(encoding="utf-8"), re.M))
    assert {f.name for f, _ in rows} == names and len(rows) >= 40
    for figure, errors in rows:
        assert figure.id.replace("-", "_").replace(".", "_") == figure.name
        assert figure.origin and errors["measured"] > 0
        for key in ("ideal_error", "calibrated_error", "out_of_sample_error"):
            assert errors[key] > -1


def test_each_figure_is_printed_with_every_prediction_and_its_error(accuracy, rows):
    from gpuspec import units

    figure, errors = next((f, e) for f, e in rows if f.name == "sb_h100_add_1g")
    (line,) = [line for line in accuracy.per_figure(rows).splitlines() if " sb_h100_add_1g " in line]
    for source in ("ideal", "calibrated", "out_of_sample"):
        shown = f"{units.format_si(errors[source], units.TIME)} {errors[source + '_error'] * 100:+6.1f}%"
        assert shown in line, (source, line)
    assert units.format_si(errors["measured"], units.TIME) in line


def test_a_figure_whose_source_fits_nothing_is_predicted_the_same_in_and_out_of_sample(rows):
    outside = [(f, e) for f, e in rows if not f.in_sample]
    assert outside
    for figure, errors in outside:
        assert errors["calibrated_error"] == pytest.approx(errors["out_of_sample_error"]), figure.name


def test_the_summary_by_hand(accuracy):
    class Figure:
        def __init__(self, kind, in_sample):
            self.kind, self.in_sample = kind, in_sample

    rows = [(Figure("matmul", True), {"ideal_error": -0.5, "calibrated_error": 0.1, "out_of_sample_error": -0.2}),
            (Figure("matmul", False), {"ideal_error": 0.3, "calibrated_error": 0.4, "out_of_sample_error": 0.4}),
            (Figure("decode", False), {"ideal_error": -0.1, "calibrated_error": 0.0, "out_of_sample_error": 0.05})]
    by_kind = {row["kind"]: row for row in accuracy.summary(rows)}
    assert by_kind["matmul"]["ideal"] == pytest.approx((40.0, 50.0))  # median of 50% and 30%, worst 50%
    assert by_kind["matmul"]["in_sample_calibrated"] == pytest.approx((10.0, 10.0))  # only the in-sample one
    assert by_kind["matmul"]["out_of_sample"] == pytest.approx((30.0, 40.0))
    assert by_kind["decode"]["in_sample_calibrated"] is None
    assert by_kind["all"]["figures"] == 3 and by_kind["all"]["in_sample"] == 1
    assert "| decode | 1 (0 in-sample) | 10.0% (10%) | - | 5.0% (5%) |" in accuracy.table(rows)


# Kept out of the data so that an independent set of published measurements can judge gpuspec.
RESERVED = [r"Liger-Kernel", r"torch-performance-test-data", r"flash-attention/(issues|pull)",
            r"gpt-fast(/blob)?/README|pytorch-labs/gpt-fast", r"nccl/issues/583"]


def test_the_reserved_sources_give_no_number():
    import tomllib

    data = tomllib.loads((ROOT / "gpuspec" / "catalog" / "published.toml").read_text(encoding="utf-8"))
    for entry in data["measurement"]:
        cited = " ".join(str(entry.get(k, "")) for k in ("source", "origin", "how", "quote"))
        for pattern in RESERVED:
            assert not re.search(pattern, cited, re.I), (entry["id"], pattern)
    for path in (ROOT / "benchmarks" / "accuracy" / "corpus").glob("*.gpu"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith(("# source:", "# origin:", "# figure:")):
                for pattern in RESERVED:
                    assert not re.search(pattern, line, re.I), (path.name, line)
