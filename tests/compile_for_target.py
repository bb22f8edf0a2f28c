"""Compile the Triton kernels of generated programs for a named GPU target, without a GPU, and count what the
compiler made of their global loads and stores.

Run by tests/test_compiled_kernels.py in a subprocess (so that no Triton state of the tests' own process is
touched): standard input is a JSON list of jobs, each {"program": path, "kernel": name, "signature": {arg: type},
"constexprs": {arg: value}, "divisible": [arg, ...], "num_warps": n, "targets": [90, 80]}; standard output is a JSON
list of results, each {"job": index, "target": arch, "ptx": {...counts}, "sass": {...counts} or null}.

A program is loaded as a module (its `if __name__ == "__main__"` part does not run) with `--device cpu` and
TRITON_INTERPRET=0, so that @triton.jit gives compilable functions.
"""
from __future__ import annotations

import json
import os
import re
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path


def load(path: str, cache: dict) -> dict:
    if path not in cache:
        saved = sys.argv
        sys.argv = [path, "--device", "cpu"]
        try:
            cache[path] = runpy.run_path(path, run_name="generated_program")
        finally:
            sys.argv = saved
    return cache[path]


def ptx_counts(ptx: str) -> dict:
    """Global loads and stores of the kernel's PTX by width: "v4.b32", "v2.b64", ... for vectors (element type
    last), "scalar" for one value; volatile loads, loads cached in L2 only (.cg), and ex2.approx instructions."""
    counts = {f"{op}.global.{kind}": 0 for op in ("ld", "st")
              for kind in ("v4.b32", "v2.b64", "v2.b32", "v4.b16", "scalar")}
    counts["ld.volatile"] = counts["ld.global.cg"] = 0
    for op, chain in re.findall(r"\b(ld|st)\.global((?:\.[a-z0-9]+)+)", ptx):
        parts = chain.strip(".").split(".")
        vector = next((p for p in parts if p in ("v2", "v4", "v8")), None)
        key = f"{op}.global.{vector}.{parts[-1]}" if vector else f"{op}.global.scalar"
        counts[key] = counts.get(key, 0) + 1
        if op == "ld" and "volatile" in parts:
            counts["ld.volatile"] += 1
        if op == "ld" and "cg" in parts:  # cached in L2 only, past L1
            counts["ld.global.cg"] += 1
    counts["ex2.approx"] = len(re.findall(r"\bex2\.approx", ptx))  # the special-function units' exponential
    counts["ld.volatile"] += len(re.findall(r"\bld\.volatile\.global", ptx))
    return counts


def sass_counts(cubin: bytes) -> dict | None:
    """Instructions of the kernel's SASS (NOP padding and the closing self-branch left out), and its 128-bit and
    narrower global loads and stores; None where cuobjdump is not shipped with triton."""
    import triton

    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    if not tool.exists():
        return None
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as handle:
        handle.write(cubin)
    try:
        text = subprocess.run([str(tool), "-sass", handle.name], capture_output=True, text=True, timeout=120).stdout
    finally:
        os.unlink(handle.name)
    lines = [re.sub(r"\s*/\*[0-9a-f]{4}\*/\s*", "", line).split(";")[0].strip()
             for line in text.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", line)]
    body = [line for line in lines if not line.startswith("NOP")]
    while body and re.match(r"BRA 0x[0-9a-f]+$", body[-1]):  # the branch to itself after the last EXIT
        body.pop()
    return {
        "instructions": len(body),
        "LDG.128": sum(bool(re.search(r"\bLDG\.E\.128\b", line)) for line in body),
        "STG.128": sum(bool(re.search(r"\bSTG\.E\.128\b", line)) for line in body),
        "LDG.narrow": sum(bool(re.search(r"\bLDG\.E(?:\.(?:U8|S8|U16|S16|64))?\s", line)) for line in body),
        "STG.narrow": sum(bool(re.search(r"\bSTG\.E(?:\.(?:U8|S8|U16|S16|64))?\s", line)) for line in body),
        "runtime_division": sum(bool(re.search(r"\b(?:I2F\.RP|MUFU\.RCP)\b", line)) for line in body),
    }


def main() -> None:
    os.environ["TRITON_INTERPRET"] = "0"
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    jobs = json.load(sys.stdin)
    cache: dict = {}
    found = []
    for index, job in enumerate(jobs):
        module = load(job["program"], cache)
        kernel = module[job["kernel"]]
        names = kernel.arg_names
        attrs = {(names.index(arg),): [["tt.divisibility", 16]] for arg in job.get("divisible", [])}
        signature = dict(job["signature"])
        signature.update({arg: "constexpr" for arg in job["constexprs"]})
        for arch in job["targets"]:
            source = ASTSource(kernel, signature, job["constexprs"], attrs)
            compiled = triton.compile(source, target=GPUTarget("cuda", arch, 32),
                                      options={"num_warps": job.get("num_warps", 4)})
            found.append({"job": index, "target": arch, "ptx": ptx_counts(compiled.asm["ptx"]),
                          "sass": sass_counts(compiled.asm["cubin"])})
    json.dump(found, sys.stdout)


if __name__ == "__main__":
    main()
