"""Packaging: the console script runs from any folder and finds the grammar and catalog it ships with."""
import shutil
import subprocess
import sys
from pathlib import Path

from gpuspec.resources import data_dir


def test_grammar_catalog_and_templates_are_found():
    assert (data_dir("grammar") / "gpuspec.lark").is_file()
    assert (data_dir("catalog") / "devices.toml").is_file()
    assert data_dir("templates").is_dir()


def test_console_script_checks_the_bundled_specs_from_another_folder(root, tmp_path):
    script = shutil.which("gpuspec", path=str(Path(sys.executable).parent)) or shutil.which("gpuspec")
    assert script, "the gpuspec console script is not installed"
    result = subprocess.run([script, "check", str(root / "specs")], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].endswith(" passed, 0 failed")
