#!/usr/bin/env python3
"""The two commands of the Quickstart.

    python3 dev.py app          install what is missing, then start the dashboard
    python3 dev.py test         install what is missing, then run the whole test suite (at most 8 minutes
                                on 2 cores; it prints the 15 slowest tests)
    python3 dev.py test --fast  the unit tests, the golden outputs and the doctests, without the tests
                                marked slow, browser or spark (at most 90 seconds on 2 cores)
    python3 dev.py floors       the smoke tests against the lowest versions pyproject.toml allows (CI)

Other arguments go to pytest, for example ``python3 dev.py test tests/unit -k agreement`` or ``-n 1``.

Standard library only, so it runs on a machine that has nothing but Python 3.11 and pip.
Packages go into the running interpreter only when that is a virtual environment (one you
activated); otherwise into ``.venv`` next to this file, created on first use. A global
interpreter is never changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def _python() -> str:
    """The interpreter to install into and run with: the active virtual environment, else ``.venv``."""
    if sys.prefix != sys.base_prefix:
        return sys.executable
    venv = ROOT / ".venv"
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not py.exists():
        print(f"dev.py: creating {venv} (the project's own environment; your Python is left as it is)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return str(py)


def _missing(py: str, extras: tuple[str, ...]) -> list[str]:
    """Requirements not satisfied in ``py`` (checked by that interpreter itself)."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"])
    for e in extras:
        reqs += meta.get("optional-dependencies", {}).get(e, [])
    probe = r"""
import json, sys
from importlib import metadata
try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement
missing = []
for line in json.loads(sys.argv[1]):
    r = Requirement(line)
    try:
        v = metadata.version(r.name)
    except metadata.PackageNotFoundError:
        missing.append(line); continue
    if r.specifier and not r.specifier.contains(v, prereleases=True):
        missing.append(line)
try:
    import evalcore, pathlib
    if pathlib.Path(evalcore.__file__).resolve().parents[1] != pathlib.Path(sys.argv[2]):
        missing.append("evalcore (this checkout)")
except ImportError:
    missing.append("evalcore (this checkout)")
print(json.dumps(missing))
"""
    import json

    out = subprocess.run([py, "-c", probe, json.dumps(reqs), str(ROOT)], capture_output=True, text=True,
                         cwd="/")
    if out.returncode != 0:
        return ["(could not check)"]
    return json.loads(out.stdout)


def ensure(extras: tuple[str, ...] = ()) -> str:
    """Install what is missing; return the interpreter to use."""
    py = _python()
    missing = _missing(py, extras)
    if missing:
        spec = "." + (f"[{','.join(extras)}]" if extras else "")
        print(f"dev.py: installing into {py} {len(missing)} missing requirement(s): {', '.join(missing)}",
              flush=True)
        subprocess.run([py, "-m", "pip", "install", "--disable-pip-version-check", "-e", spec],
                       cwd=ROOT, check=True)
    return py


def _ensure_chromium() -> None:
    """The browser test needs Debian's chromium; install it when we can (root with apt-get)."""
    if shutil.which("chromium") or shutil.which("chromium-browser"):
        return
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        print("dev.py: installing Debian's chromium for the browser test", flush=True)
        subprocess.run(["apt-get", "update"], check=True)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "chromium"], check=True)
    else:
        print("dev.py: chromium is not installed and cannot be installed here (needs root and apt-get); "
              "the browser test will be skipped", flush=True)


def floor_constraints() -> list[str]:
    """``name==version`` for every ``>=`` lower bound of the dependencies and the test extra.

    Extras are dropped from the names (pip constraints cannot carry them); the engines extra is left out,
    as the smoke tests do not use it.
    """
    import re

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    out = []
    for line in [*meta["dependencies"], *meta["optional-dependencies"]["test"]]:
        m = re.match(r"\s*([A-Za-z0-9_.-]+)(?:\[[^]]*\])?\s*(?:[<>=!~][^,]*,\s*)*>=\s*([0-9][^,;\s]*)", line)
        if m:
            out.append(f"{m.group(1)}=={m.group(2)}")
    return out


def floors(rest: list[str]) -> int:
    """Install the lowest allowed versions into ``.venv-floors`` and run the smoke tests there.

    A floor in pyproject.toml is a claim that the code runs with that version; this checks it. Only the
    direct dependencies are held at their floors; what they need comes at the newest version pip finds
    compatible, as a user's fresh install would get.
    """
    venv = ROOT / ".venv-floors"
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    constraints = venv / "floors.txt"
    constraints.write_text("\n".join(floor_constraints()) + "\n")
    print(f"dev.py: installing the floors into {venv}: {', '.join(floor_constraints())}", flush=True)
    subprocess.run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", "-c", str(constraints),
                    "-e", ".[test]"], cwd=ROOT, check=True)
    code = subprocess.call([str(py), "-m", "pytest", "-p", "no:cacheprovider", "tests/smoke", *rest], cwd=ROOT)
    return 1 if code == 5 else code


#: What ``test --fast`` runs: the unit tests, the golden outputs of the commands on the sample and the doctests,
#: without the tests marked slow (simulations, the real datasets, processes, the app under AppTest), browser or
#: spark.
FAST = ["-m", "not slow and not browser and not spark", "tests/unit", "tests/golden", "evalcore"]


def test(rest: list[str]) -> int:
    """Run the suite (or with ``--fast`` the quick part of it) on every core; pytest's exit status, with
    "no tests collected" (5) counted as a failure."""
    fast = "--fast" in rest
    rest = [a for a in rest if a != "--fast"]
    py = ensure(("test", "engines"))  # engines: the engine tests (DuckDB, local Spark) run with the suite
    if not fast:
        _ensure_chromium()
    start = time.monotonic()
    # The suite runs on every core (pytest-xdist) unless told otherwise, and names its 15 slowest tests.
    spread = [] if any(a == "-n" or a.startswith(("-n=", "--numprocesses")) for a in rest) else ["-n", "auto"]
    # The smoke tests repeat, in short, what the suite tests in full; they run at the floors (dev.py floors).
    select = FAST if fast else ["--ignore=tests/smoke"]
    # One worker per core already fills the cores: BLAS threads on top of them oversubscribe, and OpenBLAS's idle
    # threads spin. One BLAS thread per worker (and per server or CLI process a test starts) took the suite from
    # 18.8 to 16.4 CPU-minutes. A value the caller set is kept.
    env = dict(os.environ)
    if spread:
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
    # Where no bytecode may be written next to the sources (PYTHONDONTWRITEBYTECODE), it goes to a cache outside the
    # checkout instead: without one, every worker rewrote and compiled all the test modules and evalcore's own when
    # it collected them (8 of its 13 CPU-seconds of collection), and every CLI or server process a test starts
    # compiled evalcore again. The sources stay as clean as the setting asked.
    if env.pop("PYTHONDONTWRITEBYTECODE", None):
        env.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "evalcore-pycache"))
    code = subprocess.call([py, "-m", "pytest", *spread, "--durations=15", *select, *rest], cwd=ROOT, env=env)
    took = time.monotonic() - start
    print(f"dev.py: the tests took {took:.0f} seconds" if fast else f"dev.py: the tests took {took / 60:.1f} minutes",
          flush=True)
    if code == 5:
        print("dev.py: pytest collected no tests; that is a failure, not a pass", file=sys.stderr)
        return 1
    return code


def main(argv: list[str]) -> int:
    if argv and argv[0] == "floors":
        return floors(argv[1:])
    if not argv or argv[0] not in ("app", "test"):
        print(__doc__)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "app":
        py = ensure()
        args = [py, "-m", "streamlit", "run", str(ROOT / "app.py"), *rest]
        print("dev.py: starting the dashboard; open the URL below and click 'Load the sample data'", flush=True)
        return subprocess.call(args, cwd=ROOT)
    return test(rest)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
