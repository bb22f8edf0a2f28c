"""The shape of the code: the check path stays light, and imports flow forward through the pipeline.

The import guard reads every form an import can take (`import gpuspec.x`, `from gpuspec import x`, `from gpuspec.x
import y`, relative imports, `importlib.import_module("gpuspec.x")` and its f-strings, read as patterns), in
function bodies too, and holds each module to its layer in LAYERS: it may import only modules of earlier layers.
A kind's stage modules share their stage's layer (gpuspec/kinds/*/rules.py are the model's), and may use each other
only without a cycle. Tests below plant back-imports of every form and see the guard fail.
"""
from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gpuspec"

# The pipeline's order, one layer a line, earliest first; names are relative to gpuspec (`__init__` is the package
# itself). A line of several names is a group whose modules may import each other (without a cycle).
LAYERS = """
version
record
units
files
text
diagnostics
cachedir
resources
timing
nodes
metrics
devices
llm_catalog
markdown
parse_tables
parse
cache
prose
tensors
kinds.kind
kinds.*
kinds
program
resolve.scope
resolve.checked
resolve.quantities
resolve.claims
resolve.tensor_expressions
resolve.options
kinds.*.resolve
resolve.subjects
resolve.catalogs
resolve.settings
resolve.defaults
resolve.resolver
resolve
model.values
model.estimate
model.expressions
model.roofline
model.kernel_sequence
model.occupancy
model.launches
model.llm
model.observed
kinds.*.rules
model
domains
codegen
templating
planning
kinds.*.harness
harness
schema
results
profiles
published
calibration
sources
measure
mistakes
verdicts
report
report.safe
report.text
report.markdown
report.github
report.junit
report.json
report.document
report.notebook
report.catalog
report.terminal
report.explain
starter
fmt
update
api
config
public
plot
plot.labels
plot.data
plot.select
plot.draw
pictures
cli
pytest_plugin
__main__
__init__
"""


def _layers(text: str = LAYERS) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


def matches(name: str, pattern: str) -> bool:
    """Whether a module name fits a pattern in which `*` stands for one part of a dotted name."""
    return re.fullmatch(r"[^.]+".join(re.escape(part) for part in pattern.split("*")), name) is not None


def module_names(root: Path) -> dict[str, Path]:
    """Every module of the package under `root`, by its name relative to the package (`kinds.matmul.rules`;
    a package's __init__ is the package's name; the root's is `__init__`)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _absolute(name: str) -> str | None:
    """`gpuspec.x.y` -> `x.y`; `gpuspec` -> `__init__`; None for anything outside the package."""
    if name == "gpuspec":
        return "__init__"
    return name.removeprefix("gpuspec.") if name.startswith("gpuspec.") else None


def imports(module: str, source: str, known: set[str], is_package: bool) -> list[tuple[str, int]]:
    """What a module imports from the package, as (module name or pattern with `*`, line), in every form."""
    here = [] if module == "__init__" else module.split(".")
    package = here if is_package else here[:-1]
    found: list[tuple[str, int]] = []

    def add(name: str | None, line: int) -> None:
        if name is not None:
            found.append((name, line))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(_absolute(alias.name), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package, up level - 1 packages
                base_parts = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                base = ".".join([*base_parts, *([node.module] if node.module else [])]) or "__init__"
            else:
                base = _absolute(node.module or "")
            if base is None:
                continue
            for alias in node.names:  # `from gpuspec import cli` imports the module gpuspec.cli
                submodule = alias.name if base == "__init__" else f"{base}.{alias.name}"
                add(submodule if submodule in known else base, node.lineno)
        elif isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if called not in ("import_module", "__import__") or not node.args:
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                text = arg.value
            elif isinstance(arg, ast.JoinedStr):  # f"gpuspec.kinds.{name}.rules": a pattern
                text = "".join(v.value if isinstance(v, ast.Constant) else "*" for v in arg.values)
            else:
                found.append(("<computed>", node.lineno))  # a name the guard cannot read: refused
                continue
            if text.startswith("."):
                text = ".".join(["gpuspec", *package]) + text
            add(_absolute(text), node.lineno)
    return found


def violations(sources: dict[str, tuple[str, bool]], layers: list[list[str]] | None = None) -> list[str]:
    """Every import that reaches forward (to a later layer), every cycle, every module without a layer, and every
    import the guard cannot read; `sources` maps a module's name to (its source, whether it is a package)."""
    layers = layers if layers is not None else _layers()
    known = set(sources)
    problems = []
    layer_of: dict[str, int] = {}
    for module in known:
        places = [i for i, patterns in enumerate(layers) if any(matches(module, p) for p in patterns)]
        exact = [i for i in places if module in layers[i]]
        if exact:
            places = exact  # `kinds.kind` is its own layer, though `kinds.*` would match it too
        if len(places) != 1:
            problems.append(f"{module} is in {'no layer' if not places else 'several layers'} of LAYERS")
            continue
        layer_of[module] = places[0]
    edges: dict[str, set[str]] = {m: set() for m in known}
    for module, (source, is_package) in sorted(sources.items()):
        if module not in layer_of:
            continue
        here = layer_of[module]
        for target, line in imports(module, source, known, is_package):
            if target == "<computed>":
                problems.append(f"{module}:{line} imports a module whose name is computed: the guard cannot check it")
                continue
            matched = [m for m in known if matches(m, target)] if "*" in target else [target]
            for name in matched:
                if name == module:
                    continue
                if name not in layer_of:
                    if name not in known:
                        problems.append(f"{module}:{line} imports gpuspec.{name}, which does not exist")
                    continue
                there = layer_of[name]  # the same layer only in a group (kinds' stage modules): cycles are below
                if there > here:
                    problems.append(f"{module}:{line} imports {name}, a later stage ({' '.join(layers[there])} "
                                    f"comes after {' '.join(layers[here])})")
                if "*" not in target:
                    edges[module].add(name)
    problems.extend(_cycles(edges))
    return problems


def _cycles(edges: dict[str, set[str]]) -> list[str]:
    """Each import cycle, once."""
    found, state = [], {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(edges.get(module, ())):
            if state.get(target) == "open":
                cycle = path[path.index(target):] + [target] if target in path else [module, target]
                found.append("import cycle: " + " -> ".join(cycle))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    return found


def package_sources(root: Path = PACKAGE) -> dict[str, tuple[str, bool]]:
    return {name: (path.read_text(encoding="utf-8"), path.name == "__init__.py")
            for name, path in module_names(root).items()}


def test_imports_flow_forward_only():
    assert violations(package_sources()) == []


def test_every_module_has_exactly_one_layer():
    layers = _layers()
    names = set(module_names(PACKAGE))
    for patterns in layers:
        for pattern in patterns:
            assert any(matches(name, pattern) for name in names), f"LAYERS names {pattern}: no module"
    for kind in (PACKAGE / "kinds").iterdir():
        if kind.is_dir() and (kind / "__init__.py").exists():
            # a kind's stage modules are exactly these: a new file in a kind's package needs a layer of its own
            assert {p.stem for p in kind.glob("*.py")} <= {"__init__", "resolve", "rules", "harness"}, kind


def test_each_module_has_a_layer_of_its_own():
    # Two modules on one layer could import each other unnoticed (report and the pipeline once did): only the
    # patterns of kinds' stage modules group several modules, and those are checked for cycles.
    shared = [line for line in _layers() if len(line) > 1 or ("*" not in line[0] and
                                                              sum(matches(m, line[0]) for m in
                                                                  module_names(PACKAGE)) > 1)]
    assert shared == []


# --- the guard fails on a planted back-import, in every form ---------------------------------------------------

def _planted(module: str, line: str) -> list[str]:
    sources = package_sources()
    source, is_package = sources[module]
    sources[module] = (source + "\n\ndef _planted():\n    " + line + "\n", is_package)
    return violations(sources)


@pytest.mark.parametrize("module, line, target", [
    ("units", "from gpuspec import cli", "cli"),
    ("units", "import gpuspec.cli", "cli"),
    ("units", "import gpuspec.cli as command_line", "cli"),
    ("units", "from gpuspec.cli import main", "cli"),
    ("units", "from . import cli", "cli"),
    ("units", "from .cli import main", "cli"),
    ("units", "importlib.import_module('gpuspec.cli')", "cli"),
    ("units", "__import__('gpuspec.cli')", "cli"),
    ("report.explain", "from gpuspec.api import explain", "api"),
    ("report.explain", "from ..api import explain", "api"),
    ("report.explain", "from .. import api", "api"),
    ("report", "from gpuspec.api import run_check", "api"),
    ("report.text", "from gpuspec import api", "api"),
    ("fmt", "from gpuspec.api import format_file", "api"),
    ("resolve.subjects", "from gpuspec.model import estimate", "model"),
    ("kinds.matmul.resolve", "from gpuspec.kinds.matmul import rules", "kinds.matmul.rules"),
    ("kinds.matmul.rules", "from gpuspec.kinds.matmul.harness import plan", "kinds.matmul.harness"),
    ("kinds.decode", "from gpuspec.kinds.decode.rules import layer_kernels", "kinds.decode.rules"),
    ("model.values", "importlib.import_module(f'gpuspec.kinds.{name}.rules')", "kinds."),
    ("model", "from gpuspec import harness", "harness"),
    ("harness", "from gpuspec.sources import Measured", "sources"),
])
def test_a_planted_back_import_is_caught(module, line, target):
    found = _planted(module, line)
    assert any(p.startswith(f"{module}:") and f"imports {target}" in p for p in found), found
    assert all(p.startswith((f"{module}:", "import cycle:")) for p in found), found


def test_an_import_cycle_within_a_stage_is_caught():
    # kinds' modules of one stage may use each other, but never in a circle
    found = _planted("kinds.elementwise.harness", "from gpuspec.kinds.stream import harness")
    assert any(p.startswith("import cycle:") and "kinds.stream.harness" in p for p in found), found


def test_a_module_name_the_guard_cannot_read_is_caught():
    found = _planted("verdicts", "importlib.import_module(name)")
    assert any("whose name is computed" in p for p in found), found


def test_a_module_without_a_layer_is_caught(tmp_path):
    tree = tmp_path / "gpuspec"
    shutil.copytree(PACKAGE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "helpers.py").write_text("from gpuspec import units\n", encoding="utf-8")
    assert violations(package_sources(tree)) == ["helpers is in no layer of LAYERS"]


def test_a_planted_file_in_a_copy_of_the_package_fails_the_guard(tmp_path):
    tree = tmp_path / "gpuspec"
    shutil.copytree(PACKAGE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    units = tree / "units.py"
    units.write_text(units.read_text(encoding="utf-8") + "\nfrom gpuspec import cli  # noqa: E402\n",
                     encoding="utf-8")
    found = violations(package_sources(tree))
    assert len(found) >= 1 and found[0].startswith("units:") and "imports cli, a later stage" in found[0], found


# --- spec text is read in one place -----------------------------------------------------------------------------

# The modules that may open a file themselves, and what for: anything else goes through gpuspec.text (spec
# text: encoding, byte-order mark, line breaks) or gpuspec.files (JSON: results and profiles; atomic writes).
FILE_READERS = {
    "text": "spec text, the one way every command reads it",
    "files": "JSON files (results, profiles, reports), bounded; atomic writes",
    "cachedir": "cache entries, without following links",
    "resources": "the bundled catalogs (TOML)",
    "config": "pyproject.toml, for [tool.gpuspec] (TOML, not spec text)",
    "cache": "gpuspec's own code, for the cache key",
    "parse": "the bundled grammar; the installed Lark's version, from its __init__.py (without importing it)",
    "templating": "timing.py, which every generated program carries",
    "measure": "the programs it writes and runs",
    "starter": "pip's record of where gpuspec was installed from (direct_url.json, through importlib.metadata)",
    "cli": "the null device, put under a standard output or error that can no longer be written",
}
_READS = {"read_text", "read_bytes", "open", "fdopen", "write_text", "write_bytes", "stdin"}


def file_reads(source: str) -> list[tuple[str, int]]:
    """Each call (or use, for stdin) in `source` that opens, reads or writes a file directly."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in _READS:
                found.append((name, node.lineno))
        elif isinstance(node, ast.Attribute) and node.attr == "stdin":
            found.append(("stdin", node.lineno))
    return found


def test_only_the_reading_modules_open_files():
    for module, (source, _) in sorted(package_sources().items()):
        if module in FILE_READERS:
            continue
        reads = file_reads(source)
        if module == "api":  # standard input: decoded by gpuspec.text like a file
            reads = [r for r in reads if r[0] == "stdin" and "decode(sys.stdin" not in source.split("\n")[r[1] - 1]]
        assert reads == [], f"{module} opens files itself at {reads}: use gpuspec.text or gpuspec.files"


def test_a_module_that_reads_spec_text_itself_is_caught():
    assert file_reads("from pathlib import Path\ntext = Path(path).read_text(encoding='utf-8-sig')\n") == \
        [("read_text", 2)]
    assert file_reads("with open(path, newline='') as f:\n    text = f.read()\n") == [("open", 1)]
    assert file_reads("import sys\ndata = sys.stdin.read()\n") == [("stdin", 2)]


# --- the check path stays light --------------------------------------------------------------------------------

def test_the_check_path_imports_neither_torch_nor_triton(root):
    code = ("import sys; from gpuspec.cli import main; main(['check', 'specs']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'triton', 'jinja2', 'matplotlib')"
            " or m in ('gpuspec.measure', 'gpuspec.harness', 'gpuspec.templating', 'gpuspec.planning')"
            " or m.endswith('.harness')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr


def test_the_check_path_in_process_leaves_torch_and_triton_unimported(root):
    # in a process of its own: a test run earlier in this one may have imported torch for its own reasons
    code = ("import sys\nfrom gpuspec.cli import main\nmain(['check', 'specs/'])\n"
            "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout[-2000:] + result.stderr[-2000:]


def test_the_command_line_starts_without_matplotlib(root):
    # Importing the CLI (every command's wiring) must not draw in matplotlib: only `plot` and `report` do.
    code = "import sys, gpuspec.cli; print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert result.stdout.strip() == "[]", result.stdout + result.stderr


def test_only_the_drawing_module_imports_matplotlib():
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(name.split(".")[0] == "matplotlib" for name in names):
                assert module == "plot.draw", f"{module} imports matplotlib; only gpuspec.plot.draw may"


def test_each_kind_declares_the_metrics_its_rules_compute():
    # The resolver names a kind's metrics (did you mean) before any rules.py is loaded: KIND.metrics says them, and
    # MEMORY_METRICS those every workload has; they must be the rules' own.
    import importlib

    from gpuspec import kinds
    from gpuspec.kinds.kind import MEMORY_METRICS
    from gpuspec.model import observed

    assert set(MEMORY_METRICS) == set(observed.MEMORY_RULES)
    for kind in kinds.KINDS:
        rules = importlib.import_module(f"gpuspec.kinds.{kind.name}.rules").RULES
        assert set(kind.metrics) == set(rules) - set(MEMORY_METRICS), kind.name
