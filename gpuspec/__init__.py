"""gpuspec: check the numbers written about GPU performance against an analytical model.

The Python API (documented in gpuspec/public.py and README's "Python API"):

    import gpuspec
    report = gpuspec.check(Path("specs/"))      # or spec text, or a list of paths
    for verdict in report: ...

`import gpuspec` itself is cheap: check, explain and the types are imported from gpuspec.public when first used.
"""
from __future__ import annotations

from gpuspec.version import __version__

TYPE_CHECKING = False  # typing itself costs more to import than the rest of this file: type checkers know the name
if TYPE_CHECKING:
    from gpuspec.public import Error, Explained, Report, Sources, Verdict, check, explain

__all__ = ["Error", "Explained", "Report", "Sources", "Verdict", "__version__", "check", "explain"]
_PUBLIC = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> object:
    if name in _PUBLIC:
        from gpuspec import public  # the application's modules, on first use only

        return getattr(public, name)
    raise AttributeError(f"module 'gpuspec' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
