"""How the threads of a run wait: gearrt sets libgomp's GOMP_SPINCOUNT to
gearrt.h's GEARRT_SPINCOUNT as it is imported (before libgomp reads its
environment), unless the environment chose; wait_policy() says what
libgomp read."""
import os
import subprocess
import sys

import gearrt


def probe(**env):
    e = {k: v for k, v in os.environ.items()
         if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    e.update(env)
    r = subprocess.run([sys.executable, "-c",
                        "import gearrt; print(gearrt.wait_policy())"],
                       capture_output=True, text=True, env=e)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_the_default_is_gearrt_h_s():
    assert gearrt._SPINCOUNT == gearrt._gearrt.SPINCOUNT
    assert probe() == ("spin %s times, then sleep (GOMP_SPINCOUNT)"
                       % gearrt._SPINCOUNT)


def test_the_environment_wins():
    assert probe(GOMP_SPINCOUNT="77") == \
        "spin 77 times, then sleep (GOMP_SPINCOUNT)"
    assert probe(OMP_WAIT_POLICY="passive") == \
        "sleep at once (OMP_WAIT_POLICY=passive)"


def test_usable_cores():
    assert 1 <= gearrt.usable_cores() <= os.cpu_count()
