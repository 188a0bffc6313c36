"""setup.py - builds gearrt for pip (pip install --no-build-isolation ./python).

The extension links libgearrt statically from the repository's own build:
the module runs `make build/libgearrt_pic.a` in the repository root (the
folder above this one) first, so the result needs no library path; the
version is the Makefile's.  The Makefile's `make python` builds the same
module without pip.
"""
import os
import re
import subprocess

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ARCHIVE = os.path.join(ROOT, "build", "libgearrt_pic.a")


def version():
    with open(os.path.join(ROOT, "Makefile")) as f:
        return re.search(r"^VERSION := (\S+)", f.read(), re.M).group(1)


class BuildWithLibrary(build_ext):
    """Builds libgearrt's PIC archive with make before the extension."""

    def run(self):
        subprocess.check_call(["make", "-C", ROOT, "build/libgearrt_pic.a"])
        build_ext.run(self)


setup(
    version=version(),
    packages=["gearrt"],
    package_data={"gearrt": ["py.typed", "*.pyi"]},
    exclude_package_data={"gearrt": ["*.c"]},
    ext_modules=[Extension(
        "gearrt._gearrt", ["gearrt/_gearrt.c"],
        include_dirs=[ROOT, numpy.get_include()],
        define_macros=[("GEARC_VERSION", '"%s"' % version())],
        extra_compile_args=["-std=c11", "-fvisibility=hidden"],
        extra_objects=[ARCHIVE],
        extra_link_args=["-Wl,--exclude-libs,ALL"],
        libraries=["protobuf-c", "dnnl", "pthread", "m"],
        depends=[ARCHIVE, os.path.join(ROOT, "runtime", "gearrt.h")],
    )],
    cmdclass={"build_ext": BuildWithLibrary},
)
