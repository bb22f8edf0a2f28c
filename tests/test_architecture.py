"""The shape of the code: the check path stays light, and imports flow forward through the pipeline."""
import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gpuspec"

# Each module may import only modules of an earlier (or the same) layer: the pipeline's order.
LAYERS = [
    {"cachedir", "resources", "record", "text", "diagnostics", "units", "timing", "files"},
    {"nodes", "metrics", "devices", "models", "markdown"},
    {"parse", "parse_tables", "workloads", "program", "cache"},
    {"resolve", "model", "codegen", "domains"},
    {"templating", "harness", "schema", "results", "calibrate"},
    {"sources", "measure", "mistakes"},
    {"check"},
    {"report", "pipeline"},
    {"plot"},
    {"fmt", "update", "pictures"},
    {"cli", "__main__", "__init__", "pytest_plugin"},
]


def _layer(module: str) -> int:
    head = module.split(".")[0]
    return next(i for i, layer in enumerate(LAYERS) if head in layer)


def test_the_check_path_imports_neither_torch_nor_triton(root):
    code = ("import sys; from gpuspec.cli import main; main(['check', 'specs']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'triton', 'jinja2', 'matplotlib')"
            " or m in ('gpuspec.measure', 'gpuspec.harness', 'gpuspec.templating')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr


def test_the_check_path_in_process_leaves_torch_and_triton_unimported(root, monkeypatch, capsys):
    from gpuspec.cli import main

    monkeypatch.chdir(root)
    main(["check", "specs/"])
    assert "torch" not in sys.modules and "triton" not in sys.modules


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


def test_imports_flow_forward_only():
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        here = _layer(module)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gpuspec."):
                target = node.module.removeprefix("gpuspec.")
                assert _layer(target) <= here, f"{module} imports {target}, a later stage"
