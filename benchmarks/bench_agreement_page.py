"""How the Agreement page responds on a 1,000,000-judgment dataset: the page must stay responsive.

The file of ``bench_agreement.py`` (40,000 items x 5 criteria x 3 annotators + 2 judges, 8 languages) is
imported through ``evalcore.data.ingest.load`` into a temporary workspace, and the whole Agreement page runs
under Streamlit's AppTest (every widget, figure and table, as a browser rerun does). Timed:

* the first open (loading the dataset from the workspace, ``count_units``, the table with 1,000 resamples,
  the class distributions);
* a change of the grouping to one not seen before, and back to one already seen;
* a change of the judges; a change of the plotted measure (no recomputation at all).

``count_units`` and ``agreement`` are counted by wrapping them: the issue's rule is that a change recomputes
only what it must (``count_units`` once per dataset; a table once per grouping, judges and resample count).

    python benchmarks/bench_agreement_page.py [--items 40000]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=40_000)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    tmp = Path(tempfile.mkdtemp())
    os.environ["EVALCORE_WORKSPACE"] = str(tmp / "ws.duckdb")

    from streamlit.testing.v1 import AppTest

    from bench_agreement import make_file
    from evalcore.pointwise.agreement import table as ag_table, units as ag_units
    from evalcore.data.ingest import load
    from evalcore.data.store import Workspace

    calls = {"count_units": 0, "agreement": 0}
    real_prepare, real_agreement = ag_units.count_units, ag_table.agreement

    def count_units(*a, **k):
        calls["count_units"] += 1
        return real_prepare(*a, **k)

    def agreement(*a, **k):
        calls["agreement"] += 1
        return real_agreement(*a, **k)

    ag_units.count_units, ag_table.agreement = count_units, agreement
    path = tmp / "judgments.csv"
    rows = make_file(path, n_items=args.items)
    t = time.perf_counter()
    frame = load(path).frame
    t_load = time.perf_counter() - t
    ws = Workspace(os.environ["EVALCORE_WORKSPACE"])
    did = ws.save_dataset("1M judgments", {"ratings": frame})
    print(f"{rows:,} rows; evalcore.data.ingest.load {t_load:.2f} s; {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}", flush=True)

    # The run waits for the intervals (in a browser the page shows the point estimates first and a fragment
    # reruns it when they are in): each step is timed to its complete page.
    os.environ["EVALCORE_POINTS_FIRST_AFTER"] = "600"
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.query_params["dataset"] = did  # a browser tab opens a dataset through its link
    at.run()
    steps = []

    def step(what: str, action) -> None:
        before = dict(calls)
        t0 = time.perf_counter()
        action()
        dt = time.perf_counter() - t0
        if at.exception:
            raise SystemExit(f"the page failed at '{what}': {at.exception[0].value}")
        steps.append((what, dt, calls["count_units"] - before["count_units"], calls["agreement"] - before["agreement"]))
        print(f"{what}: {dt:.2f} s", flush=True)

    step("first open (load, count_units, table with 1,000 resamples, distributions)",
         lambda: at.switch_page(str(ROOT / "app_pages" / "1_Agreement.py")).run())
    step("group by language only (new)", lambda: at.multiselect(key="ag_by").set_value(["language"]).run())
    step("group by language x criterion (seen before)",
         lambda: at.multiselect(key="ag_by").set_value(["language", "criterion"]).run())
    step("group by criterion only (new)", lambda: at.multiselect(key="ag_by").set_value(["criterion"]).run())
    step("one judge (new)", lambda: at.multiselect(key="ag_judges").set_value(["gpt-4"]).run())
    step("both judges (seen before)", lambda: at.multiselect(key="ag_judges").set_value(["gpt-4", "llama-3"]).run())
    step("another measure in the heatmap (nothing to compute)",
         lambda: at.selectbox(key="ag_measure_False").set_value("cohen_kappa").run())

    print("\n| step | time | `count_units` calls | `agreement` calls |")
    print("|---|---|---|---|")
    for what, dt, p, a in steps:
        print(f"| {what} | {dt:.2f} s | {p} | {a} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
