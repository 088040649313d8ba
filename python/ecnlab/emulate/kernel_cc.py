"""ecnlab's congestion controls in the kernel: the BPF struct_ops algorithms of
crates/ecnlab-emu/bpf, their build and their parameters from the scenario."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

from .common import EmulationError
from .namespaces import _repo_root


# Scenario `cc` -> the algorithm ecnlab registers for it (name in the kernel, BPF object
# built from crates/ecnlab-emu/bpf/ by build.sh). Registered by ecnlab-cc-loader for the
# run only: the kernel unregisters them when that process exits, however it exits.
BPF_CC = {
    "dctcp": ("ecnlab_dctcp", "ecnlab_dctcp.bpf.o"),
    "dctcp_dualq": ("ecnlab_dctcp_dq", "ecnlab_dctcp_dualq.bpf.o"),
    "dctcp_modified": ("ecnlab_dctcp_dq", "ecnlab_dctcp_dualq.bpf.o"),
}
BPF_TOOLS = "apt-get install clang libbpf-dev bpftool"


def bpf_dir(build: bool = True) -> Path:
    """Where the BPF objects and ``ecnlab-cc-loader`` are: $ECNLAB_BPF_DIR, else the
    workspace's ``target/bpf``, (re)built with ``crates/ecnlab-emu/bpf/build.sh`` when a
    source is newer. Raises EmulationError naming what is missing (clang, bpftool,
    libbpf-dev, the kernel's BTF)."""
    env = os.environ.get("ECNLAB_BPF_DIR")
    if env:
        return Path(env)
    root = _repo_root()
    if root is None:
        raise EmulationError("ecnlab's BPF congestion controls are built from the source tree "
                             "(crates/ecnlab-emu/bpf); set ECNLAB_BPF_DIR to a built copy")
    src = root / "crates" / "ecnlab-emu" / "bpf"
    out = root / "target" / "bpf"
    built = [out / "ecnlab-cc-loader", *(out / o for _, o in BPF_CC.values())]
    newest = max(f.stat().st_mtime for f in src.iterdir())
    if all(f.exists() and f.stat().st_mtime >= newest for f in built) or not build:
        return out
    p = subprocess.run(["sh", str(src / "build.sh"), str(out)], capture_output=True, text=True)
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines()
        if p.returncode == 3:
            raise EmulationError(lines[-1] if lines else f"cannot build the BPF congestion controls ({BPF_TOOLS})")
        raise EmulationError(f"cannot build the BPF congestion controls: {lines[-1] if lines else p.returncode}")
    return out


def bpf_params(name: str, doc: dict[str, Any]) -> dict[str, int]:
    """The parameters of the BPF algorithm for scenario cc ``name``, from the *resolved*
    scenario's ``[transport]`` (``units.resolve_scenario``: the defaults of its host profile,
    e.g. the initial alpha 1 under ``linux`` and 0 under ``textbook``): what the loader sets
    in the object's .rodata before loading. Raises EmulationError for a value it cannot
    carry out."""
    tr = doc["transport"]

    def shift(key: str, most: int) -> int:
        g = float(tr[key])
        k = round(-math.log2(g)) if g > 0 else -1
        if not 0 <= k <= most or abs(g - 2.0 ** -k) > 1e-12:
            raise EmulationError(f"transport.{key} = {g:g}: the kernel's {BPF_CC[name][0]} takes g = 1/2^k "
                                 f"(k = 0..{most})")
        return k

    if BPF_CC[name][0] == "ecnlab_dctcp":
        return {"shift_g": shift("dctcp_g", 10), "alpha_init": round(float(tr["dctcp_alpha_init"]) * 1024)}
    for key, want in (("dualq_alpha_bits", 20), ("dualq_per_ack_alpha", True)):
        if tr[key] != want:
            raise EmulationError(f"transport.{key} = {tr[key]}: the kernel's ecnlab_dctcp_dq has {want} only")
    return {"shift_g": shift("dualq_g", 20), "alpha_init": round(float(tr["dctcp_alpha_init"]) * (1 << 20)),
            "progressive": int(bool(tr["dualq_progressive"])), "grow_in_cwr": int(bool(tr["dualq_grow_in_cwr"]))}


def _core_defaults() -> dict[str, Any]:
    from .. import _core

    return json.loads(_core.defaults_json())


def _kernel_refusal(line: str) -> str:
    """The loader's one-line reason, without its prefix."""
    return line.strip().removeprefix("error: ") or "no answer"


