"""How the threads of a run wait: gearrt's own pool, oneDNN's regions on it
too; with GEARRT_DNNL_LIBGOMP=1 oneDNN stays on libgomp, and gearrt sets
libgomp's GOMP_SPINCOUNT to gearrt.h's GEARRT_SPINCOUNT as it is imported
(before libgomp reads its environment), unless the environment chose;
wait_policy() says what holds."""
import os
import subprocess
import sys

import gearrt

POOL = ("spin while a run is under way and 1 ms after, then sleep; sleep "
        "at once while other processes want the cores (gearrt's pool)")


def probe(**env):
    e = {k: v for k, v in os.environ.items()
         if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY",
                      "GEARRT_DNNL_LIBGOMP")}
    e.update(env)
    r = subprocess.run([sys.executable, "-c",
                        "import gearrt; print(gearrt.wait_policy())"],
                       capture_output=True, text=True, env=e)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_onednn_runs_on_gearrt_s_pool():
    assert probe() == POOL + ", oneDNN's on it too"
    assert probe(OMP_WAIT_POLICY="active") == POOL + ", oneDNN's on it too"


def test_on_libgomp_the_default_is_gearrt_h_s():
    assert gearrt._SPINCOUNT == gearrt._gearrt.SPINCOUNT
    assert probe(GEARRT_DNNL_LIBGOMP="1") == (
        POOL + "; oneDNN's threads, on libgomp, spin %s times, then sleep "
        "(GOMP_SPINCOUNT)" % gearrt._SPINCOUNT)


def test_on_libgomp_the_environment_wins():
    assert probe(GEARRT_DNNL_LIBGOMP="1", GOMP_SPINCOUNT="77") == (
        POOL + "; oneDNN's threads, on libgomp, spin 77 times, then sleep "
        "(GOMP_SPINCOUNT)")
    assert probe(GEARRT_DNNL_LIBGOMP="1", OMP_WAIT_POLICY="passive") == (
        POOL + "; oneDNN's threads, on libgomp, sleep at once "
        "(OMP_WAIT_POLICY=passive)")


def test_usable_cores():
    assert 1 <= gearrt.usable_cores() <= os.cpu_count()
