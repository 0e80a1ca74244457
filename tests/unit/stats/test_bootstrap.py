"""The item bootstrap of evalcore.stats against independent references: numpy.quantile, direct counts,
the multinomial law, and drawing items one by one."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from scipy.stats import kstest, norm

from evalcore.errors import DataError
from evalcore.stats import bootstrap
from evalcore.stats.bootstrap import (
    cell_rng, check_level, check_resamples, item_weights, p_value, percentile_interval, resample_counts, root_seed, z_p_value,
)

LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99)


# --------------------------------------------------------------------------- intervals


def _rows_with_nans(seed: int, rows: int = 300, B: int = 200) -> np.ndarray:
    rng = np.random.default_rng(seed)
    boot = rng.normal(size=(rows, B))
    boot[rng.random(boot.shape) < rng.uniform(0, 0.45, size=(rows, 1))] = np.nan  # up to about 45% undefined
    boot[::7] = np.round(boot[::7], 1)  # ties, as in discrete statistics
    return boot


@pytest.mark.parametrize("level", LEVELS)
def test_percentile_interval_equals_numpy_quantile_bit_for_bit(level):
    boot = _rows_with_nans(int(level * 100))
    lo, hi, sparse = percentile_interval(boot, level)
    a = (1 - level) / 2
    for r in range(len(boot)):
        finite = boot[r][np.isfinite(boot[r])]
        assert sparse[r] == (len(finite) < max(10, boot.shape[1] / 2))
        if sparse[r]:
            assert np.isnan(lo[r]) and np.isnan(hi[r])
            continue
        ref_lo, ref_hi = np.quantile(finite, [round(a, 12), round(1 - a, 12)])
        assert lo[r] == ref_lo and hi[r] == ref_hi, (r, lo[r], ref_lo, hi[r], ref_hi)
    assert (~sparse).sum() > 250


def test_level_095_means_the_2_5_and_97_5_percent_quantiles_exactly():
    boot = np.random.default_rng(2).normal(size=(50, 999))
    lo, hi, _ = percentile_interval(boot, 0.95)
    assert (lo == np.quantile(boot, 0.025, axis=1)).all() and (hi == np.quantile(boot, 0.975, axis=1)).all()


def test_rows_mostly_undefined_get_no_interval():
    B = 100
    boot = np.random.default_rng(0).normal(size=(4, B))
    boot[1, :60] = np.nan  # 40 finite: fewer than half
    boot[2, :] = np.nan
    boot[3, :51] = np.nan  # 49 finite
    lo, hi, sparse = percentile_interval(boot, 0.9)
    assert sparse.tolist() == [False, True, True, True]
    assert np.isfinite(lo[0]) and np.isnan(lo[1:]).all() and np.isnan(hi[1:]).all()
    small = np.random.default_rng(1).normal(size=(1, 12))
    small[0, :3] = np.nan  # 9 finite of 12: more than half, but fewer than 10
    assert percentile_interval(small, 0.9)[2].tolist() == [True]


def test_no_resamples_no_interval_and_not_sparse():
    lo, hi, sparse = percentile_interval(np.empty((3, 0)), 0.95)
    assert np.isnan(lo).all() and np.isnan(hi).all() and not sparse.any()


# --------------------------------------------------------------------------- resample counts


def test_item_weights_have_the_multinomial_law():
    n, B = 40, 5000
    W = item_weights(np.random.default_rng(0), n, B)
    assert W.shape == (1 + B, n) and (W[0] == 1).all()
    assert (W[1:].sum(axis=1) == n).all() and (W[1:] == np.round(W[1:])).all() and (W[1:] >= 0).all()
    # Multinomial(n, 1/n): mean 1, variance 1 - 1/n, covariance -1/n.
    assert abs(W[1:].mean() - 1) < 0.01
    assert abs(W[1:].var(axis=0).mean() - (1 - 1 / n)) < 0.03
    assert abs(np.cov(W[1:, :2].T)[0, 1] + 1 / n) < 0.04
    # The share of items never drawn: (1 - 1/n)^n.
    assert abs((W[1:] == 0).mean() - (1 - 1 / n) ** n) < 0.01


def test_item_weights_row_zero_is_the_data_and_the_rest_are_resample_counts():
    W = item_weights(np.random.default_rng(5), 30, 20)
    assert (W[1:] == resample_counts(np.random.default_rng(5), 30, 20)).all()
    assert item_weights(np.random.default_rng(5), 30, 0).tolist() == [[1.0] * 30]


def test_resample_counts_count_uniform_draws_of_items():
    """A resample is n item indices drawn uniformly with replacement, counted."""
    n, B = 25, 30
    got = resample_counts(np.random.default_rng(3), n, B)
    picks = np.random.default_rng(3).integers(0, n, size=(B, n))
    assert (got == np.stack([np.bincount(p, minlength=n) for p in picks])).all()


def test_class_counts_equal_drawing_items_then_counting_their_classes():
    n, B, k = 60, 50, 4
    classes = np.random.default_rng(9).integers(0, k, n)
    got = resample_counts(np.random.default_rng(4), n, B, classes=classes, n_classes=k)
    assert got.shape == (B, k) and (got.sum(axis=1) == n).all()
    picks = np.random.default_rng(4).integers(0, n, size=(B, n))
    assert (got == np.stack([np.bincount(classes[p], minlength=k) for p in picks])).all()
    # The same as item counts summed per class, from the same stream.
    items = resample_counts(np.random.default_rng(4), n, B)
    assert (got == np.stack([np.bincount(classes, weights=w, minlength=k) for w in items])).all()


@pytest.mark.parametrize("block_cells", [1, 7, 100, 1_000_000])
def test_resample_counts_do_not_depend_on_the_block_size(monkeypatch, block_cells):
    n, B = 37, 41
    classes = np.arange(n) % 3
    ref = resample_counts(np.random.default_rng(8), n, B)
    ref_c = resample_counts(np.random.default_rng(8), n, B, classes=classes, n_classes=3)
    monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", block_cells)
    assert (resample_counts(np.random.default_rng(8), n, B) == ref).all()
    assert (resample_counts(np.random.default_rng(8), n, B, classes=classes, n_classes=3) == ref_c).all()


def test_resample_counts_of_nothing():
    assert resample_counts(np.random.default_rng(0), 0, 5).shape == (5, 0)
    assert resample_counts(np.random.default_rng(0), 5, 0).shape == (0, 5)


# --------------------------------------------------------------------------- p-values


def test_p_value_is_a_direct_count_of_the_finite_resamples():
    rng = np.random.default_rng(11)
    boot = rng.normal(0.3, 1, size=(40, 150))
    boot[rng.random(boot.shape) < 0.1] = np.nan
    boot[0] = np.round(boot[0])  # resamples exactly at the null
    for null in (0.0, 0.5):
        got = {alt: p_value(boot, alternative=alt, null=null) for alt in ("greater", "less", "two-sided")}
        for r, row in enumerate(boot):
            f = row[np.isfinite(row)]
            greater = (1 + (f <= null).sum()) / (1 + len(f))
            less = (1 + (f >= null).sum()) / (1 + len(f))
            assert got["greater"][r] == greater and got["less"][r] == less
            assert got["two-sided"][r] == min(1.0, 2 * min(greater, less))


def test_p_value_without_finite_resamples_is_nan_and_alternative_is_checked():
    assert np.isnan(p_value(np.full((1, 5), np.nan), alternative="greater")).all()
    with pytest.raises(ValueError):
        p_value(np.zeros((1, 3)), alternative="bigger")


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_two_sided_p_below_one_minus_level_iff_the_interval_excludes_zero_on_clear_cases(level):
    rng = np.random.default_rng(int(level * 1000))
    B = 2000
    means = np.array([-4.0, -3.0, 3.0, 4.0, 0.0, 0.2, -0.2, 0.5])  # clearly away from 0, or clearly not
    boot = means[:, None] + rng.normal(size=(len(means), B))
    lo, hi, _ = percentile_interval(boot, level)
    p = p_value(boot, alternative="two-sided")
    excludes = (lo > 0) | (hi < 0)
    assert excludes.tolist() == [True] * 4 + [False] * 4
    assert ((p < 1 - level) == excludes).all()
    # One-sided: the side that names the effect.
    assert (p_value(boot[2:4], alternative="greater") < (1 - level) / 2).all()
    assert (p_value(boot[:2], alternative="less") < (1 - level) / 2).all()


# --------------------------------------------------------------------------- streams and options


def test_cell_rng_is_the_documented_stream_of_seed_and_key():
    key = (("English", "LA"), "gpt-4")
    a = cell_rng(7, key).integers(0, 1000, 20)
    assert (a == np.random.default_rng([7, zlib.crc32(repr(key).encode())]).integers(0, 1000, 20)).all()
    assert (a == cell_rng(7, key).integers(0, 1000, 20)).all()
    assert not (a == cell_rng(7, (("English", "LA"), None)).integers(0, 1000, 20)).all()
    assert not (a == cell_rng(8, key).integers(0, 1000, 20)).all()


def test_root_seed_takes_an_integer_or_a_generator():
    assert root_seed(0) == 0 and root_seed(np.int64(12)) == 12
    assert root_seed(np.random.default_rng(3)) == root_seed(np.random.default_rng(3))
    g = np.random.default_rng(3)
    assert root_seed(g) != root_seed(g)  # a Generator moves on
    for bad in (-1, 1.5, "0", True, None):
        with pytest.raises(DataError, match="seed"):
            root_seed(bad)


def test_option_checks_raise_data_errors_naming_the_fix():
    assert check_resamples(0) == 0 and check_resamples(np.int32(5)) == 5
    for bad in (-1, 2.0, True, "10"):
        with pytest.raises(DataError, match="whole number, 0 or more"):
            check_resamples(bad)
    assert check_level(0.9) == 0.9
    for bad in (0, 1, 95, -0.5, True, "0.95"):
        with pytest.raises(DataError, match="between 0 and 1"):
            check_level(bad)


# --------------------------------------------------------------------------- the z test of the flags


def test_z_p_value_is_the_normal_approximation_with_the_bootstrap_se():
    rng = np.random.default_rng(5)
    boot = rng.normal(0.2, 0.1, size=(3, 300))
    boot[1, :40] = np.nan  # only the finite resamples count
    est = np.array([0.25, -0.1, 0.0])
    se = np.array([np.std(r[np.isfinite(r)], ddof=1) for r in boot])
    z = est / se
    assert np.allclose(z_p_value(est, boot, alternative="greater"), norm.sf(z), rtol=1e-12)
    assert np.allclose(z_p_value(est, boot, alternative="less"), norm.cdf(z), rtol=1e-12)
    assert np.allclose(z_p_value(est, boot, alternative="two-sided"), 2 * norm.sf(np.abs(z)), rtol=1e-12)
    # One alternative per row; the p-value resolves far below 1 / (1 + B).
    mixed = z_p_value(est, boot, alternative=["greater", "less", "two-sided"])
    assert np.allclose(mixed, [norm.sf(z[0]), norm.cdf(z[1]), 1.0])
    assert z_p_value([1.0], boot[:1], alternative="greater")[0] < 1e-15
    # Not defined: no finite estimate, fewer than 2 finite resamples, resamples that do not vary.
    assert np.isnan(z_p_value([np.nan], boot[:1], alternative="greater")).all()
    assert np.isnan(z_p_value([1.0], np.array([[np.nan, 1.0]]), alternative="greater")).all()
    assert np.isnan(z_p_value([1.0], np.full((1, 50), 0.3), alternative="less")).all()
    with pytest.raises(ValueError):
        z_p_value([1.0], boot[:1], alternative="bigger")


@pytest.mark.slow
@pytest.mark.parametrize("statistic", ["mean", "paired_difference"])
def test_z_p_values_are_uniform_under_the_null(statistic):
    """2000 data sets without an effect, 60 items each, B = 200 item resamples: p ~ U(0, 1).

    The normal approximation is what it is: for a strongly skewed statistic in small samples (the
    mean of 60 exponential draws) the "less" tail rejects about 8% at 5%, so the check uses the
    skew of a 1-5 rating scale, and the paired differences every tested measure is made of."""
    rng = np.random.default_rng(17)
    R, n, B = 2000, 60, 200
    levels, probs = np.arange(1, 6), np.array([0.05, 0.1, 0.2, 0.35, 0.3])
    p = {alt: np.empty(R) for alt in ("greater", "less", "two-sided")}
    for r in range(R):
        if statistic == "mean":  # a skewed 1-5 rating, centred on its true mean
            x = rng.choice(levels, size=n, p=probs) - levels @ probs
        else:  # judge minus human on the same items, both noisy around the item's quality
            q = rng.normal(size=n)
            x = (q + rng.normal(0, 0.8, n)) - (q + rng.normal(0, 0.8, n))
        W = item_weights(rng, n, B)
        stat = (W @ x) / n
        for alt in p:
            p[alt][r] = z_p_value(stat[:1], stat[None, 1:], alternative=alt)[0]
    for alt, ps in p.items():
        for a in (0.01, 0.05, 0.10):  # the rejection rate at each level is the level
            assert abs((ps <= a).mean() - a) <= 3 * np.sqrt(a * (1 - a) / R) + 0.01, (alt, a, (ps <= a).mean())
        if statistic == "paired_difference":  # continuous: the whole distribution is uniform
            assert kstest(ps, "uniform").pvalue > 0.001, (alt, kstest(ps, "uniform"))
    print(statistic, {alt: round(float((ps <= 0.05).mean()), 4) for alt, ps in p.items()})
