"""Write gpuspec/catalog/published/<device>.json.xz: each catalog device's published profile, built from
gpuspec/catalog/published.toml as gpuspec.published builds it, with a hash of the catalogs it was built from.

Run: python scripts/generate_published_profiles.py           after changing published.toml, the catalogs or the
                                                             rules a profile is fitted by
     python scripts/generate_published_profiles.py --check   exit 1 if a shipped profile is not what this builds

gpuspec uses a shipped profile only while the catalogs hash as they did when it was built; tests/
test_published_profiles.py checks that every one is what the code builds now (by content: xz's bytes may differ
between library versions).
"""
from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpuspec import published  # noqa: E402
from gpuspec.files import write_atomically  # noqa: E402


def stale() -> list[str]:
    """The devices whose shipped profile is missing or not what the code builds now."""
    found = []
    for device in published.measurable():
        path = published.shipped_path(device)
        try:
            shipped = json.loads(lzma.decompress(path.read_bytes()))
        except (OSError, lzma.LZMAError, ValueError):
            found.append(device)
            continue
        if shipped != json.loads(lzma.decompress(published.shipped_bytes(device))):
            found.append(device)
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a profile is stale")
    args = parser.parse_args(argv)
    if args.check:
        found = stale()
        for device in found:
            print(f"stale: {published.shipped_path(device).relative_to(ROOT)}")
        return 1 if found else 0
    folder = published.shipped_path("x").parent
    folder.mkdir(exist_ok=True)
    wanted = {published.shipped_path(device).name for device in published.measurable()}
    for old in folder.glob("*.json.xz"):
        if old.name not in wanted:
            old.unlink()
    for device in published.measurable():
        write_atomically(published.shipped_path(device), published.shipped_bytes(device))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
