#!/usr/bin/python3
"""tests/pydeps.py - every Python module `make check` imports comes from a
Debian package the Makefile's own install step (make deps, DEPS)
installs, so the suite that passes on a developer's machine, where
packages were installed by hand, passes on a fresh one.

The imports are read from the Python module and its tests (python/) and
from the `python3 -c` lines of the C tests (tests/*.c).  Each module that
is neither the standard library's nor the project's own is looked up
with the interpreter the tests use and `dpkg -S` names the package that
ships it; that package must be in DEPS.  Prints one line per module
that fails and exits 1; else one summary line.

usage: tests/pydeps.py MAKEFILE PYTHON"""
import ast
import importlib.util
import pathlib
import re
import subprocess
import sys

makefile, python = sys.argv[1], sys.argv[2]
root = pathlib.Path(makefile).resolve().parent
deps = set(re.findall(r"^\s*([a-z0-9][a-z0-9.+-]*):/", open(makefile).read(),
                      re.M))

imports = {}  # module -> first file importing it
local = {p.stem for p in root.glob("python/**/*.py")} | {"gearrt"}
for p in sorted(root.glob("python/**/*.py")):
    for n in ast.walk(ast.parse(p.read_text())):
        names = ([a.name for a in n.names] if isinstance(n, ast.Import)
                 else [n.module] if isinstance(n, ast.ImportFrom) and
                 n.module and not n.level else [])
        for m in names:
            imports.setdefault(m.split(".")[0], str(p.relative_to(root)))
for p in sorted(root.glob("tests/*.c")):
    for m in re.findall(r'python3 -c \\"import (\w+)', p.read_text()):
        imports.setdefault(m, str(p.relative_to(root)))

# Where the tests' interpreter finds each module: its package's file.
probe = ("import importlib.util, sys\n"
         "for m in sys.argv[1:]:\n"
         "    s = importlib.util.find_spec(m)\n"
         "    print(m, s.origin if s and s.origin else '-')\n")
third = sorted(m for m in imports
               if m not in sys.stdlib_module_names and m not in local)
out = subprocess.run([python, "-c", probe, *third], capture_output=True,
                     text=True, check=True).stdout.split("\n")
bad = 0
for line in filter(None, out):
    m, origin = line.split(" ", 1)
    if origin == "-":
        print("pydeps: %s (imported by %s) is not installed: add its "
              "Debian package to the Makefile's DEPS" % (m, imports[m]))
        bad += 1
        continue
    r = subprocess.run(["dpkg", "-S", origin], capture_output=True,
                       text=True)
    pkg = r.stdout.split(":")[0] if r.returncode == 0 else None
    if pkg not in deps:
        print("pydeps: %s (imported by %s, from %s) comes from %s, which "
              "the Makefile's DEPS does not install" %
              (m, imports[m], origin, pkg or "no Debian package"))
        bad += 1
if bad:
    sys.exit(1)
print("pydeps: %d modules the tests import, each from a package in DEPS "
      "(%s)" % (len(third), ", ".join(third)))
