"""Nothing gpuspec reads from a cache can run code or change a verdict, and nothing it writes goes through a link.

Each test plants files where gpuspec looks (or used to look) and runs gpuspec in a child process whose TMPDIR,
XDG_CACHE_HOME and HOME are folders of the test's own. A planted pickle makes a folder when it is unpickled; a
planted catalog says the H100's memory bandwidth is 1 TB/s, which would make the false claim below pass.
"""
from __future__ import annotations

import json
import marshal
import os
import pickle
import resource
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from gpuspec import cache, cachedir, parse, parse_tables, resources
from gpuspec.api import compile_text
from gpuspec.diagnostics import SpecError
from gpuspec.text import SpecText

ROOT = Path(__file__).resolve().parent.parent
FALSE_CLAIM = "device H100-SXM\ndevice.hbm_bandwidth ≈ 1 TB/s\n"  # 3.35 TB/s in the catalog: fails
SPEC = ("device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is memory-bound, ≈ 20 µs, 62 waves\n"
        "step = decode llama2-7b, batch 1, context 0 is memory-bound\n")  # passes; reads both catalogs
OTHER_UID = 12345


class Payload:
    """Unpickling this makes the folder `marker`: proof that code ran."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return os.mkdir, (self.marker,)


class Place:
    """A test's folders: the child's TMPDIR, XDG_CACHE_HOME and HOME, a spec, a victim file and a marker."""

    def __init__(self, base: Path):
        self.base = base
        self.tmp, self.xdg, self.home = base / "tmp", base / "xdg", base / "home"
        for folder in (self.tmp, self.xdg, self.home):
            folder.mkdir(mode=0o700)
        self.folder = self.xdg / "gpuspec"  # the cache folder gpuspec makes
        self.spec = base / "claim.gpu"
        self.spec.write_text(FALSE_CLAIM, encoding="utf-8")
        self.victim = base / "victim.txt"
        self.victim.write_text("precious\n", encoding="utf-8")
        self.marker = base / "code-ran"

    def env(self, **extra: str) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("GPUSPEC_NO_CACHE", "XDG_CACHE_HOME")}
        env.update({"TMPDIR": str(self.tmp), "XDG_CACHE_HOME": str(self.xdg), "HOME": str(self.home), **extra})
        return env

    def gpuspec(self, *args: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "gpuspec", *args], capture_output=True, text=True,
                              env=self.env(**extra), cwd=self.base, timeout=120)

    def check(self, **extra: str) -> subprocess.CompletedProcess:
        """`gpuspec check --format json` of the false claim; asserts that nothing ran and nothing crashed."""
        result = self.gpuspec("check", "--format", "json", str(self.spec), **extra)
        assert "Traceback" not in result.stderr, result.stderr
        assert not self.marker.exists(), "a planted pickle ran"
        assert self.victim.read_text(encoding="utf-8") == "precious\n", "a file outside was overwritten"
        return result

    def bandwidth(self, **extra: str) -> float:
        """The H100 bandwidth the false claim was checked against (honest: 3.35e12), and it must fail then."""
        result = self.check(**extra)
        [verdict] = json.loads(result.stdout)["results"]
        assert (verdict["status"] == "fail") == (result.returncode == 1)
        return verdict["actual"]

    def entries(self, kind: str) -> list[Path]:
        return sorted(self.folder.glob(f"{kind}-*.json"))

    def devices_entry(self) -> Path:
        # the device catalog's entry (published.toml's, read for a failure's realistic value, names H100-SXM too)
        [entry] = [e for e in self.entries("catalog") if "H100-SXM" in (text := e.read_text(encoding="utf-8"))
                   and '"measurement"' not in text]
        return entry


def lying_catalog() -> dict:
    data = tomllib.loads((resources.data_dir("catalog") / "devices.toml").read_text(encoding="utf-8"))
    data["devices"]["H100-SXM"]["hbm_bandwidth"]["value"] = "1 TB/s"
    return data


def snapshot(folder: Path) -> dict:
    """Every name under `folder` with what it is: a link's target, a file's bytes, a folder."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[str(path)] = ("link", os.readlink(path))
        elif path.is_file():
            found[str(path)] = ("file", path.read_bytes())
        else:
            found[str(path)] = ("folder", None)
    return found


HONEST = 3.35e12


# --- the compiled grammar: Lark's cache file in the temp folder -----------------------------------------------


@pytest.fixture(scope="module")
def lark_cache_name(tmp_path_factory) -> str:
    """The name under which Lark, built as gpuspec built it before, kept (and read back) its compiled grammar:
    $TMPDIR/.lark_cache_<user>_<hash>_<python>.tmp, the same on every machine."""
    folder = tmp_path_factory.mktemp("lark-name")
    run_old_way(folder)
    [name] = [path.name for path in folder.iterdir() if path.name.startswith(".lark_cache_")]
    return name


def run_old_way(tmp: Path, **env) -> subprocess.CompletedProcess:
    """Build the parser as gpuspec did before, with Lark's own file cache in `tmp`."""
    code = ("from lark import Lark; from gpuspec import parse; "
            "Lark(parse.grammar_text(), parser='lalr', postlex=parse._indenter(), maybe_placeholders=True, "
            "cache=True)")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TMPDIR": str(tmp), **env})


def plant_lark_pickle(place: Place, name: str) -> Path:
    # Lark checks a first line (the grammar's hash: anyone can compute it) and then unpickles the rest.
    planted = place.tmp / name
    run_old_way(place.tmp)
    first_line = planted.read_bytes().split(b"\n", 1)[0]
    planted.write_bytes(first_line + b"\n" + pickle.dumps(Payload(place.marker)))
    return planted


def test_a_pickle_at_larks_cache_name_is_live_for_the_old_way_and_never_read_now(tmp_path, lark_cache_name):
    place = Place(tmp_path)
    planted = plant_lark_pickle(place, lark_cache_name)
    before = snapshot(place.tmp)
    run_old_way(place.tmp)
    assert place.marker.exists()  # the plant works: building the parser with Lark's file cache runs it
    place.marker.rmdir()
    planted.write_bytes(before[str(planted)][1])

    for extra in ({}, {"GPUSPEC_NO_CACHE": "1"}):
        assert place.bandwidth(**extra) == HONEST
    fmt = place.gpuspec("fmt", "--check", str(place.spec))
    assert fmt.returncode == 0 and "Traceback" not in fmt.stderr, fmt.stderr
    plugin = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                             str(place.spec)], capture_output=True, text=True, env=place.env(), cwd=place.base,
                            timeout=120)
    assert "1 failed" in plugin.stdout, plugin.stdout + plugin.stderr  # the plugin checked it, and it fails
    assert not place.marker.exists()
    assert snapshot(place.tmp) == before  # read nothing there, wrote nothing there


# --- the catalog: the marshal file in the temp folder -----------------------------------------------------------


def test_a_catalog_planted_at_the_old_marshal_names_changes_nothing(tmp_path, lark_cache_name):
    place = Place(tmp_path)
    toml = resources.data_dir("catalog") / "devices.toml"
    info = toml.stat()
    name = f"gpuspec-{os.getuid()}-devices-{info.st_size}-{info.st_mtime_ns}"
    (place.tmp / f"{name}.marshal").write_bytes(marshal.dumps(lying_catalog()))
    # ... and links at the names the old code wrote through: its temp files, named by pid (this one and the next)
    for pid in range(os.getpid(), os.getpid() + 200):
        (place.tmp / f"{name}.{pid}.tmp").symlink_to(place.victim)
    (place.tmp / lark_cache_name).symlink_to(place.victim)
    before = snapshot(place.tmp)
    assert place.bandwidth() == HONEST
    assert place.bandwidth(GPUSPEC_NO_CACHE="1") == HONEST
    assert snapshot(place.tmp) == before


# --- the catalog and parse caches in the cache folder ---------------------------------------------------------


def test_no_cache_means_no_cache_at_all_the_catalogs_too(tmp_path):
    place = Place(tmp_path)
    assert place.bandwidth() == HONEST  # fills the cache folder
    place.devices_entry().write_text(json.dumps(lying_catalog()), encoding="utf-8")
    assert place.bandwidth() == 1e12  # the user's own entry is read while the cache is on...
    before = snapshot(place.folder)
    assert place.bandwidth(GPUSPEC_NO_CACHE="1") == HONEST  # ...and not with it off: the catalog parsed afresh
    assert snapshot(place.folder) == before  # nothing written there either
    unmade = tmp_path / "unmade"
    unmade.mkdir(mode=0o700)
    assert place.bandwidth(GPUSPEC_NO_CACHE="1", XDG_CACHE_HOME=str(unmade)) == HONEST
    assert list(unmade.iterdir()) == []  # no folder made, no entry stored


def test_a_lying_catalog_entry_is_read_only_from_the_users_own_file_in_the_users_own_folder(tmp_path):
    place = Place(tmp_path)
    assert place.bandwidth() == HONEST  # fills the cache folder
    entry = place.devices_entry()
    entry.write_text(json.dumps(lying_catalog()), encoding="utf-8")
    # Where the plant is: gpuspec reads this entry (only this user could have written it there).
    assert place.bandwidth() == 1e12

    lie = tmp_path / "lie.json"
    shutil.copyfile(entry, lie)
    copy = tmp_path / "copied"
    shutil.copytree(place.xdg, copy, symlinks=True)  # a committed or restored folder: the same names, elsewhere
    os.chmod(copy / "gpuspec", 0o700)
    assert place.bandwidth(XDG_CACHE_HOME=str(copy)) == HONEST

    entry.unlink()
    entry.symlink_to(lie)  # a link to the lie, even one this user owns
    assert place.bandwidth() == HONEST
    assert entry.is_file() and not entry.is_symlink() and lie.read_text() == json.dumps(lying_catalog())

    shutil.copyfile(lie, entry)
    os.link(entry, tmp_path / "second-name.json")  # a hard link: the file has another name somewhere
    assert place.bandwidth() == HONEST
    os.unlink(tmp_path / "second-name.json")

    shutil.copyfile(lie, place.devices_entry())
    os.chmod(place.folder, 0o755)  # a folder others may enter (a git checkout makes them so)
    assert place.bandwidth() == HONEST
    os.chmod(place.folder, 0o777)
    assert place.bandwidth() == HONEST
    os.chmod(place.folder, 0o700)
    assert place.bandwidth() == 1e12  # still there, still read: the checks above are what refused it


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give files away")
def test_a_cache_folder_or_entry_another_user_owns_is_not_read_nor_written(tmp_path):
    place = Place(tmp_path)
    assert place.bandwidth() == HONEST
    entry = place.devices_entry()
    entry.write_text(json.dumps(lying_catalog()), encoding="utf-8")
    os.chown(entry, OTHER_UID, OTHER_UID)  # the entry is another user's
    assert place.bandwidth() == HONEST
    assert place.devices_entry().stat().st_uid == os.geteuid()  # replaced by this user's own

    place.devices_entry().write_text(json.dumps(lying_catalog()), encoding="utf-8")
    os.chown(place.folder, OTHER_UID, OTHER_UID)  # the folder is another user's, mode 0700 as gpuspec makes it
    for entry in place.folder.iterdir():
        os.chown(entry, OTHER_UID, OTHER_UID)
    before = snapshot(place.folder)
    assert place.bandwidth() == HONEST
    assert snapshot(place.folder) == before  # nothing written there


def test_a_pickle_committed_at_the_parse_caches_names_never_runs(tmp_path):
    place = Place(tmp_path)
    place.spec.write_text(SPEC, encoding="utf-8")
    assert place.check().returncode == 0
    [entry] = place.entries("spec")
    honest = entry.read_bytes()
    entry.write_bytes(pickle.dumps(Payload(place.marker)))
    assert place.check().returncode == 0
    assert entry.read_bytes() == honest  # parsed afresh and stored again

    # A repository that ships its own cache folder, as XDG_CACHE_HOME=$PWD/.cache in CI would find it.
    repo = tmp_path / "repo"
    committed = repo / ".cache" / "gpuspec"
    committed.mkdir(parents=True)
    for name in (entry.name, entry.name.removeprefix("spec-").removesuffix(".json")):
        (committed / name).write_bytes(pickle.dumps(Payload(place.marker)))
    for mode in (0o755, 0o700):
        os.chmod(committed, mode)
        assert place.check(XDG_CACHE_HOME=str(repo / ".cache")).returncode == 0


def test_a_link_planted_at_every_name_gpuspec_writes_is_replaced_not_followed(tmp_path):
    place = Place(tmp_path)
    place.spec.write_text(SPEC, encoding="utf-8")
    assert place.check().returncode == 0
    names = place.entries("spec") + place.entries("catalog")
    assert len(names) == 3  # the spec, the devices and the models catalogs
    for entry in names:
        entry.unlink()
        entry.symlink_to(place.victim)
    assert place.check().returncode == 0  # the victim is unchanged (checked there)
    assert all(entry.is_file() and not entry.is_symlink() for entry in names)

    shutil.rmtree(place.folder)
    victim_folder = tmp_path / "victim-folder"
    victim_folder.mkdir(mode=0o700)
    place.folder.symlink_to(victim_folder)  # the cache folder itself a link, to a folder this user owns
    assert place.check().returncode == 0
    assert list(victim_folder.iterdir()) == []
    place.folder.unlink()
    place.folder.symlink_to(place.victim)  # ... or to a file
    assert place.check().returncode == 0


def test_a_fifo_or_a_folder_at_an_entry_name_does_not_stop_gpuspec(tmp_path):
    place = Place(tmp_path)
    place.spec.write_text(SPEC, encoding="utf-8")
    assert place.check().returncode == 0
    [spec_entry] = place.entries("spec")
    spec_entry.unlink()
    os.mkfifo(spec_entry)  # opening a FIFO to read waits for a writer
    devices = place.devices_entry()
    devices.unlink()
    devices.mkdir()
    assert place.check().returncode == 0  # within the timeout


def test_the_temp_file_is_made_new_never_opened_through_a_link(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    source = SpecText("t.gpu", SPEC)
    spec = parse.parse(source)
    monkeypatch.setattr(os, "urandom", lambda n: bytes(n))  # the temp file's name, foreseen
    cache.store(source, spec)
    [entry] = (tmp_path / "xdg" / "gpuspec").glob("spec-*.json")
    entry.unlink()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    partial = entry.parent / f".{entry.name}.{bytes(8).hex()}.tmp"
    partial.symlink_to(victim)
    cache.store(source, spec)
    assert victim.read_text() == "precious\n" and partial.is_symlink()
    assert not entry.exists()  # not stored this time; parsed again next time
    assert len(compile_text(source).claims) == 4


# --- entries that are not what gpuspec writes ------------------------------------------------------------------


def wrong_entries(good: list) -> dict[str, bytes]:
    """Entries that decode to JSON but not to the nodes of a spec (or do not decode), by what is wrong."""

    def replace_first(value, match, new):
        if isinstance(value, list):
            if value and match(value):
                return new(value), True
            for i, item in enumerate(value):
                changed, done = replace_first(item, match, new)
                if done:
                    return value[:i] + [changed] + value[i + 1:], True
        return value, False

    def mutated(match, new) -> bytes:
        value, done = replace_first(good, match, new)
        assert done
        return json.dumps(value).encode()

    is_number = lambda v: v[0] == "Number"  # noqa: E731
    is_block = lambda v: v[0] == "Block"  # noqa: E731
    return {
        "empty": b"",
        "null": b"null",
        "a list": b"[]",
        "an object": b'{"Spec": []}',
        "a number out of range": b"1e999",
        "NaN": b'["Spec", NaN, []]',
        "not UTF-8": b'["Spec", "\xff\xfe"]',
        "nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
        "too few fields": json.dumps(["Spec", good[1]]).encode(),
        "too many fields": json.dumps(good + [[]]).encode(),
        "another file's spec": json.dumps(["Spec", "other.gpu", good[2]]).encode(),
        "a class that is not a node": json.dumps(["Spec", good[1], [["os.system", "touch /tmp/x"]]]).encode(),
        "a class where another is due": json.dumps(["Spec", good[1], [["Spec", good[1], []]]]).encode(),
        "a number that is a number": mutated(is_number, lambda v: ["Number", 62, v[2]]),
        "a span of floats": mutated(is_number, lambda v: ["Number", v[1], [float(n) for n in v[2]]]),
        "a span of booleans": mutated(is_number, lambda v: ["Number", v[1], [True] * 6]),
        "a span of five": mutated(is_number, lambda v: ["Number", v[1], v[2][:5]]),
        "a claim list holding a spec": mutated(is_block, lambda v: ["Block", [["Spec", good[1], []]], v[2]]),
        "a string where a tuple is due": mutated(is_block, lambda v: ["Block", "items", v[2]]),
    }


def test_an_entry_of_the_wrong_shape_is_parsed_afresh(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    source = SpecText("w.gpu", SPEC)
    honest = [(c.metric, c.expected.written) for c in compile_text(source).claims]
    [entry] = (tmp_path / "gpuspec").glob("spec-*.json")
    good = json.loads(entry.read_bytes())
    assert cache.lookup(source) is not None
    for what, data in wrong_entries(good).items():
        entry.write_bytes(data)
        assert cache.lookup(source) is None, what
        assert [(c.metric, c.expected.written) for c in compile_text(source).claims] == honest, what
        assert cache.lookup(source) is not None, what  # stored again, whole

    with open(entry, "r+b") as handle:  # larger than any entry gpuspec writes: not even read
        handle.truncate(cachedir.MAX_ENTRY_BYTES + 1)
    assert cache.lookup(source) is None


def test_a_wrong_entry_in_the_child_process_gives_the_honest_verdict(tmp_path):
    place = Place(tmp_path)
    place.spec.write_text(SPEC, encoding="utf-8")
    honest = place.check()
    assert honest.returncode == 0
    [entry] = place.entries("spec")
    good = json.loads(entry.read_bytes())
    for what in ("a class that is not a node", "nested 100,000 deep", "a span of floats"):
        entry.write_bytes(wrong_entries(good)[what])
        result = place.check()
        assert (result.returncode, result.stdout) == (honest.returncode, honest.stdout), what


def test_a_catalog_entry_of_the_wrong_shape_is_parsed_afresh(tmp_path):
    place = Place(tmp_path)
    assert place.bandwidth() == HONEST
    entry = place.devices_entry()
    lie = lying_catalog()
    wrong = {
        "a list": json.dumps([lie]),
        "a string": json.dumps("1 TB/s"),
        "a null": json.dumps({**lie, "devices": None}),
        "a null further in": json.dumps({**lie, "extra": [1, None]}),
        "NaN": json.dumps(lie).replace('"1 TB/s"', "NaN", 1),
        "nested 40 deep": json.dumps(lie)[:-1] + ', "extra": ' + "[" * 40 + "]" * 40 + "}",
    }
    for what, text in wrong.items():
        entry.write_text(text, encoding="utf-8")
        assert place.bandwidth() == HONEST, what


def test_a_published_profile_entry_is_read_only_whole_and_in_range(tmp_path, monkeypatch):
    # a profile built with a source left out (the accuracy benchmark's) is kept in the cache folder: what is read
    # back is this user's own entry, and only whole and in range
    from gpuspec import published

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    honest = published.data("H100-SXM", exclude=("torchao",))
    [entry] = sorted((tmp_path / "gpuspec").glob("published-*.json"))
    good = json.loads(entry.read_text(encoding="utf-8"))
    assert good == json.loads(json.dumps(honest))
    entry.write_text(json.dumps({**good, "facts": {**good["facts"], "hbm_bandwidth": 1e16}}), encoding="utf-8")
    assert published.data("H100-SXM", exclude=("torchao",))["facts"]["hbm_bandwidth"] == 1e16  # this user's own
    wrong = {
        "a NaN": json.dumps(good).replace(str(good["facts"]["hbm_bandwidth"]), "NaN", 1),
        "a fact out of range": json.dumps({**good, "facts": {**good["facts"], "hbm_bandwidth": 1e30}}),
        "a fact gpuspec does not know": json.dumps({**good, "facts": {**good["facts"], "warp_drive": 1.0}}),
        "a string for a number": json.dumps({**good, "facts": {**good["facts"], "hbm_bandwidth": "3e12"}}),
        "no derivations": json.dumps({k: v for k, v in good.items() if k != "derivations"}),
        "a list": json.dumps([good]),
        "not JSON": "{",
    }
    for what, text in wrong.items():
        entry.write_text(text, encoding="utf-8")
        assert published.data("H100-SXM", exclude=("torchao",)) == json.loads(json.dumps(honest)), what


def test_a_shipped_profile_is_used_only_whole_in_range_and_of_the_catalogs_there_are(tmp_path, monkeypatch):
    import lzma

    from gpuspec import published

    built = json.loads(lzma.decompress(published.shipped_bytes("H200")))
    assert published._shipped("H200") == built["profile"]  # the one in the package is current

    def shipped(payload) -> dict | None:
        path = tmp_path / "H200.json.xz"
        path.write_bytes(payload if isinstance(payload, bytes) else lzma.compress(json.dumps(payload).encode()))
        monkeypatch.setattr(published, "shipped_path", lambda device: path)
        return published._shipped("H200")

    lying = {**built, "profile": {**built["profile"], "facts": {**built["profile"]["facts"], "hbm_bandwidth": 1e16}}}
    assert shipped(lying)["facts"]["hbm_bandwidth"] == 1e16  # what the package holds is gpuspec's own
    for what, payload in {
        "built from other catalogs": {**built, "inputs": "0" * 64},
        "a fact out of range": {**built, "profile": {**built["profile"], "facts": {"hbm_bandwidth": 1e30}}},
        "not xz": b"{}",
        "truncated": lzma.compress(json.dumps(built).encode())[:-40],
        "a bomb": lzma.compress(b" " * (published._SHIPPED_LARGEST + 1)),
        "NaN": lzma.compress(json.dumps(built).replace('"inputs"', '"x": NaN, "inputs"', 1).encode()),
    }.items():
        assert shipped(payload) is None, what


# --- where the folder is, and a full disk ----------------------------------------------------------------------


def test_without_home_no_folder_named_tilde_is_made(tmp_path, monkeypatch):
    import pwd

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_such_user(uid):
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", no_such_user)  # as in a container run with an unknown uid
    assert os.path.expanduser("~") == "~"
    assert cachedir.location() is None
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # not absolute: ignored, as the XDG rules say
    assert cachedir.location() is None
    source = SpecText("h.gpu", SPEC)
    assert len(compile_text(source).claims) == 4
    cachedir.store("catalog", b"k", {"a": 1})
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_leaves_no_temp_or_empty_files(tmp_path):
    place = Place(tmp_path)
    place.spec.write_text(SPEC, encoding="utf-8")

    def full_disk():  # every write to a file fails (EFBIG), as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    env = place.env()
    result = subprocess.run([sys.executable, "-m", "gpuspec", "check", str(place.spec)], capture_output=True,
                            text=True, env=env, cwd=place.base, timeout=120, preexec_fn=full_disk)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stdout + result.stderr
    left = [path for path in place.xdg.rglob("*") if path.is_file()]
    assert left == [], left  # neither temp files nor empty entries
    assert place.folder.is_dir()  # the folder was made; only the writes failed


# --- the parser tables ---------------------------------------------------------------------------------------


def test_the_parser_tables_are_what_the_grammar_gives_under_any_hash_seed():
    for seed in ("0", "4242"):
        result = subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_parser_tables.py"), "--check"],
                                capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed},
                                timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_parser_comes_from_the_tables_and_from_the_grammar_when_they_do_not_fit(monkeypatch):
    text = (ROOT / "specs" / "matmul.gpu").read_text(encoding="utf-8")
    wrong = "device H100-SXM\nx = bf16[4096\ny = x *\n"

    def parsed() -> tuple:
        try:
            parse.parse(SpecText("w.gpu", wrong))
        except SpecError as error:
            return repr(parse.parse(SpecText("m.gpu", text))), [repr(d) for d in error.diagnostics]
        raise AssertionError("no syntax error")

    def fresh() -> None:
        parse._runtime.cache_clear()
        parse._lark.cache_clear()

    fresh()
    try:
        expected = parsed()
        assert parse._runtime().tables is parse_tables.RUNTIME  # run from parse_tables, not made from Lark's
        assert parse._lark().parser.source_path == "<deserialized>"  # loaded from parse_tables, not built
        for name, value in (("GRAMMAR_SHA256", "0" * 64), ("LARK_VERSION", "0.0.0")):
            with monkeypatch.context() as patch:
                patch.setattr(parse_tables, name, value)
                fresh()
                assert parsed() == expected, name
                assert parse._runtime().tables is not parse_tables.RUNTIME, name  # made from the grammar
                assert parse._lark().parser.source_path != "<deserialized>", name  # built from the grammar
        with monkeypatch.context() as patch:
            patch.setattr(parse_tables, "lark_tables", lambda: ({}, {}))
            fresh()
            assert parsed() == expected
            assert parse._lark().parser.source_path != "<deserialized>"  # tables Lark cannot load: built
    finally:
        fresh()


def test_the_package_neither_pickles_nor_marshals_nor_asks_lark_to():
    for path in (ROOT / "gpuspec").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for word in ("import pickle", "import marshal", "pickle.load", "marshal.load", "cache=True"):
            assert word not in text, f"{path.relative_to(ROOT)}: {word}"


def test_entries_are_private_to_the_user(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    compile_text(SpecText("p.gpu", SPEC))
    folder = tmp_path / "gpuspec"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for entry in folder.iterdir():
        assert stat.S_IMODE(entry.stat().st_mode) & 0o077 == 0, entry
