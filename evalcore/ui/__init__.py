"""The only Streamlit code outside the pages: workspace access, the shared sidebar, caching.

Pages call :func:`page` first (page config + sidebar), then read the current dataset
with :func:`current_table`, call one cached evalcore function and draw.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import OrderedDict
from typing import Iterator

import pandas as pd
import streamlit as st

from ..columns import COMPARISONS, RATINGS
from ..errors import DataError, WorkspaceError
from ..data.schema import csv_safe
from ..data.store import READY, DatasetInfo, Workspace, default_path

_KEY = "evalcore_dataset_id"
RESULTS_VERSION = 1  # bump when a stored result's meaning changes
TABLE_LABEL = {RATINGS: "pointwise ratings", COMPARISONS: "pairwise comparisons"}


@st.cache_resource(show_spinner=False)
def _workspace(path: str) -> Workspace:
    return Workspace(path)


def workspace() -> Workspace:
    """The workspace of this server (``EVALCORE_WORKSPACE`` or the default location)."""
    return _workspace(str(default_path()))


@contextlib.contextmanager
def guard(what: str = "This step") -> Iterator[None]:
    """Show a user-caused problem as one message instead of a traceback."""
    try:
        yield
    except (DataError, WorkspaceError) as exc:
        st.error(str(exc), icon=":material/error:")
    except Exception as exc:  # a bug must not show a traceback, but must be visible
        st.error(f"{what} failed unexpectedly ({type(exc).__name__}: {str(exc)[:200]}). This is a bug in "
                 "evalcore; your data is safe in the workspace.", icon=":material/bug_report:")


def datasets() -> list[DatasetInfo]:
    return workspace().list_datasets()


def current_id() -> str | None:
    """The dataset this session works on: its own choice, else the last one opened on this server."""
    ready = {d.id for d in datasets() if d.status == READY}
    did = st.session_state.get(_KEY)
    if did in ready:
        return did
    last = workspace().get_setting("current_dataset")
    if last in ready:
        st.session_state[_KEY] = last
        return last
    return None


def set_current(dataset_id: str | None) -> None:
    st.session_state[_KEY] = dataset_id
    workspace().set_setting("current_dataset", dataset_id)


@st.cache_data(show_spinner="Reading the dataset...", max_entries=8)
def _table(path: str, dataset_id: str, kind: str, stamp: str) -> pd.DataFrame:
    return Workspace(path).load_table(dataset_id, kind)


def current_info() -> DatasetInfo | None:
    did = current_id()
    if did is None:
        return None
    return next((d for d in datasets() if d.id == did), None)


def current_table(kind: str) -> pd.DataFrame | None:
    """The current dataset's ``kind`` table (cached), or None if it has none."""
    info = current_info()
    if info is None or kind not in info.tables:
        return None
    return _table(str(workspace().path), info.id, kind, info.updated.isoformat())


def require_table(kind: str) -> pd.DataFrame:
    """The current dataset's ``kind`` table, or a message and a stop when there is none."""
    frame = current_table(kind)
    if frame is None:
        info = current_info()
        if info is None:
            st.info("No dataset is loaded yet. Go to the **evalcore** home page and click "
                    "**Load the sample data**, or upload a file.", icon=":material/info:")
        else:
            st.info(f"This page needs {TABLE_LABEL[kind]}; the dataset '{info.name}' has none. "
                    "Load a dataset that has them on the home page.", icon=":material/info:")
        st.page_link("app.py", label="Go to the home page", icon=":material/home:")
        st.stop()
    return frame


def sidebar() -> None:
    """The sidebar every page shares: which dataset is loaded, and a switcher."""
    with st.sidebar:
        st.markdown("### Current dataset")
        ready = [d for d in datasets() if d.status == READY]
        info = current_info()
        if not ready:
            st.caption("None yet: load the sample data or upload a file on the home page.")
            return
        ids = [d.id for d in ready]
        names = {d.id: d.name for d in ready}
        # The widget follows the current dataset (which other controls may change), and a
        # pick in it changes the current dataset: sync before drawing, act in the callback.
        st.session_state["sidebar_dataset"] = info.id if info else None
        st.selectbox("Dataset", ids, format_func=names.get, key="sidebar_dataset",
                     placeholder="Choose a dataset", label_visibility="collapsed",
                     on_change=lambda: set_current(st.session_state["sidebar_dataset"]))
        if info:
            for kind, n in info.tables.items():
                st.caption(f"{TABLE_LABEL[kind].capitalize()}: {n:,} rows")
            st.caption(f"Source: {info.source}")


def page(title: str, icon: str = ":material/balance:") -> None:
    """Page config and the shared sidebar; call first on every page."""
    st.set_page_config(page_title=f"{title} · evalcore", page_icon=icon, layout="wide")
    sidebar()


def download_csv(frame: pd.DataFrame, *, file_name: str, label: str = "Download CSV", key: str | None = None) -> None:
    """A CSV download of ``frame`` with spreadsheet formulas neutralised."""
    st.download_button(label, csv_safe(frame).to_csv(index=False).encode("utf-8"), file_name=file_name,
                       mime="text/csv", key=key, icon=":material/download:")


# --------------------------------------------------------------------------- cached analyses


def _stamp() -> tuple[str, str]:
    info = current_info()
    if info is None:
        raise DataError("no dataset is loaded", fix="load one on the home page")
    return info.id, info.updated.isoformat()


@st.cache_resource(show_spinner="Counting ratings per item...", max_entries=4)
def _units(path: str, dataset_id: str, stamp: str):
    from ..pointwise.agreement import count_units

    # Per-unit sufficient statistics: built once per dataset, shared by every grouping.
    return count_units(Workspace(path).load_table(dataset_id, RATINGS))


def units():
    """The current ratings reduced to per-unit counts (cached per dataset)."""
    did, stamp = _stamp()
    return _units(str(workspace().path), did, stamp)


@st.cache_resource(show_spinner=False)
def _results() -> "OrderedDict[tuple, pd.DataFrame]":
    return OrderedDict()


def _result_key(name: str, params: dict) -> str:
    return f"{name}:v{RESULTS_VERSION}:" + json.dumps(params, sort_keys=True, default=str)


def has_result(name: str, params: dict) -> bool:
    """Whether :func:`cached_result` would answer without computing (memory or workspace)."""
    did, stamp = _stamp()
    key = _result_key(name, params)
    return (did, stamp, key) in _results() or key in workspace().result_keys(did)


def cached_result(name: str, params: dict, compute, *, label: str) -> pd.DataFrame | dict:
    """A result of the current dataset: from memory, else from the workspace, else computed and stored.

    ``compute(progress)`` gets a callback taking the fraction done; a progress bar shows it.
    (Not ``st.cache_data``: it cannot replay a progress bar drawn from inside the function.)
    """
    did, stamp = _stamp()
    key = _result_key(name, params)
    mem = _results()
    if (did, stamp, key) in mem:
        mem.move_to_end((did, stamp, key))
        return mem[(did, stamp, key)]
    ws = workspace()
    out = ws.load_result(did, key)
    if out is None:
        bar = st.progress(0.0, text=label)
        out = compute(lambda f: bar.progress(min(max(f, 0.0), 1.0), text=label))
        bar.empty()
        ws.save_result(did, key, out, meta={"stamp": stamp})
    mem[(did, stamp, key)] = out
    while len(mem) > 32:
        mem.popitem(last=False)
    return out


def agreement_table(*, by: tuple, judges: tuple | None, n_boot: int, seed: int) -> pd.DataFrame:
    """:func:`evalcore.pointwise.agreement.agreement` on the current dataset: cached, stored, with a progress bar."""
    from ..pointwise.agreement import agreement

    u = units()
    params = {"by": list(by), "judges": list(judges) if judges is not None else None, "n_boot": n_boot, "seed": seed}
    return cached_result("agreement", params,
                         lambda progress: agreement(u, by=by, judges=judges, n_boot=n_boot, seed=seed, progress=progress),
                         label=f"Bootstrapping {n_boot:,} resamples per cell...")


@st.cache_data(show_spinner=False, max_entries=16)
def _class_distribution(path: str, dataset_id: str, stamp: str, by: tuple) -> pd.DataFrame:
    from ..pointwise.distributions import class_distribution

    return class_distribution(_units(path, dataset_id, stamp), by=by)


def class_distribution(*, by: tuple) -> pd.DataFrame:
    """Cached :func:`evalcore.pointwise.distributions.class_distribution` on the current dataset."""
    did, stamp = _stamp()
    return _class_distribution(str(workspace().path), did, stamp, tuple(by))


def bias_records(*, by: tuple, judges: tuple | None, n_boot: int, seed: int) -> pd.DataFrame:
    """:func:`evalcore.pointwise.bias_report.bias_report` records on the current dataset: cached, stored, with progress."""
    from ..pointwise.bias_report import bias_report

    ratings = require_table(RATINGS)
    params = {"by": list(by), "judges": list(judges) if judges is not None else None, "n_boot": n_boot, "seed": seed}
    return cached_result(
        "bias", params,
        lambda progress: bias_report(ratings, by=by, judges=judges, n_boot=n_boot, seed=seed, progress=progress).records,
        label=f"Running the bias diagnostics ({n_boot:,} resamples)...")


@st.cache_data(show_spinner="Computing...", max_entries=32)
def _detail(path: str, dataset_id: str, stamp: str, name: str, params: str) -> pd.DataFrame:
    from ..pointwise import bias, scale

    frame = _table(path, dataset_id, RATINGS, stamp)
    kwargs = json.loads(params)
    fn = {"score_frequencies": scale.score_frequencies, "perplexity_by_score": bias.perplexity_by_score,
          "criterion_correlations": bias.criterion_correlations,
          "conditional_distribution": bias.conditional_distribution}[name]
    return fn(frame, **kwargs)


def detail(name: str, **kwargs) -> pd.DataFrame:
    """A plot table of the bias functions on the current dataset (cached): ``name`` and its options."""
    did, stamp = _stamp()
    return _detail(str(workspace().path), did, stamp, name, json.dumps(kwargs, sort_keys=True))


# --------------------------------------------------------------------------- win rates


@st.cache_data(show_spinner=False, max_entries=8)
def _pairs(path: str, dataset_id: str, stamp: str) -> pd.DataFrame:
    from ..pairwise.winrate import pairs

    return pairs(_table(path, dataset_id, COMPARISONS, stamp))


def comparison_pairs() -> pd.DataFrame:
    """The system pairs of the current comparisons (cached; raises NotApplicable without systems)."""
    did, stamp = _stamp()
    return _pairs(str(workspace().path), did, stamp)


@st.cache_resource(show_spinner=False, max_entries=64)
def _pair(path: str, dataset_id: str, stamp: str, a: str, b: str, judges: tuple | None, ties: str, seed: int):
    from ..pairwise.winrate import pair_data

    return pair_data(_table(path, dataset_id, COMPARISONS, stamp), a, b, judges=judges, ties=ties, seed=seed)


def pair_data(a: str, b: str, *, judges: tuple | None, ties: str, seed: int):
    """:func:`evalcore.pairwise.winrate.pair_data` on the current dataset (cached per pair and options)."""
    did, stamp = _stamp()
    return _pair(str(workspace().path), did, stamp, a, b, judges, ties, seed)


@st.cache_resource(show_spinner=False)
def _warm():
    import threading

    from ..pairwise.winrate import warm_up

    # Load numba, the Dawid-Skene kernel, nutpie and ArviZ while the analyst reads the page:
    # ~3 s the first time on a machine (numba compiles and caches), ~1 s after.
    t = threading.Thread(target=warm_up, name="evalcore-ds-warm-up", daemon=True)
    t.start()
    return t


def warm_up_winrate() -> None:
    """Start loading the Dawid-Skene sampler in the background (once per server).

    ``EVALCORE_WARMUP=0`` turns it off: the test suite does, because a thread that outlives
    one test races with the next test's capture of stdout and stderr.
    """
    if os.environ.get("EVALCORE_WARMUP", "1") == "0":
        return
    _warm()


@st.cache_resource(show_spinner=False)
def _warm_agreement():
    import threading

    def run() -> None:
        from ..pointwise import _agreekernel

        _agreekernel.warm_up()

    # numba's compiled passes of the agreement table: ~2.5 s the first time on a machine, ~0.4 s after.
    t = threading.Thread(target=run, name="evalcore-agreement-warm-up", daemon=True)
    t.start()
    return t


def warm_up_for_current() -> None:
    """Load what the current dataset's pages will compute with, in the background.

    The landing page calls it: the agreement table's compiled passes when the ratings are large
    enough to use them, and the Dawid-Skene sampler when there are system pairs, so that the first
    table or fit does not wait for them.
    """
    from ..pointwise.agreement import COMPILED_FROM

    ratings = current_table(RATINGS)
    if os.environ.get("EVALCORE_WARMUP", "1") != "0" and ratings is not None and len(ratings) >= COMPILED_FROM:
        _warm_agreement()
    frame = current_table(COMPARISONS)
    if frame is None or "system_a" not in frame.columns or "system_b" not in frame.columns:
        return
    warm_up_winrate()


def winrate(a: str, b: str, *, method: str, prior: str, judges: tuple | None, ties: str, seed: int):
    """One calibrated win rate on the current dataset: cached in memory and the workspace (a WinRate)."""
    from ..pairwise.winrate import WinRate, estimate, is_compiled

    pair = pair_data(a, b, judges=judges, ties=ties, seed=seed)
    params = {"a": a, "b": b, "method": method, "prior": prior, "judges": list(judges) if judges else None,
              "ties": ties, "seed": seed}
    if method == "ds":
        label = ("Fitting the Dawid-Skene model..." if is_compiled() else
                 "Loading the sampler and fitting the Dawid-Skene model (a few seconds the first time)...")
    else:
        label = "Sampling BWRS..."
    frame = current_table(COMPARISONS)
    rec = cached_result("winrate", params,
                        lambda progress: estimate(frame, a, b, method=method, prior=prior, ties=ties, seed=seed,
                                                  pair=pair).to_record(density=True),
                        label=label)
    return WinRate.from_record(rec)


def _all_params(method, prior, baseline, judges, ties, seed, ood_auto) -> dict:
    return {"method": method, "prior": prior, "baseline": baseline, "judges": list(judges) if judges else None,
            "ties": ties, "seed": seed, "ood_auto": ood_auto}


def winrate_all_ready(*, method: str, prior: str, baseline: str | None, judges: tuple | None, ties: str, seed: int,
                      ood_auto: bool) -> bool:
    """Whether :func:`winrate_all` with these options is already cached."""
    return has_result("winrate_all", _all_params(method, prior, baseline, judges, ties, seed, ood_auto))


def winrate_all(*, method: str, prior: str, baseline: str | None, judges: tuple | None, ties: str, seed: int,
                ood_auto: bool):
    """Every pair's calibrated win rate on the current dataset (cached; progress bar)."""
    from ..pairwise.winrate import WinRate, estimate_all

    frame = current_table(COMPARISONS)
    out = cached_result(
        "winrate_all", _all_params(method, prior, baseline, judges, ties, seed, ood_auto),
        lambda progress: {"records": [r.to_record() for r in estimate_all(
            frame, method=method, prior=prior, baseline=baseline, judges=judges, ties=ties, seed=seed,
            ood_auto=ood_auto, progress=progress)]},
        label=f"Calibrating every pair ({'BWRS' if method == 'bwrs' else 'Dawid-Skene'})...")
    return [WinRate.from_record(r) for r in out["records"]]


def winrate_error_curve(a: str | None, b: str | None, *, judges: tuple | None, ties: str, seed: int,
                        repeats: int) -> pd.DataFrame:
    """Gao et al. Figure 2: error against the prior data ratio for one pair, or averaged over every pair
    with human labels when ``a`` is None (cached; progress bar)."""
    from ..pairwise.winrate import error_curve

    if a is None:
        pairs = [pair_data(r.system_a, r.system_b, judges=None, ties=ties, seed=seed)
                 for r in comparison_pairs().itertuples() if r.n_human_rows > 0 and r.n_judge_rows > 0]
        target, what = pairs, f"{len(pairs)} pairs x 10 ratios x {repeats} subsets"
    else:
        target = pair_data(a, b, judges=judges, ties=ties, seed=seed)
        what = f"10 ratios x {repeats} subsets"
    params = {"a": a, "b": b, "judges": list(judges) if judges and a is not None else None, "ties": ties,
              "seed": seed, "repeats": repeats}
    return cached_result("winrate_curve", params,
                         lambda progress: error_curve(target, repeats=repeats, seed=seed, progress=progress),
                         label=f"Refitting both methods at {what}...")
