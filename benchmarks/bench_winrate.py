"""Benchmark: calibrated win rates, Dawid-Skene against its Gibbs reference, and BWRS.

Data (seeded): ``--items`` items compared by two systems A and B, true win rate ``--p`` (share of
items on which A is better), ``--judges`` judges with accuracies ``q0, q1`` drawn uniformly in
[0.6, 0.9], each judging every item; one human label per item, equal to the truth. The data are a
canonical comparisons table (item_id, system_a, system_b, rater, rater_kind, winner, swapped) and
go through ``evalcore.pairwise.pairs.pair_data`` like the app's.

Measured:

* first fit of a fresh process: ``evalcore.pairwise.dawid_skene.dawid_skene`` (nutpie) in a subprocess, from launch to
  result, split into Python start-up, base imports, data, ``pair_data``, the pymc/nutpie imports
  and the first call; a second call on the same data gives the sampling time and the compile time
  (first call minus second). Run once with empty caches (numba's ``NUMBA_CACHE_DIR`` and PyTensor's
  ``base_compiledir`` in a temporary folder: a first run on a new machine) and once more with those
  caches filled (every later process);
* compiled fits: median time of ``--repeat`` fits after the first, with ESS and R-hat of p;
* the reference ``dawid_skene_reference`` (labels sampled by Binary Gibbs-Metropolis),
  same chains, draws and tune; time, speed ratio and agreement of the posterior means of p,
  with Monte Carlo standard errors from ArviZ;
* BWRS with ``--bwrs-samples`` samples per judge at prior ratio ``--ratio``: median of
  ``--bwrs-repeat`` calls.

Goals: first fit <= 20 s; compiled fit <= 2 s with ESS(p) >= 1,000 and R-hat(p) <= 1.01;
reference / ours >= 100x with the means of p within 0.01; BWRS <= 50 ms.

Run: ``python benchmarks/bench_winrate.py [--ref-cores 2] [--ref-priors none,ratio]``
(on 2 quiet cores the reference took 9 minutes without a prior and 6 with ratio 0.3; twice that on a
busy machine); smoke run (under a minute): ``--quick``.
"""

from __future__ import annotations

import time

_T_MODULE = time.time()  # first line run in a fresh process: start-up ends here
_T_IMPORT0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from evalcore.pairwise import dawid_skene as ds_module  # noqa: E402
from evalcore.pairwise.bwrs import bwrs  # noqa: E402
from evalcore.pairwise.dawid_skene import dawid_skene, dawid_skene_reference  # noqa: E402
from evalcore.pairwise.pairs import label_mask, pair_data  # noqa: E402

_T_IMPORT1 = time.perf_counter()

SYS_A, SYS_B = "sysA", "sysB"
GOALS = {"first": 20.0, "fit": 2.0, "ess": 1000.0, "rhat": 1.01, "speedup": 100.0, "mean_diff": 0.01, "bwrs": 0.050}
_CHILD_MARK = "FIRST-FIT-JSON "


# --------------------------------------------------------------------------- data


def simulate(*, n_items: int, n_judges: int, p: float, seed: int) -> tuple[pd.DataFrame, dict]:
    """A comparisons table: every judge and one human (the truth) on every item."""
    rng = np.random.default_rng(seed)
    a_better = rng.random(n_items) < p
    q0 = rng.uniform(0.6, 0.9, n_judges)  # P(judge says A | A better)
    q1 = rng.uniform(0.6, 0.9, n_judges)  # P(judge says B | B better)
    u = rng.random((n_items, n_judges))
    says_a = np.where(a_better[:, None], u < q0, u >= q1)
    items = np.array([f"it{i:06d}" for i in range(n_items)])
    frames = [pd.DataFrame({"item_id": items, "system_a": SYS_A, "system_b": SYS_B, "rater": f"judge{e}",
                            "rater_kind": "judge", "winner": np.where(says_a[:, e], "a", "b"), "swapped": False})
              for e in range(n_judges)]
    frames.append(pd.DataFrame({"item_id": items, "system_a": SYS_A, "system_b": SYS_B, "rater": "human",
                                "rater_kind": "human", "winner": np.where(a_better, "a", "b"), "swapped": False}))
    info = {"p_share": float(a_better.mean()), "q0": q0.tolist(), "q1": q1.tolist()}
    return pd.concat(frames, ignore_index=True), info


# --------------------------------------------------------------------------- helpers


class Spy:
    """Keeps the InferenceData of the last fit (wraps ``dawid_skene._diagnostics``) for ArviZ's MCSE."""

    def __init__(self) -> None:
        self.idata = None
        self._orig = ds_module._diagnostics

    def __call__(self, idata, names):
        self.idata = idata
        return self._orig(idata, names)

    def install(self) -> "Spy":
        ds_module._diagnostics = self
        return self


def posterior_stats(idata) -> dict:
    """ArviZ MCSE of the mean of p, and the worst R-hat / bulk ESS over p, q0, q1."""
    import arviz as az

    names = ["p", "q0", "q1"]
    mcse = float(az.mcse(idata, var_names=["p"], method="mean")["p"].values)
    sd = float(np.asarray(idata.posterior["p"].values).std())
    rh, es = az.rhat(idata, var_names=names), az.ess(idata, var_names=names)
    return {"mcse": mcse, "sd": sd, "worst_rhat": max(float(np.nanmax(rh[v].values)) for v in names),
            "worst_ess": min(float(np.nanmin(es[v].values)) for v in names)}


def quiet() -> None:
    for name in ("pymc", "pytensor", "arviz"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning)


def ours_cores(chains: int) -> int:
    return max(1, min(chains, os.cpu_count() or 1))  # as dawid_skene passes to nutpie


def mark(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def times(x: float) -> str:
    return f"{x:,.0f}x" if x >= 10 else f"{x:.2f}x"


# --------------------------------------------------------------------------- first fit (child process)


def first_fit_child(args: argparse.Namespace) -> None:
    """Runs in a fresh interpreter: time everything up to the first Dawid-Skene result."""
    quiet()
    t = time.perf_counter()
    frame, _ = simulate(n_items=args.items, n_judges=args.judges, p=args.p, seed=args.seed)
    t_sim = time.perf_counter() - t
    t = time.perf_counter()
    pair = pair_data(frame, SYS_A, SYS_B)
    t_pair = time.perf_counter() - t
    t = time.perf_counter()
    import arviz  # noqa: F401
    import nutpie  # noqa: F401
    from statsmodels.nonparametric.kde import KDEUnivariate  # noqa: F401  (the result summary imports it lazily)
    t_imp = time.perf_counter() - t
    kw = dict(chains=args.chains, draws=args.draws, tune=args.tune, seed=args.seed)
    t = time.perf_counter()
    first = dawid_skene(pair, **kw)
    t_first = time.perf_counter() - t
    t_total = time.time() - args.t_launch
    cpu_total = cpu_seconds()
    t = time.perf_counter()
    second = dawid_skene(pair, **kw)
    t_second = time.perf_counter() - t
    out = {"startup": _T_MODULE - args.t_launch, "base_imports": _T_IMPORT1 - _T_IMPORT0, "simulate": t_sim,
           "pair_data": t_pair, "imports": t_imp, "first_call": t_first, "second_call": t_second,
           "compile": t_first - t_second, "total": t_total, "cpu_total": cpu_total, "p_mean": first.p_mean,
           "p_mean_2": second.p_mean, "ess": first.ess, "rhat": first.rhat, "pymc_imported": "pymc" in sys.modules}
    print(_CHILD_MARK + json.dumps(out), flush=True)


def run_first_fit(args: argparse.Namespace, compiledir: str | None) -> dict:
    """The child's timings; ``compiledir`` holds the numba and PyTensor caches to use (None: the user's own)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--first-fit-only", "--items", str(args.items),
           "--judges", str(args.judges), "--p", str(args.p), "--seed", str(args.seed), "--chains", str(args.chains),
           "--draws", str(args.draws), "--tune", str(args.tune)]
    env = dict(os.environ)
    if compiledir is not None:
        env["PYTENSOR_FLAGS"] = ",".join(f for f in (env.get("PYTENSOR_FLAGS", ""), f"base_compiledir={compiledir}")
                                         if f)
        env["NUMBA_CACHE_DIR"] = os.path.join(compiledir, "numba")
    t_launch = time.time()
    proc = subprocess.run(cmd + ["--t-launch", repr(t_launch)], env=env, capture_output=True, text=True)
    wall = time.time() - t_launch
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith(_CHILD_MARK)), None)
    if proc.returncode != 0 or line is None:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"the first-fit subprocess failed (exit {proc.returncode})")
    out = json.loads(line[len(_CHILD_MARK):])
    out["process_wall"] = wall
    return out


# --------------------------------------------------------------------------- main


def cpu_seconds() -> float:
    """User + system CPU time of this process (all threads) and of its finished child processes."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def timed_cpu(fn):
    """Wall and CPU seconds of ``fn()`` (CPU includes the reference's worker processes)."""
    c, t = cpu_seconds(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t, cpu_seconds() - c, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--judges", type=int, default=8)
    ap.add_argument("--p", type=float, default=0.7, help="true win rate of system A")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--tune", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5, help="compiled Dawid-Skene fits to time (median)")
    ap.add_argument("--ratio", type=float, default=0.3, help="share of human labels used (BWRS, ratio prior)")
    ap.add_argument("--bwrs-samples", type=int, default=10_000, help="BWRS samples per judge")
    ap.add_argument("--bwrs-repeat", type=int, default=20)
    ap.add_argument("--ref-cores", type=int, default=1, help="processes for the reference's chains")
    ap.add_argument("--ref-priors", default="none",
                    help="comma-separated priors for the reference: none (main comparison), ratio (--ratio)")
    ap.add_argument("--no-reference", action="store_true", help="skip the (slow) reference")
    ap.add_argument("--first-fit", default="cold,warm",
                    help="first-fit runs, comma-separated: cold (empty numba and PyTensor caches in a temporary "
                         "folder), warm (those caches filled), default (the user's caches as they are), or none")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 100 items, 4 x 100 draws, first fit with the user's cache only, few repeats")
    ap.add_argument("--first-fit-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--t-launch", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.first_fit_only:
        first_fit_child(args)
        return
    if args.quick:
        args.items, args.draws, args.tune = 100, 100, 100
        args.repeat, args.bwrs_repeat, args.first_fit = 3, 5, "default"
    quiet()
    load0 = os.getloadavg()
    command = "python benchmarks/bench_winrate.py " + " ".join(sys.argv[1:])
    kinds = [k.strip() for k in args.first_fit.split(",") if k.strip() and k.strip() != "none"]
    ref_priors = [] if args.no_reference else [k.strip() for k in args.ref_priors.split(",") if k.strip()]
    for k in ref_priors:
        if k not in ("none", "ratio"):
            raise SystemExit(f"unknown reference prior '{k}': use none or ratio")
    kw = dict(chains=args.chains, draws=args.draws, tune=args.tune)
    cores = ours_cores(args.chains)

    # data and pair_data
    frame, info = simulate(n_items=args.items, n_judges=args.judges, p=args.p, seed=args.seed)
    t_pairs = []
    for _ in range(5):
        t, pair = timed(lambda: pair_data(frame, SYS_A, SYS_B))
        t_pairs.append(t)
    t_pair = statistics.median(t_pairs)
    mask = label_mask(pair, args.ratio, seed=args.seed)
    print(f"data: {args.items:,} items x {args.judges} judges + 1 human label each = {len(frame):,} rows; "
          f"p = {args.p} (realised share {info['p_share']:.3f}), seed {args.seed}; k observed {pair.k_observed:.3f}; "
          f"{ds_module._patterns(pair, None)[2].size} distinct verdict patterns", flush=True)

    # first fit in fresh processes (before anything heavy is imported here)
    first: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-winrate-caches-") as cdir:
        for kind in ("cold", "warm", "default"):
            if kind in kinds:
                if kind == "warm" and "cold" not in kinds:
                    run_first_fit(args, cdir)  # fill the cache first
                first[kind] = run_first_fit(args, None if kind == "default" else cdir)
                f = first[kind]
                print(f"first fit ({kind} cache): {f['total']:.2f} s to the first result "
                      f"(imports {f['imports']:.2f}, compile {f['compile']:.2f}, sample {f['second_call']:.2f})",
                      flush=True)

    # compiled fits in this process
    spy = Spy().install()
    t_first_here, _ = timed(lambda: dawid_skene(pair, seed=args.seed, **kw))
    fits, cpus = [], []
    stats_ours = None
    for r in range(args.repeat):
        t, c, res = timed_cpu(lambda: dawid_skene(pair, seed=args.seed + 1 + r, **kw))
        fits.append((t, res))
        cpus.append(c)
        if r == 0:
            stats_ours = posterior_stats(spy.idata)
    t_fit = statistics.median(t for t, _ in fits)
    cpu_fit = statistics.median(cpus)
    ours = fits[0][1]
    ess_min = min(r.ess for _, r in fits)
    rhat_max = max(r.rhat for _, r in fits)
    print(f"compiled fit: median {t_fit:.3f} s over {args.repeat} (ESS(p) >= {ess_min:.0f}, "
          f"R-hat(p) <= {rhat_max:.4f})", flush=True)

    ours_ratio = None
    if "ratio" in ref_priors:
        rfits, rcpus = [], []
        for r in range(args.repeat):
            t, c, res = timed_cpu(lambda: dawid_skene(pair, labelled=mask, seed=args.seed + 1 + r, **kw))
            rfits.append((t, res))
            rcpus.append(c)
            if r == 0:
                rstats = posterior_stats(spy.idata)
        ours_ratio = {"t": statistics.median(t for t, _ in rfits), "cpu": statistics.median(rcpus),
                      "res": rfits[0][1], "stats": rstats}

    # BWRS
    t_bw = []
    for r in range(args.bwrs_repeat):
        t, bw = timed(lambda: bwrs(pair, labelled=mask, n_samples=args.bwrs_samples, seed=args.seed + r))
        t_bw.append(t)
    t_bwrs = statistics.median(t_bw)
    print(f"BWRS: median {1000 * t_bwrs:.1f} ms over {args.bwrs_repeat}", flush=True)

    # reference
    refs = {}
    for kind in ref_priors:
        lab = mask if kind == "ratio" else None
        print(f"reference ({kind}) on {args.ref_cores} core(s) ...", flush=True)
        t, c, res = timed_cpu(lambda: dawid_skene_reference(pair, labelled=lab, seed=args.seed,
                                                                    cores=args.ref_cores, **kw))
        refs[kind] = {"t": t, "cpu": c, "res": res, "stats": posterior_stats(spy.idata)}
        print(f"reference ({kind}): {t:.1f} s ({c:.1f} s CPU), p mean {res.p_mean:.4f}", flush=True)

    # ------------------------------------------------------------------- report
    rows = []  # (what, value, goal, verdict)
    labels = {"cold": "empty numba/PyTensor caches", "warm": "caches filled", "default": "user's caches"}
    for key, kind in labels.items():
        f = first.get(key)
        if f is None:
            continue
        rows.append((f"first fit, fresh process, {kind}: launch to result",
                     f"{f['total']:.2f} s (CPU {f['cpu_total']:.1f} s)", "<= 20 s",
                     mark(f["total"] <= GOALS["first"])))
        rows.append(("  Python start-up + numpy/pandas/evalcore imports",
                     f"{f['startup']:.2f} + {f['base_imports']:.2f} s", "", ""))
        rows.append(("  simulate data + pair_data", f"{f['simulate']:.2f} + {f['pair_data']:.3f} s", "", ""))
        rows.append(("  import nutpie, arviz, statsmodels KDE", f"{f['imports']:.2f} s", "", ""))
        rows.append(("  first dawid_skene call = load or compile the kernel + sample",
                     f"{f['first_call']:.2f} = {f['compile']:.2f} + {f['second_call']:.2f} s", "", ""))
    rows.append((f"pair_data ({len(frame):,} rows, median of 5)", f"{1000 * t_pair:.1f} ms", "", ""))
    rows.append(("first dawid_skene call in this process (imports + compile + sample)", f"{t_first_here:.2f} s",
                 "", ""))
    rows.append((f"compiled fit, median of {args.repeat} (nutpie, {args.chains} chains on {cores} cores)",
                 f"{t_fit:.3f} s", "<= 2 s", mark(t_fit <= GOALS["fit"])))
    rows.append(("  fastest / slowest repeat", f"{min(t for t, _ in fits):.3f} / {max(t for t, _ in fits):.3f} s",
                 "", ""))
    rows.append(("  CPU time per fit (all threads), median", f"{cpu_fit:.3f} s", "", ""))
    rows.append(("  ESS(p) bulk, lowest of the repeats", f"{ess_min:.0f}", ">= 1,000", mark(ess_min >= GOALS["ess"])))
    rows.append(("  R-hat(p), highest of the repeats", f"{rhat_max:.4f}", "<= 1.01", mark(rhat_max <= GOALS["rhat"])))
    rows.append(("  worst over p, q0, q1 (first repeat): R-hat / ESS",
                 f"{stats_ours['worst_rhat']:.4f} / {stats_ours['worst_ess']:.0f}", "", ""))
    rows.append((f"BWRS, ratio {args.ratio:g}, {args.bwrs_samples:,} samples/judge, median of {args.bwrs_repeat}",
                 f"{1000 * t_bwrs:.1f} ms", "<= 50 ms", mark(t_bwrs <= GOALS["bwrs"])))
    rows.append(("  fastest / slowest repeat", f"{1000 * min(t_bw):.1f} / {1000 * max(t_bw):.1f} ms", "", ""))
    rows.append(("  BWRS p mean (pooled)", f"{bw.p_mean:.4f}", "", ""))
    for kind, ref in refs.items():
        o = {"t": t_fit, "cpu": cpu_fit, "res": ours, "stats": stats_ours} if kind == "none" else ours_ratio
        name = "no prior" if kind == "none" else f"ratio {args.ratio:g}"
        rr, orr = ref["res"], o["res"]
        diff = abs(rr.p_mean - orr.p_mean)
        se = (ref["stats"]["mcse"] ** 2 + o["stats"]["mcse"] ** 2) ** 0.5
        speed = ref["t"] / o["t"]
        rows.append((f"reference, {name}: BinaryGibbsMetropolis + NUTS, {args.chains} chains on {args.ref_cores} "
                     f"core(s)", f"{ref['t']:.1f} s (CPU {ref['cpu']:.1f} s)", "", ""))
        if kind == "ratio":
            rows.append((f"  ours, {name}: compiled fit, median of {args.repeat}",
                         f"{o['t']:.3f} s (CPU {o['cpu']:.3f} s)", "", ""))
        fair = "" if args.ref_cores == cores else f" (NOT like for like: ours on {cores} cores)"
        rows.append((f"  speed ratio reference / ours compiled{fair}", times(speed), ">= 100x",
                     mark(speed >= GOALS["speedup"])))
        rows.append(("  CPU-time ratio reference / ours compiled", times(ref["cpu"] / o["cpu"]), "", ""))
        if kind == "none":
            rows.append(("  speed ratio reference / ours incl. compile (first call here)",
                         times(ref["t"] / t_first_here), "", ""))
        rows.append(("  p mean: ours +- MCSE", f"{orr.p_mean:.4f} +- {o['stats']['mcse']:.4f}", "", ""))
        rows.append(("  p mean: reference +- MCSE", f"{rr.p_mean:.4f} +- {ref['stats']['mcse']:.4f}", "", ""))
        rows.append(("  difference of the means (combined MCSE)", f"{diff:.4f} ({se:.4f})", "<= 0.01",
                     mark(diff <= GOALS["mean_diff"])))
        rows.append(("  95% interval: ours / reference",
                     f"[{orr.ci_low:.3f}, {orr.ci_high:.3f}] / [{rr.ci_low:.3f}, {rr.ci_high:.3f}]", "", ""))
        rows.append(("  reference ESS(p) / R-hat(p) / worst R-hat", f"{rr.ess:.0f} / {rr.rhat:.4f} / "
                     f"{ref['stats']['worst_rhat']:.4f}", "", ""))

    machine = (f"{platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
               f"numpy {np.__version__}, pandas {pd.__version__}")
    try:
        import arviz
        import nutpie
        import pymc
        import pytensor
        machine += (f", pymc {pymc.__version__}, pytensor {pytensor.__version__}, nutpie {nutpie.__version__}, "
                    f"arviz {arviz.__version__}")
    except ImportError:
        pass
    load1 = os.getloadavg()
    load = (f"load average (1/5/15 min) {load0[0]:.2f}/{load0[1]:.2f}/{load0[2]:.2f} at the start, "
            f"{load1[0]:.2f}/{load1[1]:.2f}/{load1[2]:.2f} at the end ({os.cpu_count()} cpus)")
    width = max(len(r[0]) for r in rows)
    print()
    for what, val, goal, ok in rows:
        print(f"{what:<{width}}  {val:>30}  {goal:>9}  {ok}")
    print(f"machine: {machine}")
    print(load)
    if args.quick:
        print("quick: a smoke run; the goals are for the full settings (1,000 items, 4 x 1,000 draws)")
    print(f"truth: p = {args.p} (realised {info['p_share']:.3f}); ours' mean {ours.p_mean:.4f}, "
          f"95% [{ours.ci_low:.3f}, {ours.ci_high:.3f}]; observed k {pair.k_observed:.3f}")

    print("\n--- markdown ---\n")
    print(f"- Command: `{command}`")
    print(f"- Machine: {machine}; {load}.")
    print(f"- Data: {args.items:,} items x {args.judges} judges (q0, q1 uniform in [0.6, 0.9]) + one human label "
          f"per item; p = {args.p} (realised {info['p_share']:.3f}), seed {args.seed}; {args.chains} chains x "
          f"{args.draws:,} draws, tune {args.tune:,}.")
    print()
    print("| measure | value | goal | verdict |")
    print("|---|---|---|---|")
    for what, val, goal, ok in rows:
        what = what.replace("  ", "&nbsp;&nbsp;", 1) if what.startswith("  ") else what
        print(f"| {what} | {val} | {goal} | {f'**{ok}**' if ok else ''} |")


if __name__ == "__main__":
    main()
