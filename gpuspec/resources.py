"""Where the data files that ship with gpuspec are: grammar/, templates/, catalog/."""
from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The folder `name`: inside the installed package, or at the top of a source checkout."""
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"gpuspec's {name}/ folder is missing from {_PACKAGE}")
