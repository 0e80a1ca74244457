"""One declaration per analysis: its name, version, parameters and compute function.

A page asks an analysis for its result on the current dataset with keyword options, and can ask
first whether that result is ready (so that a long computation waits for a button)::

    if ui.WINRATE_CURVE.ready(**opts) or st.button("Compute"):
        curve = ui.WINRATE_CURVE.result(**opts)

Both derive the cache key from the same declaration (``name``, ``version`` and ``params(**opts)``),
so the check and the run cannot drift apart. Each analysis has its own ``version``: bump it when
the meaning of its stored results changes, and only its results are recomputed.

Each ``compute`` below is a thin adapter that calls one evalcore function, named in its docstring:
that function is where the statistic is computed and documented.
"""

from __future__ import annotations

import os
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd
import streamlit as st

from ..columns import COMPARISONS, RATINGS
from . import cache
from .cache import Dataset, Progress
from .state import current, guard

Compute = Callable[[Dataset, dict, Progress], Any]


@dataclass(frozen=True)
class Analysis:
    """An analysis of the current dataset, declared once.

    Attributes
    ----------
    name, version
        The prefix of the cache key (``name:v<version>:<params as JSON>``). Bump ``version`` when
        the meaning of this analysis's results changes.
    params
        Keyword options -> the JSON-able parameters that identify one result.
    compute
        ``compute(dataset, params, progress)`` -> the result. A stored result must be a DataFrame
        or a JSON-able dict (what the workspace keeps).
    label
        ``label(dataset, params)`` -> the text shown while computing (None: no indicator).
    decode
        What :meth:`result` returns, from what is stored (default: the stored value itself).
    stored
        True: kept in memory and in the workspace, computed under a progress bar. False: a plot
        table, cheap to recompute, kept in memory only and computed under a spinner.
    """

    name: str
    version: int
    params: Callable[..., dict]
    compute: Compute
    label: Callable[[Dataset, dict], str] | None = None
    decode: Callable[[Any], Any] | None = None
    stored: bool = True

    def key(self, **opts) -> str:
        """The cache key of the result for these options."""
        return cache.result_key(self.name, self.version, self.params(**opts))

    def ready(self, **opts) -> bool:
        """Whether :meth:`result` with these options would answer without computing."""
        return cache.has_result(current(), self.key(**opts), stored=self.stored)

    def result(self, **opts) -> Any:
        """The result on the current dataset: from memory, the workspace, or computed now."""
        data = current()
        params = self.params(**opts)
        label = (lambda: self.label(data, params)) if self.label else None
        out = cache.cached_result(data, cache.result_key(self.name, self.version, params),
                                  lambda progress: self.compute(data, params, progress), label=label,
                                  stored=self.stored)
        return self.decode(out) if self.decode else out

    def points_first(self, *, budget: float | None = None, **opts) -> tuple[Any, bool]:
        """The result with its intervals if they take at most ``budget`` seconds (default
        :func:`points_first_budget`); otherwise the point estimates now (``n_boot=0``) while the intervals go
        on in the background.

        Returns ``(result, pending)``. When ``pending``, a note here says that the intervals and flags
        follow, with a progress bar that a fragment refreshes twice a second; once the resampling is done it
        reruns the page, which then draws the intervals and flags. Nothing blocks meanwhile: the page's
        controls stay usable. A small dataset thus opens once, complete; a large one shows its numbers at
        once instead of a progress bar alone.
        """
        if not opts.get("n_boot") or self.ready(**opts):
            return self.result(**opts), False
        data = current()
        params = self.params(**opts)
        job = cache.compute_in_background(data, cache.result_key(self.name, self.version, params),
                                          lambda progress: self.compute(data, params, progress),
                                          stored=self.stored)
        try:
            out = job.wait(timeout=points_first_budget() if budget is None else budget)
        except FutureTimeout:
            _intervals_follow(job, opts["n_boot"])
            return self.result(**{**opts, "n_boot": 0}), True
        return (self.decode(out) if self.decode else out), False


#: Text of the note shown while the intervals are computed (the browser tests wait for it to go).
PENDING_NOTE = "Point estimates first"


def points_first_budget() -> float:
    """How long a page waits for its intervals before it shows the point estimates first, in seconds:
    ``EVALCORE_POINTS_FIRST_AFTER``, default 2. The test suite raises it, so that a page test sees the finished
    page whatever the machine's load; the tests of this behaviour set it."""
    try:
        return float(os.environ.get("EVALCORE_POINTS_FIRST_AFTER", "2"))
    except ValueError:
        return 2.0


@st.fragment(run_every=0.5)
def _intervals_follow(job: cache.Background, n_boot: int) -> None:
    """The note and progress bar of a result shown as point estimates; reruns the page when the intervals are in."""
    if job.done():
        with guard("Computing the intervals"):
            job.wait()  # an error is shown here, once: a rerun would start the same failing job again
            st.rerun()  # the whole page, which now finds the result ready
        return
    st.info(f"{PENDING_NOTE}: the 95% intervals and the flags follow as soon as {n_boot:,} resamples are done.",
            icon=":material/hourglass_top:")
    st.progress(job.fraction, text="Resampling for the 95% intervals and the flags...")


def _names(judges) -> list | None:
    return list(judges) if judges is not None else None


def _picked(judges) -> tuple | None:
    """A stored judge list back as the tuple the page passed (None: every judge)."""
    return tuple(judges) if judges else None


# --------------------------------------------------------------------------- inputs


def units():
    """The current ratings reduced to per-unit counts (:func:`evalcore.pointwise.agreement.units.count_units`)."""
    return cache.units(current())


def comparison_pairs() -> pd.DataFrame:
    """The system pairs of the current comparisons (:func:`evalcore.pairwise.pairs.pairs`; raises
    NotApplicable without systems)."""
    return cache.pairs(current())


def pair_data(a: str, b: str, *, judges: tuple | None, ties: str, seed: int):
    """:func:`evalcore.pairwise.pairs.pair_data` on the current dataset (cached per pair and options)."""
    return cache.pair(current(), a, b, judges=judges, ties=ties, seed=seed)


# --------------------------------------------------------------------------- agreement


def _bootstrap_params(*, by: tuple, judges: tuple | None, n_boot: int, seed: int) -> dict:
    return {"by": list(by), "judges": _names(judges), "n_boot": n_boot, "seed": seed}


def _agreement_params(*, by: tuple, judges: tuple | None, n_boot: int, seed: int, min_raters: int | None = None,
                      max_raters: int | None = None) -> dict:
    return {**_bootstrap_params(by=by, judges=judges, n_boot=n_boot, seed=seed), "min_raters": min_raters,
            "max_raters": max_raters}


def _agreement(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.agreement.table.agreement` on the dataset's units (only those with ``min_raters`` to
    ``max_raters`` human ratings, :func:`evalcore.pointwise.agreement.filter.filter_units`)."""
    from ..pointwise.agreement.table import agreement

    judges = tuple(p["judges"]) if p["judges"] is not None else None
    return agreement(cache.units(data), by=tuple(p["by"]), judges=judges, n_boot=p["n_boot"], seed=p["seed"],
                     min_raters=p["min_raters"], max_raters=p["max_raters"], progress=progress)


AGREEMENT = Analysis(
    "agreement", 3, _agreement_params, _agreement,
    label=lambda data, p: f"Bootstrapping {p['n_boot']:,} resamples per cell...")


def unit_filter(*, min_raters: int | None, max_raters: int | None):
    """:func:`evalcore.pointwise.agreement.filter.filter_units` of the current units: its ``unit_filter`` (kept and
    dropped counts), or None without bounds."""
    from ..pointwise.agreement.filter import filter_units

    return filter_units(cache.units(current()), min_raters=min_raters, max_raters=max_raters).unit_filter


def _meta(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.meta.meta_correlations` (system and input level) on the dataset's ratings."""
    from ..pointwise.meta import meta_correlations

    return meta_correlations(cache.table(data, RATINGS), by=tuple(p["by"]), judges=_picked(p["judges"]),
                             n_boot=p["n_boot"], seed=p["seed"])


META = Analysis("meta", 1, _bootstrap_params, _meta,
                label=lambda data, p: f"Correlating systems and inputs ({p['n_boot']:,} resamples)...")


def _system_means(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.meta.system_means` on the dataset's ratings (what the system level correlates)."""
    from ..pointwise.meta import system_means

    return system_means(cache.table(data, RATINGS), by=tuple(p["by"]), judges=_picked(p["judges"]),
                        n_boot=p["n_boot"], seed=p["seed"])


SYSTEM_MEANS = Analysis("system_means", 1, _bootstrap_params, _system_means,
                        label=lambda data, p: f"Averaging each system's scores ({p['n_boot']:,} resamples)...")


def _leaderboard(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.leaderboard.judge_leaderboard` on the dataset's ratings."""
    from ..pointwise.leaderboard import judge_leaderboard

    return judge_leaderboard(cache.table(data, RATINGS), by=tuple(p["by"]), judges=_picked(p["judges"]),
                             measures=tuple(p["measures"]), n_boot=p["n_boot"], seed=p["seed"])


LEADERBOARD = Analysis(
    "leaderboard", 1,
    lambda *, by, judges, measures, n_boot, seed: {**_bootstrap_params(by=by, judges=judges, n_boot=n_boot,
                                                                       seed=seed), "measures": list(measures)},
    _leaderboard, label=lambda data, p: f"Ranking the judges ({p['n_boot']:,} paired resamples)...")


def _rater_pairs(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.rater_pairs.rater_pair_matrix` on the dataset's ratings."""
    from ..pointwise.rater_pairs import rater_pair_matrix

    return rater_pair_matrix(cache.table(data, RATINGS), by=tuple(p["by"]), judges=_picked(p["judges"]),
                             n_boot=p["n_boot"], seed=p["seed"])


RATER_PAIRS = Analysis("rater_pairs", 1, _bootstrap_params, _rater_pairs,
                       label=lambda data, p: "Comparing every pair of raters...")


def _class_distribution(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.distributions.class_distribution` on the dataset's units."""
    from ..pointwise.distributions import class_distribution

    return class_distribution(cache.units(data), by=tuple(p["by"]))


CLASS_DISTRIBUTION = Analysis("class_distribution", 1, lambda *, by: {"by": list(by)}, _class_distribution,
                              stored=False)


def _confusion(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.confusion.confusion_matrix` of one judge on the dataset's units."""
    from ..pointwise.confusion import confusion_matrix

    return confusion_matrix(cache.units(data), judges=[p["judge"]], by=tuple(p["by"]))


CONFUSION = Analysis("confusion_matrix", 1, lambda *, judge, by: {"judge": judge, "by": list(by)}, _confusion,
                     stored=False)


# --------------------------------------------------------------------------- bias


def _bias_report(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.bias_report.bias_report` on the dataset's ratings (its table)."""
    from ..pointwise.bias_report import bias_report

    judges = tuple(p["judges"]) if p["judges"] is not None else None
    return bias_report(cache.table(data, RATINGS), by=tuple(p["by"]), judges=judges, n_boot=p["n_boot"],
                       seed=p["seed"], progress=progress)


def _as_bias_report(records: pd.DataFrame):
    from ..pointwise.bias_report import BiasReport

    return BiasReport(records)


BIAS = Analysis(
    "bias", 3, _bootstrap_params, _bias_report, decode=_as_bias_report,
    label=lambda data, p: f"Running the bias diagnostics ({p['n_boot']:,} resamples)...")


def _score_frequencies(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.scale_use.score_frequencies` on the dataset's ratings."""
    from ..pointwise.scale_use import score_frequencies

    return score_frequencies(cache.table(data, RATINGS), **p)


def _perplexity_by_score(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.familiarity.perplexity_by_score` on the dataset's ratings."""
    from ..pointwise.familiarity import perplexity_by_score

    return perplexity_by_score(cache.table(data, RATINGS), **p)


def _criterion_correlations(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.anchoring.criterion_correlations` on the dataset's ratings."""
    from ..pointwise.anchoring import criterion_correlations

    return criterion_correlations(cache.table(data, RATINGS), **p)


def _conditional_distribution(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.anchoring.conditional_distribution` on the dataset's ratings."""
    from ..pointwise.anchoring import conditional_distribution

    return conditional_distribution(cache.table(data, RATINGS), **p)


def _computing(data: Dataset, p: dict) -> str:
    return "Computing..."


SCORE_FREQUENCIES = Analysis(
    "score_frequencies", 1, lambda *, by, judges: {"by": list(by), "judges": list(judges)}, _score_frequencies,
    label=_computing, stored=False)
PERPLEXITY_BY_SCORE = Analysis(
    "perplexity_by_score", 1,
    lambda *, judges, n_boot, seed: {"judges": list(judges), "n_boot": n_boot, "seed": seed},
    _perplexity_by_score, label=_computing, stored=False)
CRITERION_CORRELATIONS = Analysis(
    "criterion_correlations", 1,
    lambda *, judges, n_boot, seed: {"judges": list(judges), "n_boot": n_boot, "seed": seed},
    _criterion_correlations, label=_computing, stored=False)
CONDITIONAL_DISTRIBUTION = Analysis(
    "conditional_distribution", 1,
    lambda *, given, target, threshold, judges, n_boot, seed: {
        "given": given, "target": target, "threshold": float(threshold), "judges": list(judges), "n_boot": n_boot,
        "seed": seed},
    _conditional_distribution, label=_computing, stored=False)


# --------------------------------------------------------------------------- win rates


def _winrate_params(*, a: str, b: str, method: str, prior: str, judges: tuple | None, ties: str, seed: int) -> dict:
    return {"a": a, "b": b, "method": method, "prior": prior, "judges": list(judges) if judges else None,
            "ties": ties, "seed": seed}


def _winrate(data: Dataset, p: dict, progress: Progress) -> dict:
    """:func:`evalcore.pairwise.winrate.estimate` for one pair (a WinRate record with its density)."""
    from ..pairwise.winrate import estimate

    pair = cache.pair(data, p["a"], p["b"], judges=_picked(p["judges"]), ties=p["ties"], seed=p["seed"])
    return estimate(cache.table(data, COMPARISONS), p["a"], p["b"], method=p["method"], prior=p["prior"],
                    ties=p["ties"], seed=p["seed"], pair=pair).to_record(density=True)


def _winrate_label(data: Dataset, p: dict) -> str:
    from ..pairwise.dawid_skene import is_compiled

    if p["method"] != "ds":
        return "Sampling BWRS..."
    return ("Fitting the Dawid-Skene model..." if is_compiled() else
            "Loading the sampler and fitting the Dawid-Skene model (a few seconds the first time)...")


def _as_winrate(record: dict):
    from ..pairwise.result import WinRate

    return WinRate.from_record(record)


WINRATE = Analysis("winrate", 2, _winrate_params, _winrate, label=_winrate_label, decode=_as_winrate)


def _winrate_all_params(*, method: str, prior: str, baseline: str | None, judges: tuple | None, ties: str, seed: int,
                        ood_auto: bool) -> dict:
    return {"method": method, "prior": prior, "baseline": baseline, "judges": list(judges) if judges else None,
            "ties": ties, "seed": seed, "ood_auto": ood_auto}


def _winrate_all(data: Dataset, p: dict, progress: Progress) -> dict:
    """:func:`evalcore.pairwise.winrate.estimate_all`: every pair's WinRate record."""
    from ..pairwise.winrate import estimate_all

    results = estimate_all(cache.table(data, COMPARISONS), method=p["method"], prior=p["prior"],
                           baseline=p["baseline"], judges=_picked(p["judges"]), ties=p["ties"], seed=p["seed"],
                           ood_auto=p["ood_auto"], progress=progress)
    return {"records": [r.to_record() for r in results]}


def _as_winrates(out: dict) -> list:
    from ..pairwise.result import WinRate

    return [WinRate.from_record(r) for r in out["records"]]


WINRATE_ALL = Analysis(
    "winrate_all", 2, _winrate_all_params, _winrate_all, decode=_as_winrates,
    label=lambda data, p: f"Calibrating every pair ({'BWRS' if p['method'] == 'bwrs' else 'Dawid-Skene'})...")


def _curve_params(*, a: str | None, b: str | None, judges: tuple | None, ties: str, seed: int, repeats: int) -> dict:
    return {"a": a, "b": b, "judges": list(judges) if judges and a is not None else None, "ties": ties,
            "seed": seed, "repeats": repeats}


def _curve_target(data: Dataset, p: dict):
    """One pair's data, or (``a`` is None) every pair with human and judge rows, all judges."""
    if p["a"] is not None:
        return cache.pair(data, p["a"], p["b"], judges=_picked(p["judges"]), ties=p["ties"], seed=p["seed"])
    return [cache.pair(data, r.system_a, r.system_b, judges=None, ties=p["ties"], seed=p["seed"])
            for r in cache.pairs(data).itertuples() if r.n_human_rows > 0 and r.n_judge_rows > 0]


def _error_curve(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pairwise.winrate.error_curve` for one pair, or averaged over every labelled pair."""
    from ..pairwise.winrate import error_curve

    return error_curve(_curve_target(data, p), repeats=p["repeats"], seed=p["seed"], progress=progress)


def _curve_label(data: Dataset, p: dict) -> str:
    if p["a"] is None:
        what = f"{len(_curve_target(data, p))} pairs x 10 ratios x {p['repeats']} subsets"
    else:
        what = f"10 ratios x {p['repeats']} subsets"
    return f"Refitting both methods at {what}..."


WINRATE_CURVE = Analysis("winrate_curve", 2, _curve_params, _error_curve, label=_curve_label)

# --------------------------------------------------------------------------- superficial quality


def _superficial_params(*, kind: str, judge: str, q: str, by: tuple, n_boot: int, seed: int, folds: int = 5) -> dict:
    return {"kind": kind, "judge": judge, "q": q, "by": list(by), "n_boot": n_boot, "seed": seed, "folds": folds}


def superficial_data(*, kind: str, judge: str, q: str, by: tuple):
    """The per-item arrays of one judge (cached): what the alpha slider recomputes from."""
    return cache.superficial(current(), kind, judge=judge, q=q, by=by)


def _superficial_curve(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pairwise.superficial.superficial_table` (comparisons) or
    :func:`evalcore.pointwise.superficial.correlation_table` (ratings) for one judge."""
    sd = cache.superficial(data, p["kind"], judge=p["judge"], q=p["q"], by=tuple(p["by"]))
    if p["kind"] == COMPARISONS:
        from ..pairwise.superficial import superficial_table as table_of
    else:
        from ..pointwise.superficial import correlation_table as table_of
    return table_of(sd, folds=p["folds"], n_boot=p["n_boot"], seed=p["seed"])


SUPERFICIAL_CURVE = Analysis(
    "superficial_curve", 1, _superficial_params, _superficial_curve,
    label=lambda data, p: f"Bootstrapping the curve over 21 alphas ({p['n_boot']:,} resamples)...")


def _length_controlled(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pairwise.superficial.length_controlled` (AlpacaEval's minimal GLM, each system pair fitted on
    its own) for one judge, with the subtracted win rate at every alpha of the slider's grid (so that a slider move
    only selects rows)."""
    from ..pairwise.superficial import length_controlled

    return length_controlled(cache.table(data, COMPARISONS), judges=p["judge"], alpha=p["alphas"], q=p["q"],
                             n_boot=p["n_boot"], seed=p["seed"])


LENGTH_CONTROLLED = Analysis(
    "length_controlled", 1,
    lambda *, judge, alphas, q, n_boot, seed: {"judge": judge, "alphas": [float(a) for a in alphas], "q": q,
                                               "n_boot": n_boot, "seed": seed},
    _length_controlled,
    label=lambda data, p: f"Fitting AlpacaEval's length-controlled GLM per system pair ({p['n_boot']:,} resamples)...")

# --------------------------------------------------------------------------- position bias


def _position_params(*, judges: tuple, by: tuple, methods: tuple, share: float, n_boot: int, seed: int,
                     saved: str | None = None) -> dict:
    return {"judges": list(judges), "by": list(by), "methods": list(methods), "share": float(share),
            "n_boot": n_boot, "seed": seed, "saved": saved}


def _position(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pairwise.position.position_report`; ``saved``: a calibration file's JSON applied instead
    of fitting (:func:`evalcore.pairwise.position.loads_calibrations`)."""
    from ..pairwise.position import loads_calibrations, position_report

    given = loads_calibrations(p["saved"], file="the uploaded calibration") if p["saved"] else ()
    return position_report(cache.table(data, COMPARISONS), judges=tuple(p["judges"]), by=tuple(p["by"]),
                           methods=tuple(p["methods"]), estimation_share=p["share"], calibrations=given,
                           n_boot=p["n_boot"], seed=p["seed"])


POSITION = Analysis("position", 1, _position_params, _position,
                    label=lambda data, p: f"Measuring position bias and calibrating ({p['n_boot']:,} resamples)...")


def _calibrations(data: Dataset, p: dict, progress: Progress) -> dict:
    """:func:`evalcore.pairwise.position.fit_calibrations` (the fits the report applies), as saved JSON."""
    from ..pairwise.position import dumps_calibrations, fit_calibrations

    cals = fit_calibrations(cache.table(data, COMPARISONS), judges=tuple(p["judges"]),
                            methods=[m for m in p["methods"] if m != "none"], estimation_share=p["share"],
                            seed=p["seed"])
    return {"json": dumps_calibrations(cals)}


def _as_calibrations(out: dict) -> tuple:
    from ..pairwise.position import loads_calibrations

    return loads_calibrations(out["json"])


CALIBRATIONS = Analysis(
    "calibrations", 1,
    lambda *, judges, methods, share, seed: {"judges": list(judges), "methods": list(methods), "share": float(share),
                                             "seed": seed},
    _calibrations, decode=_as_calibrations, label=lambda data, p: "Fitting the calibrations...")

# --------------------------------------------------------------------------- the HTML report


def _report(data: Dataset, p: dict, progress: Progress) -> dict:
    """:func:`evalcore.report.html.build_report` of one of the dataset's tables: the self-contained HTML."""
    from ..data.ingest import Ingested
    from ..report.html import build_report

    ws = cache.workspace_at(data.path)
    info = next(d for d in ws.list_datasets() if d.id == data.id)
    notes = tuple(ws.table_meta(data.id, p["kind"])["notes"])
    ing = Ingested(table=p["kind"], frame=cache.table(data, p["kind"]), source=info.source or info.name,
                   notes=notes)
    return {"html": build_report(ing, n_boot=p["n_boot"], seed=p["seed"], inputs=[info.name], name=info.name).html}


REPORT = Analysis("report", 2, lambda *, kind, n_boot, seed: {"kind": kind, "n_boot": n_boot, "seed": seed},
                  _report, label=lambda data, p: f"Building the report ({p['n_boot']:,} resamples per analysis)...")


def informative_pair(lookup: dict[str, tuple[str, str]]) -> str | None:
    """The pair the Win rates page opens on: the largest move from the raw to the BWRS-calibrated win rate
    (:func:`evalcore.report.views.win_rates.largest_calibration`; BWRS with 30% of each pair's human labels, fast);
    None when no pair can be calibrated that way."""
    from ..errors import DataError
    from ..report.views.win_rates import largest_calibration

    try:
        results = WINRATE_ALL.result(method="bwrs", prior="ratio:0.3", baseline=None, judges=None, ties="drop",
                                     seed=0, ood_auto=False)
    except DataError:
        return None
    return largest_calibration(results, lookup)


# --------------------------------------------------------------------------- alt-test


def _alt_test_params(*, by: tuple, judges: tuple | None, epsilon: float, scoring: str, q: float,
                     min_annotators: int, min_items: int, n_boot: int, seed: int) -> dict:
    return {**_bootstrap_params(by=by, judges=judges, n_boot=n_boot, seed=seed), "epsilon": float(epsilon),
            "scoring": scoring, "q": float(q), "min_annotators": int(min_annotators), "min_items": int(min_items)}


def _alt_test(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.alt_test.alt_test` on the dataset's ratings, with the per-annotator rows."""
    from ..pointwise.alt_test import alt_test

    return alt_test(cache.table(data, RATINGS), by=tuple(p["by"]), judges=_picked(p["judges"]),
                    epsilon=p["epsilon"], scoring=p["scoring"], q=p["q"], min_annotators=p["min_annotators"],
                    min_items=p["min_items"], annotators=True, n_boot=p["n_boot"], seed=p["seed"])


ALT_TEST = Analysis("alt_test", 1, _alt_test_params, _alt_test,
                    label=lambda data, p: f"Testing each judge against every annotator ({p['n_boot']:,} resamples)...")


# --------------------------------------------------------------------------- prediction-powered estimates


def _ppi_params(*, table: str, by: tuple, judges: tuple | None, pass_at: float | None = None,
                no_majority: str = "tie", level: float = 0.95, plain: bool = False) -> dict:
    return {"table": table, "by": list(by), "judges": list(judges) if judges else None,
            "pass_at": None if pass_at is None else float(pass_at), "no_majority": no_majority,
            "level": float(level), "plain": bool(plain)}


def _ppi_call(data: Dataset, p: dict, ratings: Callable, comparisons: Callable, **extra) -> Any:
    """One of the pair of prediction-powered functions, by the table: ``ratings(...)`` from
    :mod:`evalcore.pointwise.ppi` or ``comparisons(...)`` from :mod:`evalcore.pairwise.ppi`."""
    frame = cache.table(data, p["table"])
    if p["table"] == RATINGS:
        return ratings(frame, by=tuple(p["by"]), pass_at=p["pass_at"], **extra)
    return comparisons(frame, by=tuple(p["by"]), no_majority=p["no_majority"], **extra)


def _ppi(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.ppi.ppi_estimates` or :func:`evalcore.pairwise.ppi.ppi_win_rates`."""
    from ..pairwise.ppi import ppi_win_rates
    from ..pointwise.ppi import ppi_estimates

    return _ppi_call(data, p, ppi_estimates, ppi_win_rates, judges=_picked(p["judges"]), level=p["level"],
                     plain=p["plain"])


#: The three estimates (humans only, judge only, PPI++) per cell: cheap (closed-form intervals), kept in memory.
PPI = Analysis("ppi", 1, _ppi_params, _ppi, stored=False)


def _ppi_check(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.ppi.ppi_label_check` or :func:`evalcore.pairwise.ppi.win_rate_label_check`."""
    from ..pairwise.ppi import win_rate_label_check
    from ..pointwise.ppi import ppi_label_check

    return _ppi_call(data, p, ppi_label_check, win_rate_label_check, judges=_picked(p["judges"]))


PPI_CHECK = Analysis("ppi_check", 1, _ppi_params, _ppi_check, stored=False)


def _ppi_budget_params(*, half_width: float, cost_label: float | None, cost_judge: float | None, **opts) -> dict:
    return {**_ppi_params(**opts), "half_width": float(half_width),
            "cost_label": None if cost_label is None else float(cost_label),
            "cost_judge": None if cost_judge is None else float(cost_judge)}


def _ppi_budget(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.ppi.ppi_budget` or :func:`evalcore.pairwise.ppi.win_rate_budget`."""
    from ..pairwise.ppi import win_rate_budget
    from ..pointwise.ppi import ppi_budget

    return _ppi_call(data, p, ppi_budget, win_rate_budget, judges=_picked(p["judges"]), half_width=p["half_width"],
                     level=p["level"], cost_label=p["cost_label"], cost_judge=p["cost_judge"])


PPI_BUDGET = Analysis("ppi_budget", 1, _ppi_budget_params, _ppi_budget, stored=False)


def _ppi_what_if_params(*, repeats: int, seed: int, **opts) -> dict:
    return {**_ppi_params(**opts), "repeats": int(repeats), "seed": int(seed)}


def _ppi_what_if(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pointwise.ppi.ppi_what_if` or :func:`evalcore.pairwise.ppi.win_rate_what_if`."""
    from ..pairwise.ppi import win_rate_what_if
    from ..pointwise.ppi import ppi_what_if

    return _ppi_call(data, p, ppi_what_if, win_rate_what_if, judges=_picked(p["judges"]), repeats=p["repeats"],
                     level=p["level"], seed=p["seed"])


PPI_WHAT_IF = Analysis("ppi_what_if", 1, _ppi_what_if_params, _ppi_what_if,
                       label=lambda data, p: f"Drawing {p['repeats']} random label subsets per share...")


def _ppi_plan_params(*, m: int, judge: str | None, seed: int, **opts) -> dict:
    return {**_ppi_params(judges=None, **opts), "m": int(m), "judge": judge, "seed": int(seed)}


def _ppi_plan(data: Dataset, p: dict, progress: Progress):
    """:func:`evalcore.pointwise.ppi.ppi_plan` or :func:`evalcore.pairwise.ppi.win_rate_plan` (a LabelPlan)."""
    from ..pairwise.ppi import win_rate_plan
    from ..pointwise.ppi import ppi_plan

    frame = cache.table(data, p["table"])
    if p["table"] == RATINGS:
        return ppi_plan(frame, m=p["m"], by=tuple(p["by"]), judge=p["judge"], pass_at=p["pass_at"], seed=p["seed"])
    return win_rate_plan(frame, m=p["m"], by=tuple(p["by"]), judge=p["judge"], no_majority=p["no_majority"],
                         seed=p["seed"])


PPI_PLAN = Analysis("ppi_plan", 1, _ppi_plan_params, _ppi_plan, stored=False)


# --------------------------------------------------------------------------- systems leaderboard


def _systems_params(*, judges: tuple | None, style: str | None, corrected: bool, n_boot: int, seed: int) -> dict:
    return {"judges": list(judges) if judges else None, "style": style, "corrected": bool(corrected),
            "n_boot": int(n_boot), "seed": int(seed)}


def _systems(data: Dataset, p: dict, progress: Progress) -> pd.DataFrame:
    """:func:`evalcore.pairwise.leaderboard_systems.system_leaderboard` on the dataset's comparisons."""
    from ..pairwise.leaderboard_systems import system_leaderboard

    return system_leaderboard(cache.table(data, COMPARISONS), judges=_picked(p["judges"]), style=p["style"],
                              corrected=p["corrected"], n_boot=p["n_boot"], seed=p["seed"])


SYSTEMS = Analysis("systems_leaderboard", 1, _systems_params, _systems,
                   label=lambda data, p: f"Fitting Bradley-Terry for the humans and every judge "
                                         f"({p['n_boot']:,} resamples)...")


#: Every declared analysis, by name.
ANALYSES = {a.name: a for a in (AGREEMENT, CLASS_DISTRIBUTION, CONFUSION, BIAS, SCORE_FREQUENCIES, PERPLEXITY_BY_SCORE,
                                CRITERION_CORRELATIONS, CONDITIONAL_DISTRIBUTION, WINRATE, WINRATE_ALL, WINRATE_CURVE,
                                SUPERFICIAL_CURVE, LENGTH_CONTROLLED, POSITION,
                                CALIBRATIONS, META, SYSTEM_MEANS, LEADERBOARD, RATER_PAIRS, REPORT, ALT_TEST, PPI, PPI_CHECK, PPI_BUDGET,
                                PPI_WHAT_IF, PPI_PLAN, SYSTEMS)}
