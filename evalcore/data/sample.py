"""Bundled sample datasets with known ground truth.

Two small, realistic tables in evalcore's canonical layout (see :mod:`evalcore.columns`)
are simulated from simple, documented generative models, so that every analysis in
evalcore can be demonstrated in one click and checked against the parameters that
produced the data:

``ratings_multilingual.csv`` (``ratings`` table)
    Pointwise ratings in the style of Hada et al. 2024 ("Are LLM-based evaluators the
    solution to scaling up multilingual evaluation?"): 10 languages, 3 tasks, criteria
    LA / OCQ / TQ on {0, 1, 2} and PC / H on {0, 1}, up to three native-speaker
    annotators per item and two GPT-4 judge configurations. Built in: a lenient judge
    that is more lenient (and noisier) in non-Latin-script and lower-resource languages;
    anchoring across criteria scored in one prompt; a familiarity (perplexity) bias; and
    one judge sampled five times (Stureborg et al. 2024).

``comparisons_pairwise.csv`` (``comparisons`` table)
    Pairwise verdicts on six generator pairs with known true win rates ``p``; three
    judges with known accuracies ``q0``, ``q1`` (Gao et al. 2024 convention) and a known
    position bias, judged in both presentation orders; CalibraEval's three prompt
    probabilities for one judge with a position and an ID-token bias (Li et al. 2024);
    pointwise judge scores with a superficial-quality (length) bias and a Natural /
    Adversarial split (Zhou et al. 2024).

``ground_truth.json``
    Every generating parameter plus the realised values in the simulated sample.

Run ``python -m evalcore.data.sample [--out DIR] [--seed N]`` to (re)write the files; the same
seed always gives byte-identical files. All randomness comes from
:func:`numpy.random.default_rng` seeded explicitly; nothing touches a global RNG.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalcore.columns import COMPARISONS, HUMAN, JUDGE, RATINGS, column_names

__all__ = [
    "DEFAULT_SEED",
    "DEFAULT_OUT_DIR",
    "RATINGS_FILE",
    "COMPARISONS_FILE",
    "TRUTH_FILE",
    "SampleData",
    "make_samples",
    "make_ratings",
    "make_comparisons",
    "ground_truth",
    "write_samples",
    "main",
]

DEFAULT_SEED = 20240601
DEFAULT_OUT_DIR = Path(__file__).resolve().parents[2] / "sample_data"
RATINGS_FILE = "ratings_multilingual.csv"
COMPARISONS_FILE = "comparisons_pairwise.csv"
TRUTH_FILE = "ground_truth.json"
FORMAT_VERSION = 1

# Independent random streams for the two datasets: default_rng([seed, stream]).
_STREAM_RATINGS = 1
_STREAM_COMPARISONS = 2


# --------------------------------------------------------------------------------------
# Ratings: parameters
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Language:
    """A language of the multilingual ratings and its place in the skew model."""

    name: str
    code: str
    script: str  # "latin" or "non-latin"
    resource: str  # "high", "medium" or "low"

    @property
    def quality_offset(self) -> float:
        """Shift of the true latent quality of the generated texts in this language."""
        return (_QUALITY_NON_LATIN if self.script == "non-latin" else 0.0) + _QUALITY_BY_RESOURCE[self.resource]

    @property
    def judge_leniency(self) -> float:
        """Latent shift the GPT-4 judges add in this language (the skew toward high scores)."""
        return (
            _LENIENCY_BASE
            + (_LENIENCY_NON_LATIN if self.script == "non-latin" else 0.0)
            + _LENIENCY_BY_RESOURCE[self.resource]
        )

    @property
    def judge_sensitivity(self) -> float:
        """How strongly the judges' latent value follows the true quality in this language."""
        return (
            1.0
            - (_SENSITIVITY_LOSS_NON_LATIN if self.script == "non-latin" else 0.0)
            - _SENSITIVITY_LOSS_BY_RESOURCE[self.resource]
        )

    @property
    def judge_noise_sd(self) -> float:
        """Standard deviation of the judges' latent error in this language."""
        return (
            _NOISE_BASE
            + (_NOISE_NON_LATIN if self.script == "non-latin" else 0.0)
            + _NOISE_BY_RESOURCE[self.resource]
        )

    @property
    def latin_high(self) -> bool:
        """True for Latin-script high-resource languages (the reference group)."""
        return self.script == "latin" and self.resource == "high"


LANGUAGES: tuple[Language, ...] = (
    Language("English", "en", "latin", "high"),
    Language("French", "fr", "latin", "high"),
    Language("German", "de", "latin", "high"),
    Language("Spanish", "es", "latin", "high"),
    Language("Czech", "cs", "latin", "medium"),
    Language("Swahili", "sw", "latin", "low"),
    Language("Chinese", "zh", "non-latin", "high"),
    Language("Japanese", "ja", "non-latin", "high"),
    Language("Hindi", "hi", "non-latin", "medium"),
    Language("Bengali", "bn", "non-latin", "low"),
)

_QUALITY_NON_LATIN = -0.4
_QUALITY_BY_RESOURCE = {"high": 0.0, "medium": -0.2, "low": -0.4}
_LENIENCY_BASE = 0.25
_LENIENCY_NON_LATIN = 0.7
_LENIENCY_BY_RESOURCE = {"high": 0.0, "medium": 0.4, "low": 0.8}
_SENSITIVITY_LOSS_NON_LATIN = 0.35
_SENSITIVITY_LOSS_BY_RESOURCE = {"high": 0.0, "medium": 0.15, "low": 0.3}
_NOISE_BASE = 0.25
_NOISE_NON_LATIN = 0.25
_NOISE_BY_RESOURCE = {"high": 0.0, "medium": 0.15, "low": 0.3}

TASKS: dict[str, float] = {"open_prompt": 0.0, "continue_writing": 0.1, "summarize": -0.2}
ITEMS_PER_LANGUAGE_TASK = 40


@dataclass(frozen=True)
class Criterion:
    """A rating criterion: its scale and the latent thresholds that cut it."""

    name: str
    meaning: str
    thresholds: tuple[float, ...]  # score = number of thresholds the latent value exceeds

    @property
    def levels(self) -> tuple[int, ...]:
        return tuple(range(len(self.thresholds) + 1))

    @property
    def top(self) -> int:
        return len(self.thresholds)


CRITERIA: tuple[Criterion, ...] = (
    Criterion("LA", "linguistic acceptability: 0 not acceptable, 1 some errors, 2 perfectly acceptable",
              (-1.6, -0.8)),
    Criterion("OCQ", "output content quality: 0 bad, 1 okay but awkward, 2 high quality", (-1.4, -0.5)),
    Criterion("TQ", "task quality: 0 instructions not followed, 1 approximately, 2 perfectly", (-1.5, -0.6)),
    Criterion("PC", "problematic content: 1 no problematic content, 0 problematic content", (-2.6,)),
    Criterion("H", "hallucinations: 1 no hallucination, 0 hallucination present", (-1.3,)),
)
CRITERION_CORRELATION = 0.4  # share of latent variance shared by an item's criteria

HUMANS_PER_LANGUAGE = 3
HUMAN_NOISE_SD = 0.6
HUMAN_LENIENCY_SD = 0.1
ANNOTATOR_COUNT_PROBS: dict[int, float] = {1: 0.06, 2: 0.07, 3: 0.87}

LOG_PPL_MEAN = math.log(20.0)
LOG_PPL_SD = 0.5

SINGLE_CALL_JUDGE = "gpt-4/single-call"
PER_CRITERION_JUDGE = "gpt-4/per-criterion"
ANCHORING_WEIGHT = 0.5  # gamma: weight of the first-scored criterion's latent value
FAMILIARITY_SLOPE = 0.8  # latent shift per unit of log-perplexity below the mean
N_JUDGE_SAMPLES = 5
SAMPLE_NOISE_SD = 0.35


# --------------------------------------------------------------------------------------
# Comparisons: parameters
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """A generator pair and the true probability that ``system_a``'s output is better."""

    system_a: str
    system_b: str
    p: float


@dataclass(frozen=True)
class PairwiseJudge:
    """A pairwise judge with known accuracies, position bias and superficial bias.

    ``q0`` = P(judge says a | a truly better) and ``q1`` = P(judge says b | b truly
    better), each averaged over the two presentation orders. The judge favours the
    output shown first by ``position_bias``: its accuracy is ``q0 + pi`` / ``q1 - pi``
    when a is shown first (``swapped`` false) and ``q0 - pi`` / ``q1 + pi`` when b is.
    """

    name: str
    q0: float
    q1: float
    position_bias: float
    superficial_beta: float
    calibraeval: bool = False


PAIRS: tuple[Pair, ...] = (
    Pair("cirrus-70b", "atlas-7b", 0.80),
    Pair("cirrus-70b", "borealis-13b", 0.68),
    Pair("ember-34b", "borealis-13b", 0.56),
    Pair("dune-8x7b", "ember-34b", 0.50),
    Pair("atlas-7b", "dune-8x7b", 0.36),
    Pair("atlas-7b", "ember-34b", 0.24),
)
ITEMS_PER_PAIR = 150


def true_win_rate(system_a: str, system_b: str) -> float | None:
    """The simulated truth p of a sample pair, in the order asked (None for a pair the sample does not have).

    >>> true_win_rate("cirrus-70b", "atlas-7b"), true_win_rate("atlas-7b", "cirrus-70b"), true_win_rate("x", "y")
    (0.8, 0.19999999999999996, None)
    """
    for pair in PAIRS:
        if (pair.system_a, pair.system_b) == (system_a, system_b):
            return pair.p
        if (pair.system_b, pair.system_a) == (system_a, system_b):
            return 1.0 - pair.p
    return None

PAIRWISE_JUDGES: tuple[PairwiseJudge, ...] = (
    PairwiseJudge("gpt-4/pairwise", 0.88, 0.84, 0.06, 0.5, calibraeval=True),
    PairwiseJudge("gpt-3.5/pairwise", 0.78, 0.70, 0.12, 1.0),
    PairwiseJudge("llama-2-70b/pairwise", 0.70, 0.66, 0.18, 1.4),
)
CALIBRA_POSITION_LOGIT = 0.4  # logit bonus of the option shown at position 1
CALIBRA_ID_LOGIT = 0.2  # logit bonus of the option ID token "A"
PROB_FLOOR = 1e-4  # probabilities are clipped to [1e-4, 1 - 1e-4] and rounded to 4 decimals
VERDICT_THRESHOLD = 1.0  # latent threshold of the judges without probabilities

HUMAN_POOL = 10
HUMAN_ACCURACY = 0.95  # P(annotator picks the truly better output | not a tie)
HUMAN_TIE_RATE = 0.03
HUMAN_COUNT_PROBS: dict[int, float] = {1: 0.2, 2: 0.3, 3: 0.5}

ADVERSARIAL_SHARE = 0.3
QUALITY_MEAN_SD = 0.6  # spread of the mean quality of an item's two outputs
QUALITY_GAP_MIN = 0.2  # the quality gap is 0.2 + |N(0, 0.8)|
QUALITY_GAP_SD = 0.8
LOG_LEN_MEAN = math.log(220.0)  # superficial quality Q = length in tokens
LOG_LEN_SD = 0.45  # fixed standardisation: z = (ln Q - ln 220) / 0.45
NATURAL_LENGTH_QUALITY = 0.25  # natural subset: ln Q = ln 220 + 0.25 * quality + N(0, 0.35)
NATURAL_LENGTH_NOISE = 0.35
ADVERSARIAL_LONGER = 0.45  # adversarial: the worse output is ln-longer by 0.45 + ...
ADVERSARIAL_SHORTER = -0.10  # ... and the better one shorter by 0.10 (noise N(0, 0.3))
ADVERSARIAL_NOISE = 0.3
SCORE_CENTER = 5.5  # judge score = 5.5 + 1.6 * quality + beta * z + N(0, 0.7), round, clip 1..10
SCORE_QUALITY_SLOPE = 1.6
SCORE_NOISE_SD = 0.7


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SampleData:
    """The two sample tables and the ground truth they were simulated from.

    Attributes
    ----------
    ratings
        Canonical ``ratings`` table (see :data:`evalcore.columns.RATINGS_COLUMNS`).
    comparisons
        Canonical ``comparisons`` table.
    truth
        JSON-ready dict of every generating parameter and realised value
        (what ``ground_truth.json`` holds).
    """

    ratings: pd.DataFrame
    comparisons: pd.DataFrame
    truth: dict[str, Any]


def make_samples(*, seed: int = DEFAULT_SEED) -> SampleData:
    """Simulate both sample datasets and their ground truth.

    Parameters
    ----------
    seed
        Non-negative integer. The ratings use ``numpy.random.default_rng([seed, 1])``
        and the comparisons ``default_rng([seed, 2])``, so the two are independent and
        each is reproducible on its own.

    Returns
    -------
    SampleData
        ``ratings``, ``comparisons`` and ``truth``.
    """
    seed = _check_seed(seed)
    ratings, ratings_truth = _simulate_ratings(np.random.default_rng([seed, _STREAM_RATINGS]))
    comparisons, comparisons_truth = _simulate_comparisons(
        np.random.default_rng([seed, _STREAM_COMPARISONS])
    )
    truth = {
        "generator": "evalcore.data.sample",
        "format_version": FORMAT_VERSION,
        "seed": seed,
        "regenerate": f"python -m evalcore.data.sample --seed {seed}",
        "ratings": ratings_truth,
        "comparisons": comparisons_truth,
    }
    return SampleData(ratings=ratings, comparisons=comparisons, truth=truth)


def make_ratings(*, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Simulate the multilingual pointwise ratings (canonical ``ratings`` table).

    Generative model (all on one latent scale; a score is the number of the
    criterion's thresholds its latent value exceeds):

    * item quality ``t[i, c] = mu_lang + mu_task + sqrt(r) z_i + sqrt(1 - r) e_ic``
      with ``z, e ~ N(0, 1)`` and ``r = 0.4``;
    * human annotator ``k``: ``t[i, c] + b_k + N(0, 0.6^2)``, ``b_k ~ N(0, 0.1^2)``;
    * both GPT-4 judges: ``s(lang) t[i, c] + leniency(lang) + N(0, noise(lang)^2)``:
      in non-Latin-script and lower-resource languages the judges are more lenient,
      noisier and less sensitive to quality (smaller ``s``), as Hada et al. report;
    * ``gpt-4/single-call`` scores the five criteria in one prompt, in a random order
      per item (``position``); a later criterion's latent value is
      ``(1 - gamma) y_own + gamma y_first`` with ``gamma = 0.5`` (anchoring);
    * ``gpt-4/per-criterion`` scores each criterion in its own call, five samples per
      item (``sample`` 0..4) that share the item-level error and add ``N(0, 0.35^2)``
      each, and adds ``-0.8 (ln ppl - ln 20)`` (familiarity bias).

    Parameters
    ----------
    seed
        Non-negative integer; see :func:`make_samples`.

    Returns
    -------
    pandas.DataFrame
        Columns ``item_id, rater, rater_kind, criterion, score, sample, position,
        perplexity, language, task``; ``sample`` is 0 for every single judgment and
        ``position`` is empty except for the single-call judge.
    """
    seed = _check_seed(seed)
    return _simulate_ratings(np.random.default_rng([seed, _STREAM_RATINGS]))[0]


def make_comparisons(*, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Simulate the pairwise comparisons (canonical ``comparisons`` table).

    Generative model per item of a pair with true win rate ``p``:

    * true label: a is better on exactly ``round(p * 150)`` of the pair's 150 items,
      in random order, so the sample's true win rate is ``p`` itself (Gao et al. 2024:
      label 0, the first generator, wins);
    * humans (1-3 per item): a tie with probability 0.03, otherwise the truly better
      output with probability 0.95; no position effect;
    * each judge sees both orders (``swapped`` false: a first; true: b first). A latent
      content preference ``l ~ N(m_a, s_a^2)`` if a is better, ``N(-m_b, s_b^2)`` if b is,
      gives the verdict a when ``l > -B`` (a shown first) or ``l > B`` (b shown first).
      ``m, s`` are solved so that P(a | a, a first) = q0 + pi, P(a | a, b first) = q0 - pi,
      P(b | b, a first) = q1 - pi and P(b | b, b first) = q1 + pi exactly;
    * for ``gpt-4/pairwise``, ``l`` is a logit and ``B = 0.4 + 0.2`` (position-1 and
      "A"-token bias): ``prob_a = sigmoid(l + 0.4 + 0.2)``,
      ``prob_a_swap_position = sigmoid(l - 0.4 + 0.2)``,
      ``prob_a_swap_id = sigmoid(-l + 0.4 + 0.2)``;
    * judge scores ``5.5 + 1.6 q + beta z(Q) + N(0, 0.7^2)``, rounded and clipped to
      1..10, where ``z(Q) = (ln Q - ln 220) / 0.45`` standardises the length ``Q``.

    Parameters
    ----------
    seed
        Non-negative integer; see :func:`make_samples`.

    Returns
    -------
    pandas.DataFrame
        Columns ``item_id, system_a, system_b, rater, rater_kind, winner, swapped,
        prob_a, prob_a_swap_position, prob_a_swap_id, score_a, score_b, superficial_a,
        superficial_b, subset``.
    """
    seed = _check_seed(seed)
    return _simulate_comparisons(np.random.default_rng([seed, _STREAM_COMPARISONS]))[0]


def ground_truth(*, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Every parameter the sample datasets were generated from, plus realised values.

    Parameters
    ----------
    seed
        Non-negative integer; see :func:`make_samples`.

    Returns
    -------
    dict
        JSON-ready; the content of ``ground_truth.json``. Keys ``ratings`` and
        ``comparisons`` hold the parameters (``languages``, ``judges``, ``pairs``, ...)
        and a ``realized`` block computed from the simulated tables.
    """
    return make_samples(seed=seed).truth


def write_samples(out_dir: str | Path = DEFAULT_OUT_DIR, *, seed: int = DEFAULT_SEED) -> list[Path]:
    """Write the two CSV files and ``ground_truth.json`` into ``out_dir``.

    Parameters
    ----------
    out_dir
        Directory to write to; created if missing. Existing files of the same names
        are replaced.
    seed
        Non-negative integer; the same seed gives byte-identical files.

    Returns
    -------
    list of pathlib.Path
        The files written: ratings CSV, comparisons CSV, ground-truth JSON.
    """
    data = make_samples(seed=seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / RATINGS_FILE, out / COMPARISONS_FILE, out / TRUTH_FILE]
    texts = [
        data.ratings.to_csv(index=False, lineterminator="\n"),
        data.comparisons.to_csv(index=False, lineterminator="\n"),
        json.dumps(data.truth, indent=1, ensure_ascii=False) + "\n",
    ]
    for path, text in zip(paths, texts):
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8", newline="\n")
        tmp.replace(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m evalcore.data.sample [--out DIR] [--seed N]``.

    Parameters
    ----------
    argv
        Arguments without the program name; ``sys.argv[1:]`` when omitted.

    Returns
    -------
    int
        Exit status (0 on success).
    """
    parser = argparse.ArgumentParser(
        prog="python -m evalcore.data.sample",
        description="Write evalcore's sample datasets (ratings, comparisons) and their ground truth.",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT_DIR,
                        help=f"output directory (default: {DEFAULT_OUT_DIR})")
    parser.add_argument("--seed", type=_seed_arg, default=DEFAULT_SEED,
                        help=f"random seed, a non-negative integer (default: {DEFAULT_SEED})")
    args = parser.parse_args(argv)
    for path in write_samples(args.out, seed=args.seed):
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


# --------------------------------------------------------------------------------------
# Ratings simulation
# --------------------------------------------------------------------------------------


def _discretise(latent: np.ndarray, crit_index: np.ndarray) -> np.ndarray:
    """Score = number of the criterion's thresholds that ``latent`` exceeds."""
    score = np.zeros(latent.shape, dtype=np.int64)
    for c, crit in enumerate(CRITERIA):
        mask = crit_index == c
        for th in crit.thresholds:
            score[mask] += latent[mask] > th
    return score


def _rating_items() -> dict[str, np.ndarray]:
    """The items of the ratings sample: language and task index and id of each (no randomness)."""
    n_lang, n_task, n_per = len(LANGUAGES), len(TASKS), ITEMS_PER_LANGUAGE_TASK
    task_names = list(TASKS)
    lang_of = np.repeat(np.arange(n_lang), n_task * n_per)
    task_of = np.tile(np.repeat(np.arange(n_task), n_per), n_lang)
    k_of = np.tile(np.arange(n_per), n_lang * n_task)
    item_ids = np.array(
        [f"{LANGUAGES[li].code}-{task_names[ti]}-{k:02d}" for li, ti, k in zip(lang_of, task_of, k_of)]
    )
    return {"lang_of": lang_of, "task_of": task_of, "item_ids": item_ids}


def _simulate_humans(rng: np.random.Generator, true: np.ndarray,
                     lang_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three annotators per language, some items losing one or two: who is present, each annotator's
    leniency, and their latent view of each (item, annotator, criterion)."""
    n_items, n_crit = true.shape
    counts = np.array(list(ANNOTATOR_COUNT_PROBS))
    n_humans = rng.choice(counts, size=n_items, p=np.array(list(ANNOTATOR_COUNT_PROBS.values())))
    order = rng.permuted(np.tile(np.arange(HUMANS_PER_LANGUAGE), (n_items, 1)), axis=1)
    present = np.zeros((n_items, HUMANS_PER_LANGUAGE), dtype=bool)
    for slot in range(HUMANS_PER_LANGUAGE):
        present[np.arange(n_items), order[:, slot]] = slot < n_humans
    human_bias = rng.normal(0.0, HUMAN_LENIENCY_SD, (len(LANGUAGES), HUMANS_PER_LANGUAGE))
    human_latent = (
        true[:, None, :]
        + human_bias[lang_of][:, :, None]
        + rng.normal(0.0, HUMAN_NOISE_SD, (n_items, HUMANS_PER_LANGUAGE, n_crit))
    )
    return present, human_bias, human_latent


def _simulate_rating_judges(rng: np.random.Generator, true: np.ndarray, log_ppl: np.ndarray,
                            lang_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two judges' latent views: the single-call judge's (anchored) with its criterion positions,
    and the per-criterion judge's five samples (familiarity bias)."""
    n_items, n_crit = true.shape
    leniency = np.array([lang.judge_leniency for lang in LANGUAGES])[lang_of]
    noise_sd = np.array([lang.judge_noise_sd for lang in LANGUAGES])[lang_of]
    sensitivity = np.array([lang.judge_sensitivity for lang in LANGUAGES])[lang_of]
    # Judge 1: all criteria in one prompt, random order per item, anchored on the first.
    judge_view = sensitivity[:, None] * true + leniency[:, None]
    single = judge_view + noise_sd[:, None] * rng.standard_normal((n_items, n_crit))
    crit_order = rng.permuted(np.tile(np.arange(n_crit), (n_items, 1)), axis=1)
    position = np.empty((n_items, n_crit), dtype=np.int64)
    position[np.arange(n_items)[:, None], crit_order] = np.arange(1, n_crit + 1)[None, :]
    first = single[np.arange(n_items), crit_order[:, 0]]
    g = ANCHORING_WEIGHT
    single = np.where(position == 1, single, (1 - g) * single + g * first[:, None])

    # Judge 2: one call per criterion, five samples, familiarity bias.
    familiarity = -FAMILIARITY_SLOPE * (log_ppl - LOG_PPL_MEAN)
    persistent = noise_sd[:, None] * rng.standard_normal((n_items, n_crit))
    per_crit = (
        (judge_view + familiarity[:, None] + persistent)[:, None, :]
        + rng.normal(0.0, SAMPLE_NOISE_SD, (n_items, N_JUDGE_SAMPLES, n_crit))
    )
    return single, position, per_crit


def _rating_blocks(present: np.ndarray, human_latent: np.ndarray, lang_of: np.ndarray, single: np.ndarray,
                   position: np.ndarray, per_crit: np.ndarray) -> pd.DataFrame:
    """The rows of the humans, the single-call judge and the per-criterion judge, sorted by item, rater,
    sample and criterion (indices in ``_item``, ``_crit``, ``_sample``)."""
    n_items, n_crit = single.shape
    blocks = []
    # Humans
    ii, hh, cc = np.nonzero(np.broadcast_to(present[:, :, None], human_latent.shape))
    blocks.append(pd.DataFrame({
        "_item": ii, "_rater": hh, "_sample": 0, "_crit": cc,
        "rater": [f"{LANGUAGES[li].code}_ann{h + 1}" for li, h in zip(lang_of[ii], hh)],
        "rater_kind": HUMAN,
        "score": _discretise(human_latent[ii, hh, cc], cc),
        "position": pd.array([pd.NA] * len(ii), dtype="Int64"),
    }))
    # Single-call judge
    ii, cc = np.divmod(np.arange(n_items * n_crit), n_crit)
    blocks.append(pd.DataFrame({
        "_item": ii, "_rater": HUMANS_PER_LANGUAGE, "_sample": 0, "_crit": cc,
        "rater": SINGLE_CALL_JUDGE, "rater_kind": JUDGE,
        "score": _discretise(single[ii, cc], cc),
        "position": pd.array(position[ii, cc], dtype="Int64"),
    }))
    # Per-criterion judge, five samples
    ii, ss, cc = np.unravel_index(np.arange(n_items * N_JUDGE_SAMPLES * n_crit),
                                  (n_items, N_JUDGE_SAMPLES, n_crit))
    blocks.append(pd.DataFrame({
        "_item": ii, "_rater": HUMANS_PER_LANGUAGE + 1, "_sample": ss, "_crit": cc,
        "rater": PER_CRITERION_JUDGE, "rater_kind": JUDGE,
        "score": _discretise(per_crit[ii, ss, cc], cc),
        "position": pd.array([pd.NA] * len(ii), dtype="Int64"),
    }))
    df = pd.concat(blocks, ignore_index=True)
    return df.sort_values(["_item", "_rater", "_sample", "_crit"], kind="mergesort").reset_index(drop=True)


def _simulate_ratings(rng: np.random.Generator) -> tuple[pd.DataFrame, dict[str, Any]]:
    n_crit = len(CRITERIA)
    task_names = list(TASKS)
    items = _rating_items()
    lang_of, task_of, item_ids = items["lang_of"], items["task_of"], items["item_ids"]
    n_items = len(item_ids)
    lang_quality = np.array([lang.quality_offset for lang in LANGUAGES])
    task_quality = np.array([TASKS[t] for t in task_names])

    # True latent quality per (item, criterion).
    r = CRITERION_CORRELATION
    mu = lang_quality[lang_of] + task_quality[task_of]
    z = rng.standard_normal(n_items)
    e = rng.standard_normal((n_items, n_crit))
    true = mu[:, None] + math.sqrt(r) * z[:, None] + math.sqrt(1 - r) * e

    log_ppl = rng.normal(LOG_PPL_MEAN, LOG_PPL_SD, n_items)
    perplexity = np.round(np.exp(log_ppl), 2)

    # The draws come in this order: truth, perplexity, humans, then judges.
    present, human_bias, human_latent = _simulate_humans(rng, true, lang_of)
    single, position, per_crit = _simulate_rating_judges(rng, true, log_ppl, lang_of)

    crit_names = np.array([c.name for c in CRITERIA])
    df = _rating_blocks(present, human_latent, lang_of, single, position, per_crit)
    item = df["_item"].to_numpy()
    df["item_id"] = item_ids[item]
    df["criterion"] = crit_names[df["_crit"].to_numpy()]
    df["sample"] = df["_sample"].astype("int64")
    df["perplexity"] = perplexity[item]
    df["language"] = np.array([lang.name for lang in LANGUAGES])[lang_of[item]]
    df["task"] = np.array(task_names)[task_of[item]]
    df["score"] = df["score"].astype("int64")
    df = df[[c for c in column_names(RATINGS) if c in df.columns]]
    return df, _ratings_truth(df, human_bias)


def _ratings_truth(df: pd.DataFrame, human_bias: np.ndarray) -> dict[str, Any]:
    languages = []
    for li, lang in enumerate(LANGUAGES):
        languages.append({
            "language": lang.name, "code": lang.code, "script": lang.script, "resource": lang.resource,
            "quality_offset": _r(lang.quality_offset),
            "judge_leniency": _r(lang.judge_leniency), "judge_sensitivity": _r(lang.judge_sensitivity),
            "judge_noise_sd": _r(lang.judge_noise_sd),
            "annotators": {f"{lang.code}_ann{h + 1}": {"leniency": _r(human_bias[li, h])}
                           for h in range(HUMANS_PER_LANGUAGE)},
        })
    n_items = df["item_id"].nunique()
    return {
        "file": RATINGS_FILE,
        "table": RATINGS,
        "n_rows": int(len(df)),
        "n_items": int(n_items),
        "model": {
            "latent_quality": "t[i,c] = quality_offset(lang) + task_offset(task) + sqrt(r)*z_i + sqrt(1-r)*e_ic, "
                              "z_i, e_ic ~ N(0,1)",
            "score": "number of the criterion's thresholds the rater's latent value exceeds",
            "human": "t[i,c] + leniency_k + N(0, human_noise_sd^2)",
            "judge": "judge_sensitivity(lang)*t[i,c] + judge_leniency(lang) + N(0, judge_noise_sd(lang)^2) "
                     "(+ the judge's own biases)",
            "judge_sensitivity": f"1 - {_SENSITIVITY_LOSS_NON_LATIN}*[non-latin] - "
                                 f"{_SENSITIVITY_LOSS_BY_RESOURCE} by resource",
            "quality_offset": f"{_QUALITY_NON_LATIN}*[non-latin] + {_QUALITY_BY_RESOURCE} by resource",
            "judge_leniency": f"{_LENIENCY_BASE} + {_LENIENCY_NON_LATIN}*[non-latin] + "
                              f"{_LENIENCY_BY_RESOURCE} by resource",
            "judge_noise_sd": f"{_NOISE_BASE} + {_NOISE_NON_LATIN}*[non-latin] + {_NOISE_BY_RESOURCE} by resource",
            "good_direction": "higher is better on every criterion (PC and H: 1 = no problem, as in Hada et al.)",
        },
        "criterion_correlation": CRITERION_CORRELATION,
        "criteria": {c.name: {"levels": list(c.levels), "top": c.top, "thresholds": list(c.thresholds),
                              "meaning": c.meaning} for c in CRITERIA},
        "tasks": {name: {"quality_offset": off} for name, off in TASKS.items()},
        "items_per_language_task": ITEMS_PER_LANGUAGE_TASK,
        "languages": languages,
        "humans": {
            "per_language": HUMANS_PER_LANGUAGE,
            "rater_ids": "<code>_ann1 .. <code>_ann3",
            "noise_sd": HUMAN_NOISE_SD,
            "leniency_sd": HUMAN_LENIENCY_SD,
            "annotators_per_item_probs": {str(k): v for k, v in ANNOTATOR_COUNT_PROBS.items()},
            "familiarity": 0.0,
        },
        "judges": {
            SINGLE_CALL_JUDGE: {
                "samples": 1,
                "criteria_in_one_prompt": True,
                "criterion_order": "uniformly random per item; recorded in 'position' (1..5)",
                "anchoring_weight": ANCHORING_WEIGHT,
                "anchoring": "latent of a criterion at position >= 2 = (1-w)*own + w*latent of the position-1 "
                             "criterion",
                "familiarity_slope": 0.0,
            },
            PER_CRITERION_JUDGE: {
                "samples": N_JUDGE_SAMPLES,
                "criteria_in_one_prompt": False,
                "sample_noise_sd": SAMPLE_NOISE_SD,
                "sampling": "the 5 samples share the item-level judge error and add independent "
                            "N(0, sample_noise_sd^2) each",
                "anchoring_weight": 0.0,
                "familiarity_slope": FAMILIARITY_SLOPE,
                "familiarity": "latent shift = -familiarity_slope * (ln(perplexity) - ln(20)): "
                               "+0.8 per unit of natural-log perplexity below ln 20",
            },
        },
        "sample_column": "0 for every single judgment (humans, single-call judge); 0..4 for the per-criterion judge",
        "position_column": "empty except for the single-call judge",
        "perplexity": {
            "distribution": "ln(perplexity) ~ N(ln 20, 0.5^2) per item, independent of quality and language",
            "log_mean": _r(LOG_PPL_MEAN), "log_sd": LOG_PPL_SD,
        },
        "realized": _ratings_realized(df),
    }


def _ratings_realized(df: pd.DataFrame) -> dict[str, Any]:
    """Per-language statistics of the simulated ratings (what the analyses should find)."""
    top = {c.name: c.top for c in CRITERIA}
    d = df.assign(is_top=df["score"].eq(df["criterion"].map(top)))
    humans = d[d["rater_kind"] == HUMAN]
    judges = d[(d["rater_kind"] == JUDGE) & (d["sample"] == 0)]
    n_h = humans.groupby(["item_id", "criterion"])["score"].transform("size")
    counts = humans[humans["criterion"] == CRITERIA[0].name].groupby("item_id").size()
    # Human majority: a value given by more than half the annotators of an item (2+ annotators).
    vc = (humans[n_h >= 2].groupby(["item_id", "criterion", "score"]).size().rename("k").reset_index())
    n_by = humans.groupby(["item_id", "criterion"]).size().rename("n").reset_index()
    vc = vc.merge(n_by, on=["item_id", "criterion"])
    majority = vc[vc["k"] * 2 > vc["n"]][["item_id", "criterion", "score"]].rename(columns={"score": "majority"})
    jm = judges.merge(majority, on=["item_id", "criterion"])
    jm["agree"] = jm["score"] == jm["majority"]
    out: dict[str, Any] = {
        "annotators_per_item": {str(k): int(v) for k, v in counts.value_counts().sort_index().items()},
        "by_language_definitions": {
            "human_top_share": "share of human scores equal to 2 on LA, OCQ, TQ",
            "judge_top_share": "share of the judge's scores equal to 2 on LA, OCQ, TQ (sample 0)",
            "judge_majority_agreement": "share of (item, criterion), all five criteria, where the judge's score "
                                        "(sample 0) equals the strict human majority (items with 2+ annotators "
                                        "and a value given by more than half of them)",
        },
        "by_language": {},
    }
    three = [c.name for c in CRITERIA if c.top == 2]
    human_top = humans[humans["criterion"].isin(three)].groupby("language")["is_top"].mean()
    judge_top = judges[judges["criterion"].isin(three)].groupby(["language", "rater"])["is_top"].mean()
    agreement = jm.groupby(["language", "rater"])["agree"].mean()
    raters = sorted(judges["rater"].unique())
    for lang in LANGUAGES:
        out["by_language"][lang.name] = {
            "human_top_share": _r(human_top[lang.name]),
            "judge_top_share": {name: _r(judge_top[(lang.name, name)]) for name in raters},
            "judge_majority_agreement": {name: _r(agreement[(lang.name, name)]) for name in raters},
        }
    out["bias_diagnostics_definitions"] = {
        "score_perplexity_kendall_tau": "Kendall's tau-b between score and perplexity over all LA, OCQ, TQ rows "
                                        "of the rater group (all samples)",
        "mean_inter_criterion_correlation": "mean Pearson correlation between LA, OCQ and TQ across "
                                            "(item, rater, sample) rows of the rater group",
    }
    out["score_perplexity_kendall_tau"] = {}
    out["mean_inter_criterion_correlation"] = {}
    groups = {"humans": d[d["rater_kind"] == HUMAN]}
    groups.update({name: g for name, g in d[d["rater_kind"] == JUDGE].groupby("rater")})
    for name, g in groups.items():
        g3 = g[g["criterion"].isin(three)]
        out["score_perplexity_kendall_tau"][name] = _r(_kendall_tau(g3["score"], g3["perplexity"]))
        wide = g3.pivot_table(index=["item_id", "rater", "sample"], columns="criterion", values="score")
        corr = wide[three].dropna().corr().to_numpy()
        out["mean_inter_criterion_correlation"][name] = _r(corr[np.triu_indices(len(three), k=1)].mean())
    return out


def _kendall_tau(x: pd.Series, y: pd.Series) -> float:
    from scipy.stats import kendalltau  # heavy import, only needed here

    return float(kendalltau(x.to_numpy(), y.to_numpy()).statistic)


# --------------------------------------------------------------------------------------
# Comparisons simulation
# --------------------------------------------------------------------------------------


def _latent_verdict_params(q: float, pi: float, threshold: float) -> tuple[float, float]:
    """Mean and sd of the latent preference so that the two per-order accuracies are exact.

    With ``l ~ N(m, s^2)`` (oriented toward the truly better output), the judge is right
    with probability ``Phi((m + B) / s)`` when the better output is shown first and
    ``Phi((m - B) / s)`` when it is shown second. Setting these to ``q + pi`` and
    ``q - pi`` gives ``s = 2B / (z1 - z2)`` and ``m = B (z1 + z2) / (z1 - z2)``.
    """
    if not (0 < q - pi and q + pi < 1 and pi > 0):
        raise ValueError(f"need 0 < q - pi < q + pi < 1 and pi > 0, got q={q}, pi={pi}")
    z1 = NormalDist().inv_cdf(q + pi)
    z2 = NormalDist().inv_cdf(q - pi)
    return threshold * (z1 + z2) / (z1 - z2), 2 * threshold / (z1 - z2)


def _round_prob(x: np.ndarray) -> np.ndarray:
    """Clip to [1e-4, 1 - 1e-4] and round to 4 decimals, never onto 0.5 exactly.

    A value that would round to 0.5 becomes 0.5001 or 0.4999 on its own side, so a
    verdict read off the rounded probability (> 0.5 or < 0.5) is the simulated one.
    """
    r = np.round(np.clip(x, PROB_FLOOR, 1 - PROB_FLOOR), 4)
    return np.where(r == 0.5, np.where(x > 0.5, 0.5001, 0.4999), r)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _comparison_items(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each item's pair index and id, whether system_a's output is truly better, and its subset."""
    n_pairs = len(PAIRS)
    n = n_pairs * ITEMS_PER_PAIR
    pair_of = np.repeat(np.arange(n_pairs), ITEMS_PER_PAIR)
    item_ids = np.array([f"q{i + 1:04d}" for i in range(n)])
    # True labels: exactly round(p * n) items of each pair have a truly better, in random order.
    a_better = np.zeros(n, dtype=bool)
    for k, pair in enumerate(PAIRS):
        wins = np.arange(ITEMS_PER_PAIR) < round(pair.p * ITEMS_PER_PAIR)
        a_better[pair_of == k] = rng.permutation(wins)
    adversarial = rng.random(n) < ADVERSARIAL_SHARE
    return pair_of, item_ids, a_better, adversarial


def _simulate_outputs(rng: np.random.Generator, a_better: np.ndarray,
                      adversarial: np.ndarray) -> dict[str, np.ndarray]:
    """Output qualities and superficial quality (length in tokens, and its standardised log) of a and b."""
    n = len(a_better)
    center = rng.normal(0.0, QUALITY_MEAN_SD, n)
    gap = QUALITY_GAP_MIN + np.abs(rng.normal(0.0, QUALITY_GAP_SD, n))
    q_better, q_worse = center + gap / 2, center - gap / 2
    nat_better = LOG_LEN_MEAN + NATURAL_LENGTH_QUALITY * q_better + rng.normal(0, NATURAL_LENGTH_NOISE, n)
    nat_worse = LOG_LEN_MEAN + NATURAL_LENGTH_QUALITY * q_worse + rng.normal(0, NATURAL_LENGTH_NOISE, n)
    adv_better = LOG_LEN_MEAN + ADVERSARIAL_SHORTER + rng.normal(0, ADVERSARIAL_NOISE, n)
    adv_worse = LOG_LEN_MEAN + ADVERSARIAL_LONGER + rng.normal(0, ADVERSARIAL_NOISE, n)
    len_better = np.rint(np.exp(np.where(adversarial, adv_better, nat_better))).astype(np.int64)
    len_worse = np.rint(np.exp(np.where(adversarial, adv_worse, nat_worse))).astype(np.int64)
    len_a = np.where(a_better, len_better, len_worse)
    len_b = np.where(a_better, len_worse, len_better)
    return {
        "quality_a": np.where(a_better, q_better, q_worse), "quality_b": np.where(a_better, q_worse, q_better),
        "len_a": len_a, "len_b": len_b,
        "z_a": (np.log(len_a) - LOG_LEN_MEAN) / LOG_LEN_SD, "z_b": (np.log(len_b) - LOG_LEN_MEAN) / LOG_LEN_SD,
    }


def _simulate_pair_humans(rng: np.random.Generator, a_better: np.ndarray) -> pd.DataFrame:
    """Humans: 1-3 of a pool of annotators per item, random presentation order, no position effect."""
    n = len(a_better)
    counts = np.array(list(HUMAN_COUNT_PROBS))
    n_humans = rng.choice(counts, size=n, p=np.array(list(HUMAN_COUNT_PROBS.values())))
    pool_order = rng.permuted(np.tile(np.arange(HUMAN_POOL), (n, 1)), axis=1)
    tie = rng.random((n, HUMAN_POOL)) < HUMAN_TIE_RATE
    right = rng.random((n, HUMAN_POOL)) < HUMAN_ACCURACY
    human_swapped = rng.random((n, HUMAN_POOL)) < 0.5
    says_a = np.where(right, a_better[:, None], ~a_better[:, None])
    human_winner = np.where(tie, "tie", np.where(says_a, "a", "b"))
    slots = np.arange(HUMAN_POOL)[None, :] < n_humans[:, None]
    ii, ss = np.nonzero(slots)
    hh = pool_order[ii, ss]
    return pd.DataFrame({
        "_item": ii, "_rank": 0, "_slot": hh,
        "rater": [f"annotator_{h + 1:02d}" for h in hh],
        "rater_kind": HUMAN,
        "winner": human_winner[ii, hh],
        "swapped": human_swapped[ii, hh],
    })


def _simulate_pair_judge(rng: np.random.Generator, judge: PairwiseJudge, rank: int, a_better: np.ndarray,
                         out: dict[str, np.ndarray]) -> tuple[list[pd.DataFrame], dict[str, Any]]:
    """One judge's rows in both presentation orders from one latent content preference per item, and
    what the ground truth records of it."""
    n = len(a_better)
    threshold = (CALIBRA_POSITION_LOGIT + CALIBRA_ID_LOGIT) if judge.calibraeval else VERDICT_THRESHOLD
    m_a, s_a = _latent_verdict_params(judge.q0, judge.position_bias, threshold)
    m_b, s_b = _latent_verdict_params(judge.q1, judge.position_bias, threshold)
    eps = rng.standard_normal(n)
    pref = np.where(a_better, m_a + s_a * eps, -m_b + s_b * eps)
    say_a_first = pref > -threshold  # a shown first (swapped = false)
    say_a_second = pref > threshold  # b shown first (swapped = true)
    score_a = np.clip(np.rint(SCORE_CENTER + SCORE_QUALITY_SLOPE * out["quality_a"] + judge.superficial_beta
                              * out["z_a"] + rng.normal(0, SCORE_NOISE_SD, n)), 1, 10)
    score_b = np.clip(np.rint(SCORE_CENTER + SCORE_QUALITY_SLOPE * out["quality_b"] + judge.superficial_beta
                              * out["z_b"] + rng.normal(0, SCORE_NOISE_SD, n)), 1, 10)
    nan = np.full(n, np.nan)
    if judge.calibraeval:
        pa = _sigmoid(pref + CALIBRA_POSITION_LOGIT + CALIBRA_ID_LOGIT)
        pa_pos = _sigmoid(pref - CALIBRA_POSITION_LOGIT + CALIBRA_ID_LOGIT)
        pa_id = _sigmoid(-pref + CALIBRA_POSITION_LOGIT + CALIBRA_ID_LOGIT)
        probs = [_round_prob(x) for x in (pa, pa_pos, pa_id)]
    else:
        probs = [nan, nan, nan]
    rows = []
    for swapped, says in ((False, say_a_first), (True, say_a_second)):
        rows.append(pd.DataFrame({
            "_item": np.arange(n), "_rank": rank, "_slot": int(swapped),
            "rater": judge.name, "rater_kind": JUDGE,
            "winner": np.where(says, "a", "b"),
            "swapped": swapped,
            "prob_a": nan if swapped else probs[0],
            "prob_a_swap_position": nan if swapped else probs[1],
            "prob_a_swap_id": nan if swapped else probs[2],
            "score_a": pd.array(nan if swapped else score_a, dtype="Int64"),
            "score_b": pd.array(nan if swapped else score_b, dtype="Int64"),
        }))
    truth = {
        "latent": {"threshold_B": _r(threshold), "m_a": _r(m_a), "s_a": _r(s_a), "m_b": _r(m_b),
                   "s_b": _r(s_b)},
        "_a_first": say_a_first, "_a_second": say_a_second, "_scores": (score_a, score_b),
    }
    return rows, truth


def _simulate_comparisons(rng: np.random.Generator) -> tuple[pd.DataFrame, dict[str, Any]]:
    # The draws come in this order: items, outputs, humans, then each judge.
    pair_of, item_ids, a_better, adversarial = _comparison_items(rng)
    n = len(item_ids)
    out = _simulate_outputs(rng, a_better, adversarial)
    base = pd.DataFrame({
        "_item": np.arange(n),
        "item_id": item_ids,
        "system_a": np.array([pair.system_a for pair in PAIRS])[pair_of],
        "system_b": np.array([pair.system_b for pair in PAIRS])[pair_of],
        "superficial_a": out["len_a"],
        "superficial_b": out["len_b"],
        "subset": np.where(adversarial, "Adversarial", "Natural"),
    })
    judge_rows = [_simulate_pair_humans(rng, a_better)]
    judge_truth: dict[str, Any] = {}
    for rank, judge in enumerate(PAIRWISE_JUDGES, start=1):
        rows, judge_truth[judge.name] = _simulate_pair_judge(rng, judge, rank, a_better, out)
        judge_rows.extend(rows)

    df = pd.concat(judge_rows, ignore_index=True)
    df = df.sort_values(["_item", "_rank", "_slot"], kind="mergesort").reset_index(drop=True)
    df = df.merge(base, on="_item", how="left", validate="many_to_one")
    df = df[[c for c in column_names(COMPARISONS) if c in df.columns]]
    truth = _comparisons_truth(df, a_better, adversarial, pair_of, item_ids, judge_truth)
    return df, truth


def _pairwise_judge_truth(judge: PairwiseJudge, jt: dict[str, Any], a_better: np.ndarray,
                          adversarial: np.ndarray) -> dict[str, Any]:
    """One judge's designed accuracies and what its simulated verdicts and scores realised."""
    first, second = jt["_a_first"], jt["_a_second"]
    score_a, score_b = jt["_scores"]
    score_right = np.where(a_better, score_a > score_b, score_b > score_a)
    pi = judge.position_bias
    return {
        "q0": judge.q0, "q1": judge.q1, "position_bias": pi,
        "accuracy_by_order": {
            "a_shown_first": {"q0": _r(judge.q0 + pi), "q1": _r(judge.q1 - pi)},
            "b_shown_first": {"q0": _r(judge.q0 - pi), "q1": _r(judge.q1 + pi)},
        },
        "superficial_beta": judge.superficial_beta,
        "calibraeval_probabilities": judge.calibraeval,
        "latent": jt["latent"],
        "realized": {
            "a_shown_first": {"q0": _r(first[a_better].mean()), "q1": _r((~first[~a_better]).mean())},
            "b_shown_first": {"q0": _r(second[a_better].mean()), "q1": _r((~second[~a_better]).mean())},
            "both_orders": {
                "q0": _r(np.concatenate([first[a_better], second[a_better]]).mean()),
                "q1": _r(np.concatenate([~first[~a_better], ~second[~a_better]]).mean()),
            },
            "flip_rate": _r((first != second).mean()),
            "score_accuracy": {  # strict: a tie in scores counts as wrong
                "Natural": _r(score_right[~adversarial].mean()),
                "Adversarial": _r(score_right[adversarial].mean()),
            },
        },
    }


def _pairwise_humans_truth(humans: pd.DataFrame) -> dict[str, Any]:
    """The annotators' design and what the simulation realised."""
    return {
        "pool": HUMAN_POOL,
        "rater_ids": "annotator_01 .. annotator_10",
        "annotators_per_item_probs": {str(k): v for k, v in HUMAN_COUNT_PROBS.items()},
        "tie_rate": HUMAN_TIE_RATE,
        "accuracy_given_not_tie": HUMAN_ACCURACY,
        "expected_share_a_among_non_ties": "0.95*p + 0.05*(1-p)",
        "presentation": "each annotator sees one random order (swapped 50/50); no position effect",
        "realized_annotators_per_item": {
            str(k): int(v) for k, v in humans.groupby("item_id").size().value_counts().sort_index().items()
        },
        "realized_tie_share": _r((humans["winner"] == "tie").mean()),
    }


def _pairwise_judge_model() -> dict[str, Any]:
    """How the judges' verdicts are simulated, in words."""
    return {
        "orders": "two rows per judge and item: swapped=false (a shown first) and swapped=true (b shown first)",
        "latent": "l ~ N(m_a, s_a^2) if a truly better, N(-m_b, s_b^2) if b; verdict a iff l > -B "
                  "(a shown first) or l > B (b shown first)",
        "accuracy": "P(a|a) = q0 + pi (a first), q0 - pi (b first); P(b|b) = q1 - pi (a first), "
                    "q1 + pi (b first); averaged over the two orders: q0, q1",
        "flips": "a verdict changes between orders iff |l| < B, always toward the output shown first",
        "independence": "judges err independently given the true label (the Dawid-Skene assumption); "
                        "judge verdicts do not depend on length",
        "ties": "judges never say tie",
    }


def _calibraeval_truth() -> dict[str, Any]:
    """How the CalibraEval probabilities are simulated, in words."""
    return {
        "judge": next(j.name for j in PAIRWISE_JUDGES if j.calibraeval),
        "rows": "the judge's swapped=false rows; NaN elsewhere",
        "position_logit": CALIBRA_POSITION_LOGIT,
        "id_logit": CALIBRA_ID_LOGIT,
        "prompts": {
            "prob_a": "s0: a at position 1 labelled 'A'; P('A') = sigmoid(l + pos + id)",
            "prob_a_swap_position": "s1: a at position 2, still labelled 'A'; P('A') = sigmoid(l - pos + id)",
            "prob_a_swap_id": "s2: 'A' labels b at position 1; P('A') = sigmoid(-l + pos + id)",
        },
        "consistency": "winner on the swapped=false row is 'a' iff prob_a > 0.5; on the swapped=true row "
                       "(the s2 presentation) 'a' iff prob_a_swap_id < 0.5",
        "unbiased_would_satisfy": "prob_a == prob_a_swap_position and prob_a + prob_a_swap_id == 1",
    }


def _superficial_truth(adversarial: np.ndarray) -> dict[str, Any]:
    """How superficial quality (length) and the judges' pointwise scores are simulated."""
    return {
        "Q": "length of the output in tokens (superficial_a, superficial_b, on every row)",
        "standardised": f"z = (ln Q - ln 220) / {LOG_LEN_SD}",
        "judge_score": "score = clip(round(5.5 + 1.6*quality + beta*z + N(0, 0.7^2)), 1, 10), on the judge's "
                       "swapped=false rows (a pointwise pass, independent of order)",
        "quality": "mean ~ N(0, 0.6^2); gap = 0.2 + |N(0, 0.8^2)|; better = mean + gap/2",
        "natural_length": "ln Q = ln 220 + 0.25*quality + N(0, 0.35^2)",
        "adversarial_length": "ln Q = ln 220 + 0.45 + N(0, 0.3^2) for the worse output and "
                              "ln 220 - 0.10 + N(0, 0.3^2) for the better one",
        "adversarial_share": ADVERSARIAL_SHARE,
        "realized_items": {"Natural": int((~adversarial).sum()), "Adversarial": int(adversarial.sum())},
    }


def _comparisons_truth(
    df: pd.DataFrame,
    a_better: np.ndarray,
    adversarial: np.ndarray,
    pair_of: np.ndarray,
    item_ids: np.ndarray,
    judge_truth: dict[str, Any],
) -> dict[str, Any]:
    pairs = []
    for k, pair in enumerate(PAIRS):
        mask = pair_of == k
        pairs.append({"system_a": pair.system_a, "system_b": pair.system_b, "p": pair.p,
                      "n_items": int(mask.sum()), "realized_share_a_better": _r(a_better[mask].mean())})
    judges = {judge.name: _pairwise_judge_truth(judge, judge_truth[judge.name], a_better, adversarial)
              for judge in PAIRWISE_JUDGES}
    humans = df[df["rater_kind"] == HUMAN]
    return {
        "file": COMPARISONS_FILE,
        "table": COMPARISONS,
        "n_rows": int(len(df)),
        "n_items": int(len(item_ids)),
        "label_convention": "winner is in terms of content: 'a' = output of system_a. Gao et al.'s label 0 "
                            "(first generator wins) is winner 'a'; p = P(a truly better).",
        "pairs": pairs,
        "humans": _pairwise_humans_truth(humans),
        "judges": judges,
        "judge_model": _pairwise_judge_model(),
        "calibraeval": _calibraeval_truth(),
        "superficial": _superficial_truth(adversarial),
        "true_winner": {iid: ("a" if ab else "b") for iid, ab in zip(item_ids, a_better)},
    }


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def _r(x: float) -> float:
    """Round for JSON: 4 decimals, plain float."""
    return round(float(x), 4)


def _check_seed(seed: object) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _seed_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be a non-negative integer, got '{text}'") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"seed must be a non-negative integer, got '{text}'")
    return value


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
