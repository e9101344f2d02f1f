"""The embedded server's pgvector library must run on the CPU it is installed on."""

from __future__ import annotations

from pathlib import Path

import psycopg

from glyphoxa_pipelines.db import portable_pgvector as pv

AVX512_BUILD = next(iter(pv.AVX512_ONLY_LIBRARY_SHA256))
CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
flags\t\t: fpu vme sse sse2 avx avx2 fma {extra}
bogomips\t: 4000.00

processor\t: 1
flags\t\t: fpu vme sse sse2 avx avx2 fma {extra}
"""


def test_cpu_flags_are_read_from_cpuinfo() -> None:
    flags = pv.cpu_flags(CPUINFO.format(extra="avx512f avx512bw"))
    assert {"avx2", "avx512f", "avx512bw"} <= flags
    assert pv.cpu_flags("processor : 0\n") == frozenset()


def test_the_avx512_build_is_refused_only_where_it_cannot_run() -> None:
    avx2_only = pv.cpu_flags(CPUINFO.format(extra=""))
    with_avx512 = pv.cpu_flags(CPUINFO.format(extra="avx512f"))
    library = Path("/x/vector.so")

    message = pv.problem(avx2_only, library, AVX512_BUILD)
    assert message is not None and "AVX-512" in message and pv.FIX_COMMAND in message
    assert pv.problem(with_avx512, library, AVX512_BUILD) is None
    # The portable build, or a library we do not know, runs anywhere.
    assert pv.problem(avx2_only, library, pv.PORTABLE_LIBRARY_SHA256) is None
    assert pv.problem(avx2_only, library, "0" * 64) is None
    # A machine whose flags cannot be read is never blocked.
    assert pv.problem(None, library, AVX512_BUILD) is None
    assert pv.problem(frozenset(), library, AVX512_BUILD) is None


def test_the_installed_library_passes_the_start_check_and_computes_distances(
    database_url: str,
) -> None:
    """What `make install` left in place runs here: a distance through pgvector's C code."""
    assert pv.embedded_problem() is None
    with psycopg.connect(database_url) as conn:
        distance = conn.execute(
            "SELECT '[1,0,0]'::vector <=> '[0,1,0]'::vector"
        ).fetchone()
    assert distance is not None and abs(distance[0] - 1.0) < 1e-6
