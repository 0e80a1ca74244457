"""Reproduction and benchmark: evalcore's Alt-Test against the authors' notebook, on their nine datasets.

Calderon, Reichart & Dror (ACL 2025) publish their code and data in the ``nitaytech/AltTest`` repository:
``alt_test_example.ipynb`` defines ``alt_test`` and prints, for nine datasets and every LLM judge, the
winning rate, the advantage probability and PASSED/FAILED (52 results). This script reads a copy of that
repository (a checkout, or a bare git mirror read with ``git show``), runs the notebook's own ``alt_test``
(its function cells executed from the ``.ipynb``; nothing of it is copied here) beside
:func:`evalcore.pointwise.alt_test.alt_test` on the same data, and checks, for every (dataset, judge):

* our winning rate and advantage probability equal theirs (to 1e-12) and PASSED/FAILED is the same;
* both equal the output stored in the notebook (its printed two decimals);
* our ``min_passing_epsilon`` agrees with the verdict (the judge passes exactly when it is at most epsilon).

Each dataset becomes one ratings table: the annotators' and the judges' labels, text labels as categories of a
nominal criterion (``category`` + ``scale``, :mod:`evalcore.data.scales`), numbers as scores, and
``scoring="auto"`` must choose the notebook's scoring (accuracy for the text datasets, neg_rmse for the
numeric ones). Times: ours for all judges of a dataset in one call (``n_boot=0``, as the notebook has no
interval; and with the 1,000-resample interval of the advantage probability), theirs for the same judges,
best of ``--rounds``; and ours against theirs on a simulated 10,000 items x 10 annotators.

Run: ``python benchmarks/bench_alt_test.py [PATH]`` with PATH a checkout of nitaytech/AltTest or a bare
mirror of it (default: ``$ALTTEST_REPO``, then ``/work/.mirror/nitaytech+AltTest/repo``). Without one it
says so and exits 0. ``--quick``: one round, no simulated scale run.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from evalcore.pointwise.alt_test import alt_test  # noqa: E402

DEFAULT_MIRROR = Path("/work/.mirror/nitaytech+AltTest/repo")
NOTEBOOK = "alt_test_example.ipynb"
#: A line of the notebook's stored output.
PRINTED = re.compile(r"^(\S+) (\S+) \[(PASSED|FAILED)\]:\s+Winning Rate=([\d.]+)\s+Advantage Probability=([\d.]+)")


class Repo:
    """Files of the authors' repository: a checkout, or a bare git mirror (read with ``git show HEAD:path``)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.bare = not (self.path / NOTEBOOK).exists() and (self.path / "HEAD").exists()

    def exists(self) -> bool:
        return (self.path / NOTEBOOK).exists() or (self.bare and self._git(NOTEBOOK) is not None)

    def _git(self, rel: str) -> str | None:
        out = subprocess.run(["git", f"--git-dir={self.path}", "show", f"HEAD:{rel}"], capture_output=True)
        return out.stdout.decode() if out.returncode == 0 else None

    def text(self, rel: str) -> str:
        if not self.bare:
            return (self.path / rel).read_text()
        out = self._git(rel)
        if out is None:
            raise FileNotFoundError(f"{rel} is not in {self.path}")
        return out


def find_repo(given: str | None) -> Repo | None:
    """The repository given, or in ``$ALTTEST_REPO``, or the default mirror; None when none is there."""
    for cand in (given, os.environ.get("ALTTEST_REPO"), str(DEFAULT_MIRROR)):
        if cand and Path(cand).exists():
            repo = Repo(Path(cand))
            if repo.exists():
                return repo
    return None


def notebook(repo: Repo) -> tuple[dict, dict, dict, dict]:
    """The notebook's functions (its import and function cells, executed), its dataset -> scoring and
    dataset -> epsilon maps (read as literals, not executed) and its printed results."""
    cells = json.loads(repo.text(NOTEBOOK))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    ns: dict = {}
    exec(next(c for c in code if c.lstrip().startswith("import json")), ns)
    exec(next(c for c in code if "def alt_test(" in c), ns)
    example = next(c for c in code if "datasets_scoring_functions" in c)
    maps = {}
    for node in ast.parse(example).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            maps[node.targets[0].id] = ast.literal_eval(node.value)
    printed = {}
    for cell in cells:
        if cell["cell_type"] == "code" and "datasets_scoring_functions" in "".join(cell["source"]):
            for out in cell.get("outputs", []):
                for line in "".join(out.get("text", [])).splitlines():
                    m = PRINTED.match(line)
                    if m:
                        printed[m.group(1), m.group(2)] = (m.group(3), m.group(4), m.group(5))
    return ns, maps["datasets_scoring_functions"], maps["datasets_epsilons"], printed


def ratings_table(humans: dict, llms: dict, metric: str) -> pd.DataFrame:
    """One ratings table of a dataset: the annotators in their order, then the judges; text labels as
    categories of a nominal criterion."""
    rows = [(i, h, "human", v) for h, anns in humans.items() for i, v in anns.items()]
    rows += [(i, j, "judge", v) for j, anns in llms.items() for i, v in anns.items()]
    df = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "label"])
    if metric == "accuracy":
        return df.assign(score=np.nan, category=df["label"].astype(str), scale="nominal").drop(columns="label")
    return df.assign(score=df["label"].astype(float)).drop(columns="label")


def _best(fn, rounds: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(rounds):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def _theirs(ns: dict, humans: dict, llms: dict, metric: str, epsilon: float) -> dict:
    with contextlib.redirect_stdout(io.StringIO()):  # the notebook prints what it drops
        return {j: ns["alt_test"](anns, humans, metric, epsilon=epsilon) for j, anns in llms.items()}


def compare(repo: Repo, *, rounds: int = 1, interval: bool = True) -> tuple[list[dict], list[dict]]:
    """Every (dataset, judge): theirs, ours and the printed result; and per dataset the times (``interval``: also
    ours with the 1,000-resample interval)."""
    ns, scorings, epsilons, printed = notebook(repo)
    results, times = [], []
    for dataset, metric in scorings.items():
        eps = epsilons[dataset]
        humans = json.loads(repo.text(f"data/{dataset}/human_annotations.json"))
        llms = json.loads(repo.text(f"data/{dataset}/llm_annotations.json"))
        table = ratings_table(humans, llms, metric)
        t_ours, ours = _best(lambda: alt_test(table, epsilon=eps, n_boot=0), rounds)
        t_boot = _best(lambda: alt_test(table, epsilon=eps, n_boot=1000), rounds)[0] if interval else np.nan
        t_theirs, theirs = _best(lambda: _theirs(ns, humans, llms, metric, eps), rounds)
        times.append({"dataset": dataset, "judges": len(llms), "annotators": len(humans),
                      "items": len({i for a in humans.values() for i in a}), "ours_s": t_ours,
                      "ours_boot_s": t_boot, "theirs_s": t_theirs})
        for judge, (wr, ap) in theirs.items():
            mine = ours[ours["judge"] == judge].set_index("measure")
            results.append({
                "dataset": dataset, "judge": judge, "metric": metric, "epsilon": eps,
                "scoring": mine.loc["winning_rate", "scoring"], "theirs_wr": wr, "theirs_ap": ap,
                "ours_wr": float(mine.loc["winning_rate", "estimate"]),
                "ours_ap": float(mine.loc["advantage_probability", "estimate"]),
                "ours_passed": bool(mine.loc["winning_rate", "passed"]), "theirs_passed": wr >= 0.5,
                "min_eps": float(mine.loc["min_passing_epsilon", "estimate"]),
                "printed": printed.get((dataset, judge))})
    return results, times


def check(results: list[dict]) -> list[str]:
    """What differs (empty: everything agrees)."""
    bad = []
    for r in results:
        name = f"{r['dataset']} {r['judge']}"
        if r["scoring"] != r["metric"]:
            bad.append(f"{name}: scoring auto chose {r['scoring']}, the notebook {r['metric']}")
        if abs(r["ours_wr"] - r["theirs_wr"]) > 1e-12 or abs(r["ours_ap"] - r["theirs_ap"]) > 1e-12:
            bad.append(f"{name}: ours {r['ours_wr']}, {r['ours_ap']}; theirs {r['theirs_wr']}, {r['theirs_ap']}")
        if r["ours_passed"] != r["theirs_passed"]:
            bad.append(f"{name}: verdicts differ")
        if r["ours_passed"] != (r["min_eps"] <= r["epsilon"]):
            bad.append(f"{name}: min_passing_epsilon {r['min_eps']} disagrees with the verdict")
        p = r["printed"]
        if p is None or p != ("PASSED" if r["ours_passed"] else "FAILED", f"{r['ours_wr']:.2f}", f"{r['ours_ap']:.2f}"):
            bad.append(f"{name}: the notebook printed {p}")
    return bad


def scale_run(ns: dict, *, items: int = 10_000, annotators: int = 10, seed: int = 0) -> dict:
    """Ours and theirs on simulated 1-5 ratings of ``items`` items by ``annotators`` annotators and one judge."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, items)
    humans = {f"ann{a}": {str(i): int(min(5, max(1, t + rng.integers(-1, 2)))) for i, t in enumerate(truth)}
              for a in range(annotators)}
    llm = {str(i): int(min(5, max(1, t + rng.integers(-1, 2)))) for i, t in enumerate(truth)}
    table = ratings_table(humans, {"judge": llm}, "neg_rmse")
    t_ours, ours = _best(lambda: alt_test(table, epsilon=0.2, n_boot=0), 3)
    t_boot, _ = _best(lambda: alt_test(table, epsilon=0.2, n_boot=1000), 3)
    t_theirs, theirs = _best(lambda: _theirs(ns, humans, {"judge": llm}, "neg_rmse", 0.2), 1)
    same = np.allclose(ours.set_index("measure").loc[["winning_rate", "advantage_probability"], "estimate"],
                       theirs["judge"], rtol=0, atol=1e-12)
    return {"items": items, "annotators": annotators, "ours_s": t_ours, "ours_boot_s": t_boot, "theirs_s": t_theirs,
            "same": bool(same)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", nargs="?", help="a checkout of nitaytech/AltTest or a bare mirror of it")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one round, no simulated scale run")
    args = ap.parse_args(argv)
    repo = find_repo(args.path)
    if repo is None:
        print("skipped: no copy of the nitaytech/AltTest repository found (give its path, or set ALTTEST_REPO)")
        return 0
    results, times = compare(repo, rounds=1 if args.quick else args.rounds)
    bad = check(results)
    print(f"{len(results)} (dataset, judge) results from {repo.path}")
    print(pd.DataFrame(results)[["dataset", "judge", "ours_wr", "ours_ap", "ours_passed", "min_eps"]]
          .round(4).to_string(index=False))
    t = pd.DataFrame(times)
    t["ratio"] = t["theirs_s"] / t["ours_s"]
    print("\n" + t.round(3).to_string(index=False))
    print(f"\nall datasets: ours {t['ours_s'].sum():.2f} s (with the interval {t['ours_boot_s'].sum():.2f} s), "
          f"theirs {t['theirs_s'].sum():.2f} s, ratio {t['theirs_s'].sum() / t['ours_s'].sum():.1f}")
    if not args.quick:
        s = scale_run(notebook(repo)[0])
        print(f"\nsimulated {s['items']:,} items x {s['annotators']} annotators, one judge: ours {s['ours_s']:.3f} s "
              f"(with the interval {s['ours_boot_s']:.3f} s), theirs {s['theirs_s']:.2f} s, "
              f"ratio {s['theirs_s'] / s['ours_s']:.0f}; same results: {s['same']}")
    print("\n" + ("ALL EQUAL: winning rate, advantage probability and PASSED/FAILED, as printed in the notebook"
                  if not bad else "DIFFERENCES:\n" + "\n".join(bad)))
    return 0 if not bad else 1


if __name__ == "__main__":
    raise SystemExit(main())
