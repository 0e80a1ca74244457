"""How fast the Agreement and Bias pages open in a browser on a 70,000-row file (the goal: at most 3 s).

A real ``streamlit run app.py`` server with a fresh workspace, driven by headless Chromium (Debian's, through
Playwright), as a user does it: the file is imported into the workspace, the home page is opened on it (the
server is warm: what a user who just uploaded the file has), then each page is opened for the first time on
this dataset. Timed from the navigation to:

* **numbers**: the first figure drawn (point estimates; the intervals may still be on their way);
* **complete**: the page has finished running with its 95% intervals (no "point estimates first" note left);
* **again**: the same page opened once more in a new session, every result cached: what loading the page in the
  browser and drawing it cost, without any computation.

The file: the sample's ratings (1,200 items, 10 languages, 5 criteria, 30 annotators, 2 judges with 3 samples
each) plus 400 of its items again under new ids, 70,555 rows. ``--file`` times another file instead (HANNA:
``../shared/datasets/hanna/hanna_metric_scores_llm.csv --preset hanna``). ``--root`` times another checkout of
the app (e.g. the commit before a change) with the same procedure; ``--against DIR`` times a second checkout in
the same run, round by round in turn with the first (a fresh server for each), and prints the ratios.
``--pages`` picks the pages (default: Agreement and Bias).

    python benchmarks/bench_pages.py [--rounds 3] [--file F --preset P] [--root DIR] [--against DIR]
        [--pages Agreement]

The old path beside the new one on HANNA's Agreement page (``git archive`` of the commit before the change into
a folder; both run by this checkout's interpreter):

    git archive <old commit> | tar -x -C /tmp/old && python benchmarks/bench_pages.py --rounds 3 \\
        --file ../shared/datasets/hanna/hanna_metric_scores_llm.csv --preset hanna --pages Agreement --against /tmp/old
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = {"Agreement": "Agreement", "Bias": "Bias"}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
PENDING_NOTE = "Point estimates first"


def make_file(path: Path) -> int:
    """The sample's ratings with 400 of its items repeated under new ids: 70,555 rows."""
    import pandas as pd

    from evalcore.data.ingest import load_samples

    ratings = load_samples()["ratings"].frame
    again = ratings[ratings["item_id"].isin(ratings["item_id"].drop_duplicates().iloc[:400])].copy()
    again["item_id"] = again["item_id"].astype(str) + "-b"
    frame = pd.concat([ratings, again], ignore_index=True)
    frame.to_csv(path, index=False)
    return len(frame)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server(root: Path, workspace: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = _port()
    env = dict(os.environ, EVALCORE_WORKSPACE=str(workspace), PYTHONUNBUFFERED="1")
    entry = root / "app.py" if (root / "app.py").exists() else root / "Home.py"  # --root: an older checkout too
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(entry), "--server.port",
                             str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=root, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("streamlit did not start")


def _open(page, url: str) -> tuple[float, float]:
    """Seconds from navigation to the first figure, and to the finished page with its intervals."""
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_selector('[data-testid="stPlotlyChart"]', timeout=600_000)
    first = time.perf_counter() - t0
    while True:
        page.wait_for_selector(DONE, timeout=600_000)
        page.wait_for_timeout(200)
        if page.locator(DONE).count() and page.get_by_text(PENDING_NOTE).count() == 0:
            break
    return first, time.perf_counter() - t0


def run_once(root: Path, path: Path, preset: str | None, browser, pages: dict[str, str] = PAGES
             ) -> dict[str, tuple[float, float, float]]:
    """One fresh server and workspace: the file imported, home opened, then each page's first open."""
    sys.path.insert(0, str(root))
    from evalcore.data.ingest import load
    from evalcore.data.store import Workspace

    tmp = Path(tempfile.mkdtemp())
    ing = load(path, preset=preset)
    did = Workspace(tmp / "ws.duckdb").save_dataset("bench", {ing.table: ing.frame})
    proc, url = _server(root, tmp / "ws.duckdb", tmp / "streamlit.log")
    out = {}
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/?dataset={did}", wait_until="domcontentloaded")
        page.wait_for_selector(DONE, timeout=600_000)
        page.get_by_role("heading", name="bench", exact=True).wait_for(timeout=600_000)
        page.wait_for_timeout(1500)  # the home page's background warm-up, as a user reading the summary gives it
        for name, slug in pages.items():
            first = _open(page, f"{url}/{slug}?dataset={did}")
            again = _open(page, f"{url}/{slug}?dataset={did}")  # everything cached: the browser's and drawing's share
            out[name] = (*first, again[1])
        page.close()
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--file", type=Path)
    ap.add_argument("--preset")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose app is timed")
    ap.add_argument("--against", type=Path, help="a second checkout timed in the same run (e.g. the old path)")
    ap.add_argument("--pages", nargs="+", choices=list(PAGES), default=list(PAGES))
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    path = args.file
    if path is None:
        path = Path(tempfile.mkdtemp()) / "ratings_70k.csv"
        print(f"file: {make_file(path):,} rows ({path})")
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        print("chromium is not installed (apt-get install chromium)")
        return 1
    roots = {"this": args.root.resolve(), **({"against": args.against.resolve()} if args.against else {})}
    pages = {p: PAGES[p] for p in args.pages}
    print(f"app: {', '.join(f'{k} {v}' for k, v in roots.items())}; machine: {platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}; load average {os.getloadavg()[0]:.2f}")
    times: dict[tuple[str, str], list[tuple[float, float, float]]] = {(k, p): [] for k in roots for p in pages}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        for r in range(args.rounds):
            for which, root in (list(roots.items()) if r % 2 == 0 else list(roots.items())[::-1]):
                for name, t in run_once(root, path.resolve(), args.preset, browser, pages).items():
                    times[which, name].append(t)
                    print(f"round {r + 1}: {which:<8} {name:<10} numbers {t[0]:6.2f} s   complete {t[1]:6.2f} s   "
                          f"again {t[2]:6.2f} s   (load average {os.getloadavg()[0]:.2f})", flush=True)
        browser.close()
    print("\napp       page        numbers (median, best)    complete (median, best)    again (median, best)")
    for (which, name), ts in times.items():
        first, done, again = [t[0] for t in ts], [t[1] for t in ts], [t[2] for t in ts]
        print(f"{which:<8}  {name:<10}  {statistics.median(first):6.2f} s {min(first):6.2f} s        "
              f"{statistics.median(done):6.2f} s {min(done):6.2f} s        "
              f"{statistics.median(again):6.2f} s {min(again):6.2f} s")
    if args.against:
        for name in pages:
            new, old = [t[1] for t in times["this", name]], [t[1] for t in times["against", name]]
            print(f"{name}: complete, this / against: median {statistics.median(new) / statistics.median(old):.2f}x, "
                  f"best {min(new) / min(old):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
