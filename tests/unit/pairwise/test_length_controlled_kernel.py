"""The compiled cross-validation of the length-controlled GLM against the path it replaced, bit for bit.

:func:`reference_lc_exact` is the previous :func:`evalcore.pairwise.superficial.alpacaeval_lc_exact`, kept here
only: numpy builds the ``(resamples x folds, items)`` training and held-out copies, a compiled loop fits every
row at one C (a gradient pass, then objective passes: :func:`_ref_fit_rows`), numpy scores the held-out
copies. The new path (:func:`evalcore.pairwise._lckernel.cv_resamples`) must give the same weights, the same C
and the same win rates to the last bit, on seeded simulations and on the real data; and the point estimate's
direct liblinear call must give scikit-learn's ``LogisticRegression`` weights to the last bit.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pandas as pd
import pytest

from evalcore.pairwise import _lckernel
from evalcore.pairwise import superficial as sp
from evalcore.stats.bootstrap import cell_rng, item_weights
from tests.helpers import PANDALM, SAMPLE_PAIRS, needs_datasets

# --------------------------------------------------------------------------- the previous path


@numba.njit(cache=True)
def _ref_softplus(z):
    if z > 0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


@numba.njit(cache=True)
def _ref_sigmoid(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@numba.njit(cache=True)
def _ref_loss(x, p, cw, w1, w2):
    s = 0.0
    for i in range(x.shape[0]):
        if cw[i] != 0.0:
            z = w1 * x[i] + w2
            s += cw[i] * (_ref_softplus(z) - p[i] * z)
    return s


@numba.njit(cache=True)
def _ref_fit_one(x, p, cw, w1, w2, max_iter):
    f = abs(w1) + abs(w2) + _ref_loss(x, p, cw, w1, w2)
    for _ in range(max_iter):
        g1 = g2 = H11 = H12 = H22 = 0.0
        for i in range(x.shape[0]):
            if cw[i] == 0.0:
                continue
            mu = _ref_sigmoid(w1 * x[i] + w2)
            r = cw[i] * (mu - p[i])
            h = cw[i] * mu * (1.0 - mu)
            g1 += r * x[i]
            g2 += r
            H11 += h * x[i] * x[i]
            H12 += h * x[i]
            H22 += h
        u1, u2 = _lckernel._lasso2(H11, H12, H22, g1 - (H11 * w1 + H12 * w2), g2 - (H12 * w1 + H22 * w2))
        d1, d2 = u1 - w1, u2 - w2
        dec = g1 * d1 + g2 * d2 + abs(u1) + abs(u2) - abs(w1) - abs(w2)
        t = 1.0
        done = False
        for _ls in range(50):
            c1, c2 = w1 + t * d1, w2 + t * d2
            fc = abs(c1) + abs(c2) + _ref_loss(x, p, cw, c1, c2)
            if fc <= f + 1e-4 * t * dec or -dec <= 1e-13 * (1.0 + abs(f)):
                done = True
                break
            t *= 0.5
        if not done:
            break
        step = max(abs(c1 - w1), abs(c2 - w2))
        w1, w2, f = c1, c2, fc
        if step <= 1e-13 * (1.0 + max(abs(w1), abs(w2))):
            break
    return w1, w2


@numba.njit(cache=True)
def _ref_fit_rows(x, x_row, p, cw, w0, max_iter=100):
    P = cw.shape[0]
    out = np.empty((P, 2))
    for r in range(P):
        out[r, 0], out[r, 1] = _ref_fit_one(x[x_row[r]], p, cw[r], w0[r, 0], w0[r, 1], max_iter)
    return out


def reference_lc_exact(delta, preference, counts=None) -> dict[str, np.ndarray]:
    """The previous ``alpacaeval_lc_exact``."""
    LC_CS, LC_FOLDS = sp.LC_CS, sp.LC_FOLDS
    delta = np.asarray(delta, dtype=float)
    pref = np.asarray(preference, dtype=float)
    n = len(delta)
    counts = np.ones((1, n)) if counts is None else np.asarray(counts, dtype=float)
    R = len(counts)
    x = sp._lc_x(delta, counts)
    fold = sp._lc_folds(n)
    prefix = np.zeros((LC_FOLDS, n + 1))
    prefix[:, 1:] = np.cumsum(fold[None, :] == np.arange(LC_FOLDS)[:, None], axis=1)
    end = np.cumsum(counts, axis=1).astype(np.int64)
    start = end - counts.astype(np.int64)
    test = np.moveaxis(prefix[:, end] - prefix[:, start], 0, 1).reshape(R * LC_FOLDS, n)
    train = np.repeat(counts, LC_FOLDS, axis=0) - test
    x_row = np.repeat(np.arange(R), LC_FOLDS)
    xk = x[x_row]
    scores = np.empty((R * LC_FOLDS, len(LC_CS)))
    w = np.zeros((R * LC_FOLDS, 2))
    for c, C in enumerate(LC_CS):
        w = _ref_fit_rows(x, x_row, pref, C * train, w)
        q = np.clip(0.5 * (1.0 + np.tanh(0.5 * (w[:, :1] * xk + w[:, 1:]))), 1e-15, 1 - 1e-15)
        loss = -(pref * np.log(q) + (1 - pref) * np.log(1 - q))
        scores[:, c] = -(test * loss).sum(axis=1) / test.sum(axis=1)
    best = np.argmax(scores.reshape(R, LC_FOLDS, len(LC_CS)).sum(axis=1), axis=1)
    C = LC_CS[best]
    w = _ref_fit_rows(x, np.arange(R), pref, C[:, None] * counts, np.zeros((R, 2)))
    return {"lc": 0.5 * (1.0 + np.tanh(0.5 * w[:, 1])), "w_len": w[:, 0], "w_0": w[:, 1], "C": C}


def use_previous_path(monkeypatch) -> None:
    """``length_controlled`` as it was: the previous resample fits, scikit-learn's public liblinear path."""
    monkeypatch.setattr(sp, "alpacaeval_lc_exact", reference_lc_exact)
    monkeypatch.setattr(sp, "_liblinear_fit", lambda: sp._liblinear_public)


def _assert_same(new: dict, old: dict) -> None:
    for k in ("lc", "w_len", "w_0", "C"):
        assert np.array_equal(new[k], old[k]), (k, np.nanmax(np.abs(new[k] - old[k])))


# --------------------------------------------------------------------------- seeded simulations


def _simulated(seed: int):
    """Annotations of several kinds: a length-following judge, ties, a judge that never wins a fold, no spread."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 90))
    delta = np.round(rng.normal(0, 300, n))
    kind = seed % 4
    if kind == 0:  # follows length
        pref = (rng.random(n) < 1 / (1 + np.exp(delta / 150))).astype(float)
    elif kind == 1:  # ties and averaged orders
        pref = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], n)
    elif kind == 2:  # almost always loses: training sets of all zeros
        pref = (rng.random(n) < 0.04).astype(float)
    else:  # no spread in the length
        delta, pref = np.full(n, 7.0), rng.choice([0.0, 0.5, 1.0], n, p=[0.2, 0.3, 0.5])
    return delta, pref, item_weights(rng, n, 120)[1:]


@pytest.mark.parametrize("seed", range(12))
def test_resamples_the_same_as_the_previous_path(seed):
    delta, pref, counts = _simulated(seed)
    _assert_same(sp.alpacaeval_lc_exact(delta, pref, counts), reference_lc_exact(delta, pref, counts))
    _assert_same(sp.alpacaeval_lc_exact(delta, pref), reference_lc_exact(delta, pref))


def test_threads_do_not_change_the_numbers():
    delta, pref, counts = _simulated(1)
    x, fold = sp._lc_x(delta, counts), sp._lc_folds(len(delta))
    one = _lckernel.cv_resamples(x, pref, counts, fold, sp.LC_CS, threads=1)
    three = _lckernel.cv_resamples(x, pref, counts, fold, sp.LC_CS, threads=3)
    assert np.array_equal(one[0], three[0]) and np.array_equal(one[1], three[1])


def test_single_fits_the_same_as_the_previous_kernel():
    rng = np.random.default_rng(4)
    n, P = 60, 40
    x = np.tanh(rng.normal(size=(P, n)))
    p = rng.choice([0.0, 0.5, 1.0], n)
    cw = rng.integers(0, 3, (P, n)) * np.exp(rng.uniform(-6, 8, (P, 1)))
    w0 = rng.normal(size=(P, 2)) * (rng.random((P, 1)) < 0.5)  # half from zero, half warm
    assert np.array_equal(_lckernel.fit_rows(x, np.arange(P), p, cw, w0), _ref_fit_rows(x, np.arange(P), p, cw, w0))


# --------------------------------------------------------------------------- the real data


def _pairs(frame: pd.DataFrame, judge: str, q: str):
    """Each pair's annotations, as ``length_controlled`` builds them, and its bootstrap counts."""
    rows = frame[(frame["rater"].astype(str) == judge) & frame["winner"].isin(["a", "b", "tie"])]
    qa, qb = sp._q_columns(rows, q)
    rows = rows.assign(_qa=qa.to_numpy(), _qb=qb.to_numpy()).dropna(subset=["system_a", "system_b", "_qa", "_qb"])
    sa, sb = rows["system_a"].astype(str), rows["system_b"].astype(str)
    for (s, t), idx in sorted(rows.groupby([np.minimum(sa, sb), np.maximum(sa, sb)]).indices.items()):
        grp = rows.iloc[idx]
        code, uniq = pd.factorize(grp["item_id"].astype(str))
        delta, pref = sp._lc_annotations(grp, s, code, len(uniq))
        yield (s, t), delta, pref, item_weights(cell_rng(0, (judge, "length_controlled", s, t)), len(uniq), 1000)


@pytest.mark.slow
def test_sample_pairs_the_same_as_the_previous_path(monkeypatch):
    from evalcore.data.ingest import load

    frame = load(SAMPLE_PAIRS, table="comparisons").frame
    judge = sorted(frame.loc[frame["rater_kind"] == "judge", "rater"].astype(str).unique())[0]
    done = []
    for _, delta, pref, W in _pairs(frame, judge, "superficial"):
        ref = reference_lc_exact(delta, pref, W[1:])
        _assert_same(sp.alpacaeval_lc_exact(delta, pref, W[1:]), ref)
        done.append((delta, pref, W[1:], ref))
    # and the whole table, point estimates (liblinear) and intervals, as the page shows it
    new = sp.length_controlled(frame, judges=judge, alpha=0.5, q="superficial", n_boot=300)
    use_previous_path(monkeypatch)
    monkeypatch.setattr(sp, "alpacaeval_lc_exact", _reusing(done))
    old = sp.length_controlled(frame, judges=judge, alpha=0.5, q="superficial", n_boot=300)
    pd.testing.assert_frame_equal(new, old, check_exact=True)


def _reusing(done):
    """:func:`reference_lc_exact`, taking the rows already fitted above where a call's resamples are among them.

    Why: the table's 300 resamples of a pair are the first 300 of the 1,000 just compared (the same seeded
    stream), and the previous path fits each resample on its own, so its rows are those rows; fitting them a
    second time would repeat the same computation. Any other call is computed.
    """
    def fit(delta, preference, counts=None):
        for d, p, W, ref in done:
            if (counts is not None and len(counts) <= len(W) and np.array_equal(d, delta)
                    and np.array_equal(p, preference) and np.array_equal(W[:len(counts)], counts)):
                return {k: v[:len(counts)] for k, v in ref.items()}
        fit.computed += 1
        return reference_lc_exact(delta, preference, counts)

    fit.computed = 0
    return fit


@pytest.mark.slow
@needs_datasets
def test_pandalm_pairs_the_same_as_the_previous_path():
    from evalcore.data.ingest import load

    frame = load(PANDALM, preset="pandalm").frame
    for _, delta, pref, W in _pairs(frame, "pandalm-7b", "length"):
        _assert_same(sp.alpacaeval_lc_exact(delta, pref, W[1:201]), reference_lc_exact(delta, pref, W[1:201]))


def test_direct_liblinear_call_gives_scikit_learns_weights():
    from evalcore.data.ingest import load

    assert sp._liblinear_fit() is sp._liblinear_direct  # the check passes on this scikit-learn
    frame = load(SAMPLE_PAIRS, table="comparisons").frame
    for _, delta, pref, _W in _pairs(frame, "gpt-4/pairwise", "superficial"):
        x, fold = sp._lc_x(delta, np.ones((1, len(delta))))[0], sp._lc_folds(len(delta))
        X = np.column_stack([np.r_[x, x], np.ones(2 * len(x))])
        y, sw = np.r_[np.ones(len(x)), np.zeros(len(x))], np.r_[pref, 1 - pref]
        train = np.flatnonzero(np.r_[fold, fold] != 0)
        rs_a, rs_b = np.random.RandomState(123), np.random.RandomState(123)
        for C in sp.LC_CS:  # one stream drawn once per C, as the cross-validation draws it
            a = sp._liblinear_direct(X[train], y[train], sw[train], C, rs_a)
            b = sp._liblinear_public(X[train], y[train], sw[train], C, rs_b)
            assert np.array_equal(a, b), C
