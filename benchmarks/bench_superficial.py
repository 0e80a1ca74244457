"""Benchmark: superficial-quality subtraction: the alpha slider and the full alpha curve.

Data (seeded): a canonical comparisons table of ``--pairs`` pairs (10,000 and 1,000,000 by default),
two rows per pair: the judge ``judge-leaky`` (rater_kind 'judge', integer scores 1-10 in
``score_a``/``score_b`` that leak the outputs' superficial quality, its verdict in ``winner``) and
the rater ``gold`` (rater_kind 'human', winner 'a'/'b' from the latent true quality). ``superficial_a``
/ ``superficial_b`` are lengths in characters (log-normal); two subsets: on ``Adversarial`` the
worse output is made 1.5-3 times longer, on ``Natural`` the better one 1-1.5 times. The table
goes through a CSV and ``pandas.read_csv``, as a user's file does.

Measured, each in interleaved rounds with its reference (best-of ratio and median per-round ratio):

* slider response: the page keeps ``SuperficialData`` and on a move calls ``flips(data, alpha)`` and
  ``decisions(data, alpha)``; the reference is a straightforward pandas computation of the same
  numbers from the raw table (filter the judge's and gold's rows, merge, min-max normalise, P_hat per
  output per row, decide, group accuracy), and the same from a prepared per-item frame; the numbers
  are asserted equal. ``superficial_data`` (once per dataset) is timed as well;
* the full curve: ``alpha_curve`` (21 alphas, ``--boot`` resamples) and ``cross_validated_alpha``
  (5 folds) per subset, against a naive loop (for each resample draw items with numpy, for each
  alpha compute the accuracy); point estimates, the cross-validated alpha and its held-out accuracy
  must agree exactly, intervals to Monte-Carlo error. On 1,000,000 pairs ours runs in a child process
  with a time limit; the reference is timed on ``--ref-boot-large`` resamples and scaled;
* whole processes, like a user: ``python -m evalcore.cli superficial FILE --preset none --q superficial
  --by subset --boot 1000 --json`` against ``python -c`` running ``pandas.read_csv`` and the naive
  computation (its JSON compared with the CLI's), and ``pandas.read_csv`` of the file alone as a yardstick;
  on the large file the CLI (``--boot 0`` and ``--boot 1000``) and ``read_csv`` once each, with a time limit.

Goal: moving the slider answers in well under half a second on 10,000 pairs, and nothing
that does not depend on alpha is recomputed.

Pointwise section (``--section pointwise``; HANNA from ``../shared/datasets``, read by ``evalcore.read``
as the app and CLI read it): per judge, ``correlation_table`` (the curve of Kendall's tau-b and
Spearman's rho over 21 alphas x ``--boot`` resamples, and the cross-validated alpha) and
``correlation_curve`` alone, ours best-of-``--pointwise-rounds`` against the previous path (per alpha,
``tau_b`` and ``spearman_rho`` of the whole weight matrix; kept here as the reference) once, the
tables asserted equal to the last bit; ours on all 20 judges; whole processes: ``evalcore
superficial HANNA --preset hanna --judge J --q text_length --boot 1000 --json`` (numba's cache warm,
and once with an empty cache), the previous path in ``python -c`` (JSON compared), ``evalcore.read``
alone. Wall and CPU (user + sys) times. Goal: at most 3 s per judge.

Run: ``python benchmarks/bench_superficial.py`` (about fifteen minutes on 2 cores); one section:
``--section pairwise`` or ``--section pointwise`` (about four minutes); smoke run: ``--quick``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
JUDGE = "judge-leaky"
ALPHAS = np.round(np.arange(21) * 0.05, 10)
SLIDER_ALPHAS = (0.35, 0.05, 0.8, 0.5, 1.0, 0.2, 0.65)


# --------------------------------------------------------------------------- data


def simulate(n: int, *, seed: int = 20241123, leak: float = 0.8) -> pd.DataFrame:
    """The comparisons table: per pair a judge row and a gold row, item by item."""
    rng = np.random.default_rng(seed)
    adv = rng.random(n) < 0.5
    ta, tb = rng.normal(size=(2, n))
    base = rng.lognormal(6.0, 0.5, size=(2, n))
    infl = rng.uniform(1.5, 3.0, n)
    mild = rng.uniform(1.0, 1.5, n)  # on Natural the better output tends to be a little longer
    qa = np.round(base[0] * np.where(adv, np.where(ta < tb, infl, 1.0), np.where(ta > tb, mild, 1.0)))
    qb = np.round(base[1] * np.where(adv, np.where(tb < ta, infl, 1.0), np.where(tb > ta, mild, 1.0)))
    z = lambda q: (np.log(q) - 6.0) / 0.5  # noqa: E731
    score = lambda t, q: np.clip(np.round(5.5 + 1.5 * t + leak * 1.5 * z(q) + rng.normal(0, 1, n)), 1, 10)  # noqa: E731
    sa, sb = score(ta, qa), score(tb, qb)
    systems = np.array(["sys1", "sys2", "sys3", "sys4"])
    pick = rng.integers(0, 4, size=(2, n))
    pick[1] = np.where(pick[1] == pick[0], (pick[0] + 1) % 4, pick[1])
    ids = np.char.add("it", np.char.zfill(np.arange(n).astype(str), 7))
    two = lambda x: np.repeat(x, 2)  # noqa: E731
    rows = lambda j, g: np.column_stack([j, g]).ravel()  # noqa: E731
    nan = np.full(n, np.nan)
    verdict = np.where(sa > sb, "a", np.where(sa < sb, "b", "tie"))
    return pd.DataFrame({
        "item_id": two(ids), "system_a": two(systems[pick[0]]), "system_b": two(systems[pick[1]]),
        "rater": rows(np.full(n, JUDGE), np.full(n, "gold")), "rater_kind": rows(np.full(n, "judge"),
                                                                                 np.full(n, "human")),
        "winner": rows(verdict, np.where(ta > tb, "a", "b")), "score_a": rows(sa, nan), "score_b": rows(sb, nan),
        "superficial_a": two(qa), "superficial_b": two(qb),
        "subset": two(np.where(adv, "Adversarial", "Natural")),
    })


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def ratios(times: dict[str, list[float]], ref: str) -> dict[str, tuple[float, float, float, float]]:
    """Per step: best, median, best-of ratio to ``ref`` and median of the per-round ratios."""
    r = np.asarray(times[ref])
    return {k: (min(v), statistics.median(v), min(v) / r.min(), float(np.median(np.asarray(v) / r)))
            for k, v in times.items()}


# --------------------------------------------------------------------------- references (pandas / numpy only)


def ref_items(raw: pd.DataFrame, judge: str = JUDGE) -> pd.DataFrame:
    """The judge's rows merged with gold, min-max normalised P and Q per output (straightforward pandas)."""
    j = raw.loc[raw["rater"] == judge, ["item_id", "score_a", "score_b", "superficial_a", "superficial_b", "subset"]]
    gold = raw.loc[(raw["rater"] == "gold") & (raw["rater_kind"] == "human"), ["item_id", "winner"]]
    df = j.merge(gold.rename(columns={"winner": "gold"}), on="item_id", how="inner")
    df = df[df["gold"].isin(["a", "b"])].dropna(subset=["score_a", "score_b", "superficial_a", "superficial_b"])
    for x in ("score", "superficial"):
        both = pd.concat([df[f"{x}_a"], df[f"{x}_b"]])
        lo, hi = both.min(), both.max()
        for s in ("a", "b"):
            df[f"n{x}_{s}"] = (df[f"{x}_{s}"] - lo) / (hi - lo) if hi > lo else 0.0
    return df.reset_index(drop=True)


def ref_at_alpha(df: pd.DataFrame, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per item decisions and per subset accuracy at ``alpha`` from :func:`ref_items`'s frame."""
    def decide(a):
        phat_a = df["nscore_a"] - a * df["nsuperficial_a"]
        phat_b = df["nscore_b"] - a * df["nsuperficial_b"]
        d = (phat_a - phat_b).round(12)
        return pd.Series(np.select([d > 0, d < 0], ["a", "b"], "tie"), index=df.index)

    raw, now = decide(0.0), decide(alpha)
    score = lambda dec: np.where(dec == "tie", 0.5, (dec == df["gold"]).astype(float))  # noqa: E731
    items = pd.DataFrame({"item_id": df["item_id"], "subset": df["subset"], "decision_raw": raw, "decision": now,
                          "correct_raw": score(raw), "correct": score(now)})
    items["flipped"] = items["decision_raw"] != items["decision"]
    items["r2w"] = items["correct"] < items["correct_raw"]
    items["w2r"] = items["correct"] > items["correct_raw"]
    groups = items.groupby("subset", sort=True).agg(
        n=("correct", "size"), accuracy_raw=("correct_raw", "mean"), accuracy=("correct", "mean"),
        flipped=("flipped", "sum"), right_to_wrong=("r2w", "sum"), wrong_to_right=("w2r", "sum"))
    return items, groups


def ref_slider_from_raw(raw: pd.DataFrame, alpha: float):
    return ref_at_alpha(ref_items(raw), alpha)


def _naive_correct(dp, dq, want, alpha):
    d = np.round(dp - alpha * dq, 12)
    return np.where(d == 0, 0.5, (np.sign(d) == want).astype(float))


def ref_curve(df: pd.DataFrame, alphas, n_boot: int, seed: int, fold_seed: int = 0) -> list[dict]:
    """Naive: per subset, for each resample draw items, for each alpha the accuracy; percentile intervals.

    ``seed`` seeds the resamples; ``fold_seed`` the CV folds (the library's ``seed``, for equal folds)."""
    out = []
    for g, grp in df.groupby("subset", sort=True):
        dp = (grp["nscore_a"] - grp["nscore_b"]).to_numpy()
        dq = (grp["nsuperficial_a"] - grp["nsuperficial_b"]).to_numpy()
        want = np.where(grp["gold"].to_numpy() == "a", 1.0, -1.0)
        n = len(dp)
        point = [_naive_correct(dp, dq, want, a).mean() for a in alphas]
        rng = np.random.default_rng([seed, n])
        boot = np.empty((n_boot, len(alphas)))
        for b in range(n_boot):
            idx = rng.integers(0, n, n)
            for j, a in enumerate(alphas):
                boot[b, j] = _naive_correct(dp[idx], dq[idx], want[idx], a).mean()
        lo, hi = (np.quantile(boot, 0.025, axis=0), np.quantile(boot, 0.975, axis=0)) if n_boot else ([np.nan] * 2)
        for j, a in enumerate(alphas):
            out.append({"subset": g, "alpha": float(a), "measure": "accuracy", "estimate": point[j],
                        "ci_low": float(lo[j]) if n_boot else None, "ci_high": float(hi[j]) if n_boot else None,
                        "n": n, "change": point[j] - point[0]})
        out += ref_cv(g, dp, dq, want, alphas, n_boot, seed, fold_seed)
    return out


def ref_cv(g, dp, dq, want, alphas, n_boot: int, seed: int, fold_seed: int, folds: int = 5) -> list[dict]:
    """Naive cross-validated alpha; folds assigned as the library documents (seeded permutation)."""
    n = len(dp)
    fold = np.random.default_rng(fold_seed).permutation(np.arange(n) % folds)

    def choose(sel):
        acc = [_naive_correct(dp[sel], dq[sel], want[sel], a).mean() for a in alphas]
        best = max(acc)
        return next(j for j, v in enumerate(acc) if v >= best - 1e-12)

    held = np.empty(n)
    for k in range(folds):
        test = fold == k
        j = choose(~test)
        held[test] = _naive_correct(dp[test], dq[test], want[test], alphas[j])
    rng = np.random.default_rng([seed, n, 1])
    boot = np.array([held[rng.integers(0, n, n)].mean() for _ in range(n_boot)])
    lo, hi = (np.quantile(boot, 0.025), np.quantile(boot, 0.975)) if n_boot else (None, None)
    a_all = float(alphas[choose(np.ones(n, bool))])
    return [{"subset": g, "alpha": a_all, "measure": "alpha_cv", "estimate": a_all, "ci_low": None, "ci_high": None,
             "n": n},
            {"subset": g, "alpha": None, "measure": "accuracy_cv", "estimate": held.mean(),
             "ci_low": None if lo is None else float(lo), "ci_high": None if hi is None else float(hi), "n": n}]


def ref_cli_main(path: str, n_boot: int) -> None:
    """The whole-process reference: read the CSV, compute the curve and CV naively, print JSON records."""
    raw = pd.read_csv(path)
    recs = ref_curve(ref_items(raw), ALPHAS, n_boot, 1)
    json.dump([{"judge": JUDGE, **r} for r in recs], sys.stdout, default=float)


# --------------------------------------------------------------------------- ours


def ours_curve(data, n_boot: int, seed: int = 0) -> list[dict]:
    """alpha_curve and cross_validated_alpha per subset, as the CLI and the page compute them."""
    from evalcore.pairwise import superficial as sp

    if hasattr(sp, "superficial_table"):
        return sp.superficial_table(data, alphas=ALPHAS, folds=5, n_boot=n_boot, seed=seed).to_dict(orient="records")
    curve = sp.alpha_curve(data, alphas=ALPHAS, n_boot=n_boot, seed=seed)
    out = curve.to_dict(orient="records")
    for g, key in enumerate(data.keys):
        cv = sp.cross_validated_alpha(data, alphas=ALPHAS, folds=5, seed=seed, n_boot=n_boot, group=g)
        out.append({"subset": key[0], "alpha": cv.alpha_all, "measure": "alpha_cv", "estimate": cv.alpha_all, "n": cv.n})
        out.append({"subset": key[0], "alpha": None, "measure": "accuracy_cv", "estimate": cv.accuracy_cv,
                    "ci_low": cv.ci_low, "ci_high": cv.ci_high, "n": cv.n})
    return out


def compare_curves(ours: list[dict], ref: list[dict], n_boot: int) -> dict:
    """Assert equal point estimates, CV alpha and held-out accuracy; intervals: largest gap in units of the
    bootstrap SD (width / 3.92) and absolute; fail beyond 5 Monte-Carlo SDs of the difference of two 2.5%
    quantiles from ``n_boot`` resamples each (sqrt(2 * 0.025 * 0.975 / n_boot) / phi(1.96) bootstrap SDs:
    0.6 SD at 1,000)."""
    key = lambda r: (r["subset"], r["measure"], round(float(r["alpha"]), 10) if r["measure"] == "accuracy" else None)  # noqa: E731
    o = {key(r): r for r in ours}
    worst_sd, worst_abs, checked = 0.0, 0.0, 0
    for r in ref:
        m = o[key(r)]
        assert m["estimate"] == r["estimate"], (key(r), m["estimate"], r["estimate"])
        assert m["n"] == r["n"], key(r)
        if r.get("ci_low") is None or m.get("ci_low") is None or r["measure"] == "alpha_cv":
            continue
        sd = max((m["ci_high"] - m["ci_low"]) / 3.92, 1e-12)
        for b in ("ci_low", "ci_high"):
            gap = abs(m[b] - r[b])
            worst_sd, worst_abs = max(worst_sd, gap / sd), max(worst_abs, gap)
        checked += 1
    assert len(o) == len(ref), (len(o), len(ref))
    tol = 5 * np.sqrt(2 * 0.025 * 0.975 / max(n_boot, 1)) / 0.05844
    assert worst_sd <= tol, f"intervals differ by {worst_sd:.2f} bootstrap SDs (tolerance {tol:.2f})"
    return {"worst_sd": worst_sd, "worst_abs": worst_abs, "intervals": checked, "records": len(ref), "tol": tol}


# --------------------------------------------------------------------------- steps


def check_slider(data, items_ref: pd.DataFrame, alpha: float) -> None:
    """Ours (flips, decisions) equal to the pandas reference at ``alpha``, exactly."""
    from evalcore.pairwise import superficial as sp

    f, d = sp.flips(data, alpha), sp.decisions(data, alpha)
    ref_items_, ref_groups = ref_at_alpha(items_ref, alpha)
    f = f.set_index("subset").sort_index()
    for c in ("n", "accuracy_raw", "accuracy", "flipped", "right_to_wrong", "wrong_to_right"):
        assert np.array_equal(f[c].to_numpy(float), ref_groups[c].to_numpy(float)), (alpha, c, f[c], ref_groups[c])
    m = d.merge(ref_items_, on="item_id", suffixes=("", "_ref"), validate="1:1")
    assert len(m) == len(d) == len(ref_items_)
    for c in ("decision_raw", "decision", "correct_raw", "correct", "flipped"):
        assert np.array_equal(m[c].to_numpy(), m[f"{c}_ref"].to_numpy()), (alpha, c)


def bench_slider(raw: pd.DataFrame, rounds: int) -> dict:
    """One slider move: ours from the kept data against the pandas reference, interleaved rounds."""
    from evalcore.pairwise import superficial as sp

    t_prep, data = timed(lambda: sp.superficial_data(raw, judge=JUDGE, q="superficial", by=("subset",)))
    prepared = ref_items(raw)
    for a in SLIDER_ALPHAS[:3]:
        check_slider(data, prepared, a)
    times = {k: [] for k in ("ref_raw", "ref_prepared", "ours", "flips", "decisions", "superficial_data")}
    for r in range(rounds):
        a = SLIDER_ALPHAS[r % len(SLIDER_ALPHAS)]
        times["ref_raw"].append(timed(lambda: ref_slider_from_raw(raw, a))[0])
        times["ref_prepared"].append(timed(lambda: ref_at_alpha(prepared, a))[0])
        t1, _ = timed(lambda: sp.flips(data, a))
        t2, _ = timed(lambda: sp.decisions(data, a))
        times["flips"].append(t1)
        times["decisions"].append(t2)
        times["ours"].append(t1 + t2)
        times["superficial_data"].append(timed(lambda: sp.superficial_data(raw, judge=JUDGE, q="superficial",
                                                                           by=("subset",)))[0])
    return {"times": times, "first_prep": t_prep, "n_items": len(data.gold), "n_dropped": data.n_dropped}


def bench_curve(raw: pd.DataFrame, rounds: int, n_boot: int) -> dict:
    """alpha_curve + cross_validated_alpha against the naive loop, both from the raw table, interleaved."""
    from evalcore.pairwise import superficial as sp

    prep = lambda: sp.superficial_data(raw, judge=JUDGE, q="superficial", by=("subset",))  # noqa: E731
    times = {k: [] for k in ("ref", "ours", "ours_curve", "ours_cv", "ref_prep", "ours_prep")}
    check = None
    for _ in range(rounds):
        t_rp, items = timed(lambda: ref_items(raw))
        t_r, ref = timed(lambda: ref_curve(items, ALPHAS, n_boot, 1))
        times["ref"].append(t_rp + t_r)
        times["ref_prep"].append(t_rp)
        t_op, data = timed(prep)
        t_c, curve = timed(lambda: sp.alpha_curve(data, alphas=ALPHAS, n_boot=n_boot, seed=0))
        t_v, _ = timed(lambda: [sp.cross_validated_alpha(data, alphas=ALPHAS, folds=5, seed=0, n_boot=n_boot, group=g)
                                for g in range(len(data.keys))])
        times["ours"].append(t_op + t_c + t_v)
        times["ours_prep"].append(t_op)
        times["ours_curve"].append(t_c)
        times["ours_cv"].append(t_v)
        if check is None:
            check = compare_curves(ours_curve(data, n_boot), ref, n_boot)
            adv = curve[curve["subset"] == "Adversarial"].set_index("alpha")
            nat = curve[curve["subset"] == "Natural"].set_index("alpha")
            check["summary"] = {r["subset"] + ":" + r["measure"]: r["estimate"] for r in ours_curve(data, 0)
                                if r["measure"] != "accuracy"}
            check["summary"].update({"Adversarial:raw": adv.loc[0.0, "estimate"], "Natural:raw": nat.loc[0.0, "estimate"]})
    return {"times": times, "check": check}


_LARGE_CHILD = """
import sys, time, json
sys.path.insert(0, {here!r})
import pandas as pd
import bench_superficial as b
from evalcore.pairwise import superficial as sp
raw = pd.read_pickle({path!r})
data = sp.superficial_data(raw, judge=b.JUDGE, q="superficial", by=("subset",))
t = time.perf_counter(); sp.alpha_curve(data, alphas=b.ALPHAS, n_boot={boot}, seed=0); t1 = time.perf_counter() - t
t = time.perf_counter()
for g in range(len(data.keys)):
    sp.cross_validated_alpha(data, alphas=b.ALPHAS, folds=5, seed=0, n_boot={boot}, group=g)
t2 = time.perf_counter() - t
import resource
print(json.dumps({{"curve": t1, "cv": t2, "maxrss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}}))
"""


def bench_curve_large(raw: pd.DataFrame, n_boot: int, ref_boot: int, limit: float, tmp: Path) -> dict:
    """Ours on the large table in a child process (time limit ``limit``); the naive reference on ``ref_boot``
    resamples, scaled to ``n_boot``."""
    pkl = tmp / "large.pkl"
    raw.to_pickle(pkl)
    code = _LARGE_CHILD.format(here=str(HERE), path=str(pkl), boot=n_boot)
    out: dict = {}
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=limit)
        out = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {"error": p.stderr[-500:]}
    except subprocess.TimeoutExpired:
        out = {"error": f"did not finish within {limit:.0f} s"}
    t_rp, items = timed(lambda: ref_items(raw))
    t_r, _ = timed(lambda: ref_curve(items, ALPHAS, ref_boot, 1))
    out.update(ref_prep=t_rp, ref_part=t_r, ref_boot=ref_boot, ref_scaled=t_rp + t_r * n_boot / max(ref_boot, 1))
    return out


def cli_command(path: Path, n_boot: int) -> list[str]:
    return [sys.executable, "-m", "evalcore.cli", "superficial", str(path), "--preset", "none", "--q", "superficial",
            "--by", "subset", "--boot", str(n_boot), "--json"]


def bench_cli(path: Path, rounds: int, n_boot: int) -> dict:
    """Whole processes: the CLI, the python -c reference and read_csv alone, interleaved; outputs compared."""
    ours = cli_command(path, n_boot)
    ref = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r}); import bench_superficial as b; "
           f"b.ref_cli_main({str(path)!r}, {n_boot})"]
    read = [sys.executable, "-c", f"import pandas as pd; pd.read_csv({str(path)!r})"]
    bare = [sys.executable, "-c", "import numpy, pandas"]
    times = {k: [] for k in ("ref", "ours", "read_csv", "import")}
    outs = {}
    for _ in range(rounds):
        for k, cmd in (("ref", ref), ("ours", ours), ("read_csv", read), ("import", bare)):
            t, p = timed(lambda: subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent))
            if p.returncode != 0:
                raise SystemExit(f"{k} failed:\n{p.stderr[-3000:]}")
            times[k].append(t)
            outs[k] = p.stdout
    check = compare_curves(json.loads(outs["ours"]), json.loads(outs["ref"]), n_boot)
    t_in = [timed(lambda: pd.read_csv(path))[0] for _ in range(rounds)]
    return {"times": times, "check": check, "read_in_process": min(t_in)}


def bench_cli_large(path: Path, n_boot: int, limit: float) -> dict:
    """Once each on the large file: read_csv in a fresh process, the CLI with --boot 0 and with ``n_boot``."""
    out = {}
    runs = (("read_csv", [sys.executable, "-c", f"import pandas as pd; pd.read_csv({str(path)!r})"]),
            ("cli_0", cli_command(path, 0)), ("cli_boot", cli_command(path, n_boot)))
    for k, cmd in runs:
        try:
            t, p = timed(lambda: subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent, timeout=limit))
            out[k] = t if p.returncode == 0 else f"failed: {p.stderr[-300:]}"
        except subprocess.TimeoutExpired:
            out[k] = f"did not finish within {limit:.0f} s"
    return out


# --------------------------------------------------------------------------- pointwise curve on HANNA

HANNA = HERE.parent.parent / "shared" / "datasets" / "hanna" / "hanna_metric_scores_llm.csv"
HANNA_JUDGES = ("ChatGPT/prompt1", "Mistral-7B/prompt1", "OrcaPlatypus/prompt1")


def ref_pointwise_table(data, n_boot: int, seed: int = 0, folds: int = 5, level: float = 0.95) -> pd.DataFrame:
    """The previous pointwise path: per alpha, ``tau_b`` and ``spearman_rho`` of the whole weight matrix (a
    contingency table or merge plan and the midranks rebuilt for each alpha), and per fold and alpha a
    ``tau_b`` of the training units; the same rows as ``correlation_table``."""
    from evalcore.pairwise.superficial import cv_records
    from evalcore.pointwise.superficial import MEASURES
    from evalcore.stats.bootstrap import cell_rng, item_weights, percentile_interval
    from evalcore.stats.kendall import tau_b
    from evalcore.stats.spearman import spearman_rho

    def both(W, x, h):
        return {"kendall_tau": tau_b(W, np.arange(len(x)), x, h), "spearman_rho": spearman_rho(W, x, h)}

    def best(W, p, q, h):
        taus = np.array([tau_b(W, np.arange(len(p)), p - a * q, h)[0] for a in ALPHAS])
        taus = np.where(np.isfinite(taus), taus, -np.inf)
        return int(np.flatnonzero(taus >= taus.max() - 1e-12)[0])

    rows, cv_rows = [], []
    for g, key in enumerate(data.keys):
        sel = data.group == g
        n = int(sel.sum())
        p, q, h = data.p[sel], data.q[sel], data.human[sel]
        W = item_weights(cell_rng(seed, (data.judge, *key)), n, n_boot).T
        base = both(W, p, h)
        for a in ALPHAS:
            cur = both(W, p - a * q, h)
            for m in MEASURES:
                est, change = cur[m], cur[m] - base[m]
                lo, hi, _ = percentile_interval(est[None, 1:], level)
                clo, chi, _ = percentile_interval(change[None, 1:], level)
                rows.append({"judge": data.judge, **dict(zip(data.by, key)), "alpha": float(a), "measure": m,
                             "estimate": est[0], "ci_low": lo[0], "ci_high": hi[0], "n": n, "change": change[0],
                             "change_ci_low": clo[0], "change_ci_high": chi[0], "note": ""})
        fold = np.random.default_rng(seed).permutation(np.arange(n) % folds)
        Wcv = item_weights(cell_rng(seed, (data.judge, "cv", g)), n, n_boot).T
        held, chosen = np.zeros(Wcv.shape[1]), []
        for f in range(folds):
            j = best((fold != f)[:, None].astype(float), p, q, h)
            chosen.append(float(ALPHAS[j]))
            idx = np.flatnonzero(fold == f)
            held += np.nan_to_num(tau_b(Wcv[idx], np.arange(len(idx)), p[idx] - ALPHAS[j] * q[idx], h[idx])) * len(
                idx) / n
        lo, hi, _ = percentile_interval(held[None, 1:], level)
        ones = np.ones((n, 1))
        raw = tau_b(ones, np.arange(n), p, h)[0]
        cv_rows += cv_records(data.judge, dict(zip(data.by, key)), float(ALPHAS[best(ones, p, q, h)]), tuple(chosen),
                              n, held=("kendall_tau_cv", float(held[0]), float(lo[0]), float(hi[0]),
                                       f"held-out Kendall tau, mean over {folds} folds; raw {raw:.3f}"))
    return pd.concat([pd.DataFrame(rows), pd.DataFrame(cv_rows)], ignore_index=True)


def timed_cpu(fn):
    """(wall, CPU user+sys of this process, result)."""
    c, t = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t, time.process_time() - c, out


def bench_pointwise(n_boot: int, rounds: int, judges) -> dict:
    """Per HANNA judge: ``correlation_table`` (curve + CV) and ``correlation_curve`` alone, ours best-of-``rounds``
    against the previous path once (it takes ~20 s), outputs asserted identical; then ours on every judge."""
    from evalcore.data.ingest import read
    from evalcore.pointwise import superficial as ps

    t_read, c_read, frame = timed_cpu(lambda: read(HANNA, preset="hanna"))
    everyone = sorted(frame.loc[frame["rater_kind"] == "judge", "rater"].astype(str).unique())
    data = {j: ps.pointwise_data(frame, judge=j, q="text_length") for j in everyone}
    first = timed_cpu(lambda: ps.correlation_table(data[judges[0]], alphas=ALPHAS, n_boot=n_boot))[:2]
    out = {"read": (t_read, c_read), "first": first, "judges": {}, "all": {}}
    for j in judges:
        ref_w, ref_c, ref = timed_cpu(lambda: ref_pointwise_table(data[j], n_boot))
        mine = [timed_cpu(lambda: ps.correlation_table(data[j], alphas=ALPHAS, n_boot=n_boot)) for _ in range(rounds)]
        curve = [timed_cpu(lambda: ps.correlation_curve(data[j], alphas=ALPHAS, n_boot=n_boot))[:2]
                 for _ in range(rounds)]
        pd.testing.assert_frame_equal(mine[0][2], ref, check_exact=True)  # the same numbers, to the last bit
        out["judges"][j] = {"ref": (ref_w, ref_c), "table": min(m[:2] for m in mine), "curve": min(curve)}
    for j in everyone:
        out["all"][j] = min(timed_cpu(lambda: ps.correlation_table(data[j], alphas=ALPHAS, n_boot=n_boot))[:2]
                            for _ in range(rounds))
    return out


def _run_cpu(cmd: list[str], env: dict | None = None) -> tuple[float, float, subprocess.CompletedProcess]:
    """A whole process: wall time and its CPU time (user + sys of the child)."""
    before = os.times()
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent, env=env)
    wall = time.perf_counter() - t
    after = os.times()
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed:\n{p.stderr[-3000:]}")
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system), p


_REF_POINTWISE_CHILD = """
import json, sys
sys.path.insert(0, {here!r})
import bench_superficial as b
from evalcore.data.ingest import read
from evalcore.pointwise import superficial as ps
frame = read({path!r}, preset="hanna")
data = ps.pointwise_data(frame, judge={judge!r}, q="text_length")
json.dump(b.ref_pointwise_table(data, {boot}).to_dict(orient="records"), sys.stdout, default=float)
"""


def pointwise_cli(judge: str, n_boot: int) -> list[str]:
    return [sys.executable, "-m", "evalcore.cli", "superficial", str(HANNA), "--preset", "hanna", "--judge", judge,
            "--q", "text_length", "--boot", str(n_boot), "--json"]


def bench_pointwise_cli(judge: str, n_boot: int, rounds: int) -> dict:
    """Whole processes on HANNA for one judge: the CLI (numba's cache warm; and once with an empty cache, as
    the first run on a machine), the previous path in ``python -c`` once, and ``evalcore.read`` alone."""
    read = [sys.executable, "-c", f"from evalcore.data.ingest import read; read({str(HANNA)!r}, preset='hanna')"]
    ref = [sys.executable, "-c", _REF_POINTWISE_CHILD.format(here=str(HERE), path=str(HANNA), judge=judge,
                                                              boot=n_boot)]
    out = {"ours": [], "read": []}
    for _ in range(rounds):
        out["ours"].append(_run_cpu(pointwise_cli(judge, n_boot))[:2])
        out["read"].append(_run_cpu(read)[:2])
    with tempfile.TemporaryDirectory(prefix="bench-numba-cache-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "EVALCORE_CACHE_DIR": cache}
        out["cold"] = _run_cpu(pointwise_cli(judge, n_boot), env)[:2]
    w, c, p = _run_cpu(ref)
    out["ref"] = (w, c)
    mine = json.loads(_run_cpu(pointwise_cli(judge, n_boot))[2].stdout)
    theirs = json.loads(p.stdout)
    def key(r):
        a = r["alpha"]
        return r["criterion"], r["measure"], None if a is None or a != a else round(a, 10)

    theirs = {key(r): r for r in theirs}
    for r in mine:
        t = theirs[key(r)]
        for k in ("estimate", "ci_low", "ci_high", "change", "change_ci_low", "change_ci_high"):
            a, b = r.get(k), t.get(k)
            assert (a is None or a != a) and (b is None or b != b) or a == b, (key(r), k, a, b)
    out["records"] = len(mine)
    return out


def print_pointwise(pw: dict, n_boot: int) -> None:
    cell = lambda wc: f"{fmt(wc[0])} ({fmt(wc[1])} CPU)"  # noqa: E731
    print(f"\n## pointwise curve on HANNA (1,056 stories x 6 criteria, Q = text_length), 21 alphas x {n_boot:,} "
          "resamples, CV 5 folds, in-process")
    print(f"\n`evalcore.read` of HANNA: {cell(pw['read'])}; first `correlation_table` in the process (numba loads "
          f"its cached kernel): {cell(pw['first'])}\n")
    print("| judge | previous path: `correlation_table` | ours: `correlation_table` | ours: `correlation_curve` "
          "| previous / ours (wall; CPU) |")
    print("|---|---|---|---|---|")
    for j, r in pw["judges"].items():
        print(f"| {j} | {cell(r['ref'])} | {cell(r['table'])} | {cell(r['curve'])} | "
              f"{r['ref'][0] / r['table'][0]:.0f}x; {r['ref'][1] / r['table'][1]:.0f}x |")
    walls = sorted(v[0] for v in pw["all"].values())
    cpus = sorted(v[1] for v in pw["all"].values())
    print(f"\nours on all {len(walls)} judges, `correlation_table` best of rounds: wall median "
          f"{fmt(walls[len(walls) // 2])}"
          f", max {fmt(walls[-1])}; CPU median {fmt(cpus[len(cpus) // 2])}, max {fmt(cpus[-1])}; every checked "
          "judge's table equal to the previous path's to the last bit")


def print_pointwise_cli(judge: str, c: dict, n_boot: int) -> None:
    cell = lambda wc: f"{fmt(wc[0])} ({fmt(wc[1])} CPU)"  # noqa: E731
    best = lambda k: min(c[k])  # noqa: E731
    print(f"\n| whole process, HANNA, one judge ({judge}), --boot {n_boot} | best of {len(c['ours'])} (CPU) | "
          "ratio to ours |")
    print("|---|---|---|")
    print(f"| `evalcore superficial HANNA --preset hanna --judge J --q text_length --boot {n_boot} --json` | "
          f"{cell(best('ours'))} | |")
    print(f"| the same, numba's cache empty (first run on a machine) | {cell(c['cold'])} | "
          f"{c['cold'][0] / best('ours')[0]:.2f}x |")
    print(f"| previous path: `python -c` read + old `correlation_table` (once) | {cell(c['ref'])} | "
          f"{c['ref'][0] / best('ours')[0]:.1f}x |")
    print(f"| `python -c` `evalcore.read` of HANNA alone | {cell(best('read'))} | "
          f"{best('read')[0] / best('ours')[0]:.2f}x |")
    print(f"\nCLI JSON equal to the previous path's: {c['records']} records")


# --------------------------------------------------------------------------- report


def fmt(t: float) -> str:
    return f"{t * 1000:.1f} ms" if t < 1 else f"{t:.2f} s"


def print_slider(n: int, s: dict) -> None:
    r = ratios(s["times"], "ours")
    print(f"\n| slider move, {n:,} pairs ({s['n_items']:,} items) | best | median | reference / ours: best; median |")
    print("|---|---|---|---|")
    labels = {"ours": "ours: `flips` + `decisions` on kept `SuperficialData`", "flips": "&nbsp;&nbsp;`flips`",
              "decisions": "&nbsp;&nbsp;`decisions`",
              "ref_raw": "reference: pandas from the raw table", "ref_prepared": "reference: pandas from a prepared "
              "per-item frame (alpha part only)", "superficial_data": "`superficial_data` (once per dataset; not "
              "on a move)"}
    for k, label in labels.items():
        best, med, rb, rm = r[k]
        ratio = f"{rb:.1f}x; {rm:.1f}x" if k.startswith("ref") else ""
        print(f"| {label} | {fmt(best)} | {fmt(med)} | {ratio} |")


def print_curve(n: int, c: dict, n_boot: int) -> None:
    r = ratios(c["times"], "ours")
    print(f"\n| full curve, {n:,} pairs, 21 alphas x {n_boot:,} resamples, CV 5 folds | best | median | "
          "reference / ours: best; median |")
    print("|---|---|---|---|")
    labels = {"ours": "ours end to end (`superficial_data` + `alpha_curve` + `cross_validated_alpha` x 2)",
              "ours_prep": "&nbsp;&nbsp;`superficial_data`", "ours_curve": "&nbsp;&nbsp;`alpha_curve`",
              "ours_cv": "&nbsp;&nbsp;`cross_validated_alpha`, both subsets",
              "ref": "reference end to end (pandas prepare + naive loops)", "ref_prep": "&nbsp;&nbsp;pandas prepare"}
    for k, label in labels.items():
        best, med, rb, rm = r[k]
        print(f"| {label} | {fmt(best)} | {fmt(med)} | {f'{rb:.1f}x; {rm:.1f}x' if k == 'ref' else ''} |")
    ch = c["check"]
    print(f"\nchecks: {ch['records']} records; point estimates, alpha_cv, accuracy_cv and n equal; "
          f"{ch['intervals']} intervals within {ch['worst_sd']:.2f} bootstrap SD (tolerance {ch['tol']:.2f}; max abs gap "
          f"{ch['worst_abs']:.4f})")
    print("results: " + ", ".join(f"{k} {v:.4f}" for k, v in ch["summary"].items()))


def print_large(n: int, lg: dict, n_boot: int) -> None:
    print(f"\nfull curve on {n:,} pairs, {n_boot:,} resamples:")
    if "error" in lg:
        print(f"  ours: {lg['error']}")
    else:
        print(f"  ours (child process): alpha_curve {fmt(lg['curve'])}, cross_validated_alpha x 2 {fmt(lg['cv'])}, "
              f"peak RSS {lg['maxrss_gb']:.1f} GiB")
    print(f"  reference: prepare {fmt(lg['ref_prep'])}, naive loops on {lg['ref_boot']} resamples {fmt(lg['ref_part'])};"
          f" scaled to {n_boot:,}: {fmt(lg['ref_scaled'])}")
    if "error" not in lg:
        print(f"  ratio reference (scaled) / ours (curve + cv, without superficial_data): "
              f"{lg['ref_scaled'] / (lg['curve'] + lg['cv']):.1f}x")


def print_cli(n: int, c: dict, n_boot: int, size: float) -> None:
    r = ratios(c["times"], "ours")
    print(f"\n| whole process, {n:,} pairs ({size:.1f} MB CSV), --boot {n_boot} | best | median | "
          "ratio to ours: best; median |")
    print("|---|---|---|---|")
    labels = {"ours": "`python -m evalcore.cli superficial ... --json`", "ref": "reference: `python -c` read_csv + "
              "naive loops", "read_csv": "`python -c` pandas.read_csv alone", "import": "`python -c 'import numpy, "
              "pandas'`"}
    for k, label in labels.items():
        best, med, rb, rm = r[k]
        print(f"| {label} | {fmt(best)} | {fmt(med)} | {'' if k == 'ours' else f'{rb:.2f}x; {rm:.2f}x'} |")
    ch = c["check"]
    print(f"\nin-process pandas.read_csv of the file: best {fmt(c['read_in_process'])}; CLI JSON vs reference: "
          f"{ch['records']} records, estimates equal, intervals within {ch['worst_sd']:.2f} SD "
          f"(tolerance {ch['tol']:.2f}; max abs gap {ch['worst_abs']:.4f})")


def print_cli_large(n: int, c: dict, n_boot: int, size: float) -> None:
    show = lambda v: fmt(v) if isinstance(v, float) else v  # noqa: E731
    print(f"\nwhole process on {n:,} pairs ({size:.1f} MB CSV), once each: `python -c` pandas.read_csv "
          f"{show(c['read_csv'])}; CLI --boot 0 {show(c['cli_0'])}; CLI --boot {n_boot} {show(c['cli_boot'])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", default="10000,1000000", help="table sizes, comma-separated (first: curve and CLI)")
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--slider-rounds", type=int, default=7)
    ap.add_argument("--curve-rounds", type=int, default=3)
    ap.add_argument("--cli-rounds", type=int, default=5)
    ap.add_argument("--ref-boot-large", type=int, default=20, help="reference resamples on the large table (scaled)")
    ap.add_argument("--large-limit", type=float, default=180.0, help="seconds allowed for ours' curve on the large table")
    ap.add_argument("--no-cli-large", action="store_true", help="skip the CLI runs on the large table")
    ap.add_argument("--quick", action="store_true", help="smoke run: 2,000 and 20,000 pairs, 100 resamples, 2 rounds")
    ap.add_argument("--section", choices=("all", "pairwise", "pointwise"), default="all",
                    help="pairwise: the simulated comparisons; pointwise: the curve on HANNA (../shared/datasets)")
    ap.add_argument("--hanna-judges", default=",".join(HANNA_JUDGES),
                    help="judges timed against the previous pointwise path (ours is timed on every judge)")
    ap.add_argument("--pointwise-rounds", type=int, default=3)
    args = ap.parse_args()
    if args.quick:
        args.pairs, args.boot, args.slider_rounds, args.curve_rounds, args.cli_rounds = "2000,20000", 100, 2, 1, 2
        args.pointwise_rounds = 1
    sizes = [int(x) for x in args.pairs.split(",")] if args.section != "pointwise" else []
    load0, cpu0 = os.getloadavg(), os.times()
    with tempfile.TemporaryDirectory(prefix="bench-superficial-") as tmpdir:
        tmp = Path(tmpdir)
        for i, n in enumerate(sizes):
            path = tmp / f"comparisons_{n}.csv"
            simulate(n).to_csv(path, index=False)
            raw = pd.read_csv(path)
            size = path.stat().st_size / 2**20
            print(f"\n## {n:,} pairs: {len(raw):,} rows, {size:.1f} MB CSV", flush=True)
            print_slider(n, bench_slider(raw, args.slider_rounds))
            if i == 0:
                print_curve(n, bench_curve(raw, args.curve_rounds, args.boot), args.boot)
                print_cli(n, bench_cli(path, args.cli_rounds, args.boot), args.boot, size)
            else:
                print_large(n, bench_curve_large(raw, args.boot, args.ref_boot_large, args.large_limit, tmp), args.boot)
                if not args.no_cli_large:
                    del raw
                    print_cli_large(n, bench_cli_large(path, args.boot, 2 * args.large_limit), args.boot, size)
            sys.stdout.flush()
    if args.section != "pairwise":
        if not HANNA.exists():
            print(f"\npointwise section skipped: {HANNA} not found")
        else:
            judges = args.hanna_judges.split(",")
            print_pointwise(bench_pointwise(args.boot, args.pointwise_rounds, judges), args.boot)
            cli = bench_pointwise_cli(judges[0], args.boot, args.pointwise_rounds)
            print_pointwise_cli(judges[0], cli, args.boot)
    load1, cpu1 = os.getloadavg(), os.times()
    print(f"\nmachine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
          f"numpy {np.__version__}, pandas {pd.__version__}; load average {load0[0]:.2f} at the start, "
          f"{load1[0]:.2f} at the end; wall {cpu1.elapsed - cpu0.elapsed:.0f} s")
    if args.quick:
        print("quick: a smoke run; the goals are for 10,000 pairs and for HANNA with 1,000 resamples")


if __name__ == "__main__":
    main()
