"""Bayesian Dawid-Skene for two classes (Gao et al. 2024, Model 1) with the true labels marginalised.

Given the judges' accuracies, the verdicts of the judges on one item are independent, so an
item's likelihood is a two-term mixture::

    P(t_i) = p * prod_e q0_e^[t_ie=A] (1-q0_e)^[t_ie=B]
           + (1-p) * prod_e q1_e^[t_ie=B] (1-q1_e)^[t_ie=A]

and an item with a used human label keeps only its own term. The likelihood depends on the
data only through the counts of distinct verdict patterns (:func:`_patterns`), so the data are
compressed to those counts first: a fit costs the same for a thousand items or a million.

Here: the PyMC model (``_ds_model``), the numba kernel of the same density that nutpie samples
(:mod:`evalcore.pairwise._dskernel`; :func:`warm_up` loads it, :func:`is_compiled` says whether it
is loaded), :func:`dawid_skene` and the reference :func:`dawid_skene_reference`, which samples
the discrete labels with Binary Gibbs-Metropolis as the authors did (about 10 minutes per pair),
kept for the benchmark and the tests. nutpie runs through its compiled core alone
(:mod:`evalcore.pairwise.nuts`), and R-hat and ESS come from :mod:`evalcore.stats.convergence`, so that a
fit imports neither ArviZ nor matplotlib; pymc, pytensor and nutpie's Python package are imported inside
the functions that need them.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

import numpy as np

from ..errors import DataError
from .pairs import Counts, PairData, accuracy_counts
from .result import JudgeAccuracy, WinRate, summarize_samples

__all__ = ["dawid_skene", "dawid_skene_reference", "warm_up", "is_compiled"]

_RHAT_MAX = 1.01
_ESS_MIN = 400  # the usual floor for 4 chains (Vehtari et al. 2021); below it intervals are unreliable


def _patterns(pair: PairData, labelled: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (verdicts, used human label) rows and their counts: the sufficient statistics."""
    h = np.full(pair.n_items, -1, dtype=np.int8)
    if labelled is not None:
        m = np.asarray(labelled, bool) & (pair.human >= 0)
        h[m] = pair.human[m]
    rows = np.concatenate([pair.verdicts, h[:, None]], axis=1)
    informative = (rows >= 0).any(axis=1)
    pat, cnt = np.unique(rows[informative], axis=0, return_counts=True)
    if pat.size == 0:
        pat = np.full((1, rows.shape[1]), -1, dtype=np.int8)
        cnt = np.zeros(1, dtype=np.int64)
    return pat[:, :-1], pat[:, -1], cnt


def _ds_data(pair: PairData, labelled: np.ndarray | None, a0, b0, a1, b1) -> dict[str, np.ndarray]:
    T, H, w = _patterns(pair, labelled)
    return {"T0": (T == 0).astype(float), "T1": (T == 1).astype(float), "H0": (H == 0).astype(float),
            "H1": (H == 1).astype(float), "w": w.astype(float), "a0": np.asarray(a0, float),
            "b0": np.asarray(b0, float), "a1": np.asarray(a1, float), "b1": np.asarray(b1, float)}


def _ds_model(data: dict[str, np.ndarray]):
    """Model 1 of Gao et al. with the labels summed out, as a PyMC model over pattern counts."""
    import pymc as pm
    import pytensor.tensor as pt

    with pm.Model() as model:
        d = {k: pm.Data(k, v) for k, v in data.items()}
        p = pm.Beta("p", 1.0, 1.0)  # alpha_p = beta_p = 1 (Gao et al. Sec. 3.4)
        q0 = pm.Beta("q0", d["a0"], d["b0"])
        q1 = pm.Beta("q1", d["a1"], d["b1"])
        # log P(verdicts | A better) + log p, and the same for B, per pattern
        f0 = pt.log(p) + d["T0"] @ pt.log(q0) + d["T1"] @ pt.log1p(-q0)
        f1 = pt.log1p(-p) + d["T1"] @ pt.log(q1) + d["T0"] @ pt.log1p(-q1)
        free = 1.0 - d["H0"] - d["H1"]
        ll = d["H0"] * f0 + d["H1"] * f1 + free * pt.logaddexp(f0, f1)
        pm.Potential("loglik", (d["w"] * ll).sum())
    return model


_KERNEL_LOCK = threading.Lock()


def _kernel():
    """The numba kernel module, imported (and compiled or loaded from numba's cache) once."""
    with _KERNEL_LOCK:  # two threads importing it at once would both compile
        from . import _dskernel

    return _dskernel


def _kernel_inputs(pair: PairData, data: dict[str, np.ndarray]):
    """The kernel's arguments, PyMC's initial point per chain and the stored variables' layout."""
    from scipy.special import betaln

    E = len(pair.judges)
    lbeta = betaln(data["a0"], data["b0"]) + betaln(data["a1"], data["b1"])
    args = (data["T0"], data["T1"], data["H0"], data["H1"], data["w"], data["a0"], data["b0"], data["a1"],
            data["b1"], lbeta)
    # PyMC's initial point: the prior means in log-odds, jittered by U(-1, 1) per chain
    centre = np.concatenate([[0.0], np.log(data["a0"] / data["b0"]), np.log(data["a1"] / data["b1"])])

    def initial_point(seed):
        return centre + np.random.default_rng(seed).uniform(-1.0, 1.0, centre.size)

    layout = {"names": ["p", "q0", "q1"], "shapes": [(), (E,), (E,)], "dims": {"q0": ("judge",), "q1": ("judge",)},
              "coords": {"judge": list(pair.judges)}}
    return args, initial_point, layout


def _nutpie_model(pair: PairData, data: dict[str, np.ndarray], *, pyfunc: bool = False):
    """A nutpie model whose log density is the numba kernel on ``data`` (for ``nutpie.sample``).

    Built from nutpie's ``CompiledPyMCModel`` with our C functions in place of the ones nutpie
    would compile from the PyMC graph (no per-process compile). ``pyfunc=True`` uses nutpie's
    public ``from_pyfunc`` instead: the same density through a Python call per gradient,
    about 5x slower; it is the fallback should nutpie's internal class change.
    """
    k = _kernel()
    E = len(pair.judges)
    args, initial_point, lay = _kernel_inputs(pair, data)
    names, shapes, dims, coords = lay["names"], lay["shapes"], lay["dims"], lay["coords"]
    if not pyfunc:
        try:
            from nutpie.compile_pymc import CompiledPyMCModel

            return CompiledPyMCModel(
                dims=dims, _n_dim=k.n_dim(E), _coords=coords, _shapes=dict(zip(names, shapes)),
                compiled_logp_func=k.c_logp, compiled_expand_func=k.c_expand, initial_point_func=initial_point,
                shared_data={}, user_data=k.pack(*args), n_expanded=k.n_dim(E),
                shape_info=(names, [slice(0, 1), slice(1, 1 + E), slice(1 + E, 1 + 2 * E)], shapes),
                logp_func=None, expand_func=None)
        except (ImportError, TypeError):  # nutpie changed its internals: take the public route
            pass
    from nutpie.compiled_pyfunc import from_pyfunc

    def make_logp():
        def logp(x):
            value, grad = k.logp_grad(x, *args)
            return float(value), grad
        return logp

    def make_expand(seed1, seed2, chain):
        def expand(x):
            q = 1.0 / (1.0 + np.exp(-x))
            return {"p": q[:1].reshape(()), "q0": q[1:1 + E].copy(), "q1": q[1 + E:].copy()}
        return expand

    return from_pyfunc(k.n_dim(E), make_logp, make_expand, [np.dtype("float64")] * 3, shapes, names, coords=coords,
                       dims=dims, make_initial_point_fn=initial_point)


def _nuts(pair: PairData, data: dict[str, np.ndarray], *, chains: int, draws: int, tune: int, seed: int,
          pyfunc: bool) -> tuple[dict[str, np.ndarray], int]:
    """nutpie's draws of the kernel's density, ``(chains, draws, ...)``, and the divergent transitions.

    Through nutpie's compiled core alone (:func:`evalcore.pairwise.nuts.sample`, no ArviZ) where the installed
    nutpie was checked for it, else through ``nutpie.sample``: the same draws either way.
    """
    cores = max(1, min(chains, os.cpu_count() or 1))
    if not pyfunc:
        from .nuts import sample

        k = _kernel()
        args, initial_point, lay = _kernel_inputs(pair, data)
        out = sample(k.c_logp, k.c_expand, k.pack(*args), n_dim=k.n_dim(len(pair.judges)), names=lay["names"],
                     shapes=lay["shapes"], dims=lay["dims"], coords=lay["coords"], initial_point=initial_point,
                     chains=chains, draws=draws, tune=tune, seed=seed, cores=cores)
        if out is not None:
            return out
    import nutpie

    idata = nutpie.sample(_nutpie_model(pair, data, pyfunc=pyfunc), chains=chains, draws=draws, tune=tune, seed=seed,
                          progress_bar=False, cores=cores)
    return _chains(idata, ("p", "q0", "q1")), int(np.asarray(idata.sample_stats["diverging"].values).sum())


def is_compiled() -> bool:
    """Whether this process has loaded the Dawid-Skene kernel and the sampler (later fits start sampling at once)."""
    import sys

    return f"{__package__}._dskernel" in sys.modules and "nutpie._lib" in sys.modules


def warm_up() -> None:
    """Load the Dawid-Skene kernel, the sampler and the KDE the summary uses (e.g. in a background thread).

    About 3 s the first time on a machine (numba compiles, then caches on disk), under a second after.
    """
    from .nuts import core

    _kernel()
    if core() is None:  # a nutpie this module's direct route does not know: nutpie.sample will be used
        import nutpie  # noqa: F401
    from statsmodels.nonparametric.kde import KDEUnivariate  # noqa: F401  (summarize_samples' mode)


def _ds_priors(pair: PairData, ood: Counts | None) -> tuple[np.ndarray, ...]:
    E = len(pair.judges)
    if ood is None:
        return np.full(E, 2.0), np.ones(E), np.full(E, 2.0), np.ones(E)  # Beta(2, 1): better than chance
    c = ood.for_judges(pair.judges)
    # Eqs. 12-13: the Beta-Bernoulli posterior scaled to total concentration 2
    return ((2 * c.s0 + 2) / (c.n0 + 2), (2 * c.n0 - 2 * c.s0 + 2) / (c.n0 + 2),
            (2 * c.s1 + 2) / (c.n1 + 2), (2 * c.n1 - 2 * c.s1 + 2) / (c.n1 + 2))


def _diagnostics(chains: dict[str, np.ndarray]) -> tuple[float, float, float, float]:
    """R-hat and bulk ESS of p, and the worst of each over all parameters (as ArviZ computes them)."""
    from ..stats.convergence import ess_bulk, rhat

    rh, es = {}, {}
    for v, a in chains.items():
        flat = a.reshape(a.shape[0], a.shape[1], -1)
        rh[v] = np.array([rhat(flat[:, :, j]) for j in range(flat.shape[2])])
        es[v] = np.array([ess_bulk(flat[:, :, j]) for j in range(flat.shape[2])])
    worst_r = max(float(np.nanmax(rh[v])) for v in chains)
    worst_e = min(float(np.nanmin(es[v])) for v in chains)
    return float(rh["p"][0]), float(es["p"][0]), worst_r, worst_e


def _ds_result(pair: PairData, post: dict[str, np.ndarray], *, method: str, prior_label: str, counts: Counts,
               n_labelled: int, diag: tuple[float, float, float, float], divergences: int, seconds: float) -> WinRate:
    s = summarize_samples(post["p"])
    judges = []
    kk = pair.judge_k()
    for e, name in enumerate(pair.judges):
        q0, q1 = post["q0"][:, e], post["q1"][:, e]
        judges.append(JudgeAccuracy(
            judge=name, k=float(kk[e]), n_verdicts=int((pair.verdicts[:, e] >= 0).sum()),
            n0=float(counts.n0[e]), s0=float(counts.s0[e]), n1=float(counts.n1[e]), s1=float(counts.s1[e]),
            q0_mean=float(q0.mean()), q0_low=float(np.quantile(q0, .025)), q0_high=float(np.quantile(q0, .975)),
            q1_mean=float(q1.mean()), q1_low=float(np.quantile(q1, .025)), q1_high=float(np.quantile(q1, .975))))
    rhat, ess, worst_r, worst_e = diag
    warnings = []
    if not (worst_r <= _RHAT_MAX):
        warnings.append(f"R-hat is {worst_r:.3f} (above {_RHAT_MAX}): the chains disagree, so the posterior is not "
                        "reliable; the judges' accuracies may be unidentified (no labels and judges near chance)")
    if not (worst_e >= _ESS_MIN):
        warnings.append(f"the effective sample size is only {worst_e:.0f} (below {_ESS_MIN}): intervals are rough; "
                        "draw more samples")
    if divergences:
        warnings.append(f"{divergences} divergent transitions: the sampler struggled, treat the interval with care")
    return WinRate(
        system_a=pair.system_a, system_b=pair.system_b, method=method, prior=prior_label, ties=pair.ties,
        p_mean=s["mean"], p_mode=s["mode"], ci_low=s["low"], ci_high=s["high"], k_observed=pair.k_observed,
        p_human=pair.p_human, n_items=pair.n_items, n_human_labelled=n_labelled, rhat=rhat, ess=ess,
        seconds=seconds, judges=tuple(judges), n_samples=int(post["p"].size), divergences=int(divergences),
        warnings=tuple(warnings), density=(tuple(s["x"]), tuple(s["density"])))


def _chains(idata, names: Sequence[str]) -> dict[str, np.ndarray]:
    """Each variable's posterior draws from an ``InferenceData``, ``(chains, draws, ...)``."""
    return {v: np.asarray(idata.posterior[v].values) for v in names}


def _pooled(chains: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The chains' draws one after another, ``(chains * draws, ...)``."""
    return {v: a.reshape(a.shape[0] * a.shape[1], *a.shape[2:]) for v, a in chains.items()}


def dawid_skene(pair: PairData, *, labelled: np.ndarray | None = None, ood: Counts | None = None,
                chains: int = 4, draws: int = 1000, tune: int = 1000, seed: int = 0,
                sampler: str = "nutpie", prior_label: str | None = None) -> WinRate:
    """Bayesian Dawid-Skene for two classes (Gao et al. 2024, Model 1), labels marginalised.

    ``p ~ Beta(1, 1)``; per judge ``q0 ~ Beta(a0, b0)`` and ``q1 ~ Beta(a1, b1)``, which
    are ``Beta(2, 1)`` (no prior, in-distribution) or Eqs. 12-13 (``ood``). Each item's
    true label ``h_i ~ Bernoulli`` is summed out::

        log L = sum_i log[ p prod_e q0^[t=A] (1-q0)^[t=B] + (1-p) prod_e q1^[t=B] (1-q1)^[t=A] ]

    with an item in ``labelled`` (human label used) keeping only its label's term. The model
    is the PyMC model ``_ds_model``. It is fitted by NUTS: nutpie's sampler on the same
    density written as a numba kernel (``sampler="nutpie"``, :mod:`evalcore.pairwise._dskernel`, checked
    against PyMC's ``logp`` and ``dlogp`` in the tests; compiling the PyMC graph instead costs
    14-27 s per process), the same through nutpie's public Python interface
    (``"nutpie-pyfunc"``), or PyMC's own NUTS on the PyMC model (``"pymc"``). The estimate of p is the posterior mean and KDE mode with a 95%
    equal-tailed credible interval; R-hat and bulk ESS come from ArviZ.
    """
    if sampler not in ("nutpie", "nutpie-pyfunc", "pymc"):
        raise DataError(f"unknown sampler '{sampler}'", fix="use nutpie, nutpie-pyfunc or pymc")
    t0 = time.perf_counter()
    a0, b0, a1, b1 = _ds_priors(pair, ood)
    data = _ds_data(pair, labelled, a0, b0, a1, b1)
    if sampler != "pymc":
        by_chain, div = _nuts(pair, data, chains=chains, draws=draws, tune=tune, seed=seed,
                              pyfunc=sampler == "nutpie-pyfunc")
    else:
        import pymc as pm

        with _ds_model(data):
            idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed, progressbar=False,
                              compute_convergence_checks=False)
        div = int(np.asarray(idata.sample_stats["diverging"].values).sum())
        by_chain = _chains(idata, ("p", "q0", "q1"))
    post = _pooled(by_chain)
    diag = _diagnostics(by_chain)
    counts = accuracy_counts(pair, labelled if labelled is not None else np.zeros(pair.n_items, bool))
    if ood is not None:
        counts = ood.for_judges(pair.judges)
    n_lab = int((np.asarray(labelled, bool) & (pair.human >= 0)).sum()) if labelled is not None else 0
    label = prior_label or ("ood:" + ood.source if ood is not None else ("ratio" if n_lab else "none"))
    return _ds_result(pair, post, method="ds", prior_label=label, counts=counts, n_labelled=n_lab, diag=diag,
                      divergences=div, seconds=time.perf_counter() - t0)


def dawid_skene_reference(pair: PairData, *, labelled: np.ndarray | None = None, ood: Counts | None = None,
                          chains: int = 4, draws: int = 1000, tune: int = 1000, seed: int = 0, cores: int = 1,
                          prior_label: str | None = None) -> WinRate:
    """The same Model 1 with the discrete labels sampled, as Gao et al. ran it (the reference).

    Every unlabelled item has a latent ``a_better_i ~ Bernoulli(p)`` sampled by PyMC's
    Binary Gibbs-Metropolis, and ``p``, ``q0``, ``q1`` by NUTS. It targets the same
    posterior of ``p`` as :func:`dawid_skene` and is orders of magnitude slower; it is
    here for the benchmark and the tests.
    """
    import pymc as pm
    import pytensor.tensor as pt

    t0 = time.perf_counter()
    a0, b0, a1, b1 = _ds_priors(pair, ood)
    lab = np.zeros(pair.n_items, bool) if labelled is None else (np.asarray(labelled, bool) & (pair.human >= 0))
    free_idx = np.flatnonzero(~lab)
    E = len(pair.judges)
    with pm.Model():
        p = pm.Beta("p", 1.0, 1.0)
        q0 = pm.Beta("q0", a0, b0, shape=E)
        q1 = pm.Beta("q1", a1, b1, shape=E)
        if lab.any():
            pm.Bernoulli("h_obs", p, observed=(pair.human[lab] == 0).astype(int))
        z_free = pm.Bernoulli("a_better", p, shape=len(free_idx)) if len(free_idx) else None
        z = pt.zeros(pair.n_items)
        if lab.any():
            z = pt.set_subtensor(z[np.flatnonzero(lab)], (pair.human[lab] == 0).astype(float))
        if z_free is not None:
            z = pt.set_subtensor(z[free_idx], z_free)
        ii, ee = np.nonzero(pair.verdicts >= 0)
        says_a = (pair.verdicts[ii, ee] == 0).astype(int)
        prob_a = pt.switch(pt.eq(z[ii], 1), q0[ee], 1 - q1[ee])
        pm.Bernoulli("verdict", prob_a, observed=says_a)
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=cores, random_seed=seed, progressbar=False,
                          compute_convergence_checks=False)
    by_chain = _chains(idata, ("p", "q0", "q1"))
    post, diag = _pooled(by_chain), _diagnostics(by_chain)
    counts = accuracy_counts(pair, lab) if ood is None else ood.for_judges(pair.judges)
    div = int(np.asarray(idata.sample_stats["diverging"].values).sum()) if "diverging" in idata.sample_stats else 0
    label = prior_label or ("ood:" + ood.source if ood is not None else ("ratio" if lab.any() else "none"))
    return _ds_result(pair, post, method="ds_reference", prior_label=label, counts=counts, n_labelled=int(lab.sum()),
                      diag=diag, divergences=div, seconds=time.perf_counter() - t0)
