"""How long a move of the Win rates page's prior-data-ratio slider takes, end to end.

Runs the page under Streamlit's AppTest (the whole script, as a browser rerun does) on the
sample data and on PandaLM, and times:

* the first open of the page in a fresh process (imports, loading numba's cached Dawid-Skene
  kernel and nutpie, the first BWRS and DS fits);
* each move of the slider to a ratio not seen before (one BWRS and one DS fit), and
* each move back to a ratio already seen (the issue's rule: nothing is refitted).

The issue's goals: a new ratio answers within the compiled-fit goal (2 s), the first fit of
a session within 20 s, and a cached ratio refits nothing (we count fits by wrapping
``evalcore.pairwise.winrate.dawid_skene``).

    python benchmarks/bench_winrate_page.py [--pandalm PATH]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RATIOS = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pandalm", default=str(ROOT.parent / "shared" / "datasets" / "pandalm"),
                    help="folder of the PandaLM files (skipped when absent)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    os.environ["EVALCORE_WORKSPACE"] = str(Path(tempfile.mkdtemp()) / "ws.duckdb")

    t0 = time.perf_counter()
    from streamlit.testing.v1 import AppTest

    from evalcore.pairwise import winrate
    from evalcore.pairwise.dawid_skene import dawid_skene
    from evalcore.data.ingest import load, load_samples
    from evalcore.data.store import Workspace

    fits: list[float] = []
    real = dawid_skene

    def counting(*a, **k):
        fits.append(time.perf_counter())
        return real(*a, **k)

    winrate.dawid_skene = counting
    ws = Workspace(os.environ["EVALCORE_WORKSPACE"])
    datasets = {"sample": {"comparisons": load_samples()["comparisons"].frame}}
    if Path(args.pandalm).exists():
        datasets["PandaLM"] = {"comparisons": load(args.pandalm, preset="pandalm").frame}
    print(f"setup {time.perf_counter() - t0:.1f} s; {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")

    rows = []
    for name, tables in datasets.items():
        did = ws.save_dataset(name, tables)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        at.query_params["dataset"] = did  # a browser tab opens a dataset through its link
        at.run()
        t = time.perf_counter()
        at.switch_page(str(ROOT / "app_pages" / "3_Win_rates.py")).run()
        first = time.perf_counter() - t
        if at.exception:
            print(at.exception[0].value)
            return 1
        new, back, refits = [], [], 0
        for r in RATIOS:
            n = len(fits)
            t = time.perf_counter()
            at.slider(key="wr_ratio").set_value(r).run()
            new.append(time.perf_counter() - t)
            assert len(fits) == n + 1, "a new ratio should cost exactly one DS fit"
        for r in (0.3, *RATIOS):
            n = len(fits)
            t = time.perf_counter()
            at.slider(key="wr_ratio").set_value(r).run()
            back.append(time.perf_counter() - t)
            refits += len(fits) - n
        rows.append((name, first, new, back, refits))

    print("\n| dataset | first open of the page | new ratio: median (max) | cached ratio: median (max) | refits on cached |")
    print("|---|---|---|---|---|")
    for name, first, new, back, refits in rows:
        print(f"| {name} | {first:.1f} s | {statistics.median(new):.2f} s ({max(new):.2f} s) | "
              f"{statistics.median(back):.2f} s ({max(back):.2f} s) | {refits} |")
    print("\nThe first open includes what the first page of a server pays: importing Streamlit, numba and nutpie, "
          "loading the Dawid-Skene kernel (compiled once per machine, then read from numba's on-disk cache), and "
          "the first fits.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
