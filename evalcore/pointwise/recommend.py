"""Concrete mitigations for the biases found, from the papers' own advice.

Sources: Stureborg, Alikaniotis & Suhara (2024), Table 6 ("identified issues have immediate and
actionable mitigations"); Hada et al. (2024), Section 6: calibrate LLM evaluators against
native-speaker judgments in each language before deployment.

:func:`recommendations` reads the tidy bias records (``section, judge, criterion, ...,
measure, estimate, ci_low, ci_high, n, test, p_value, q_value, flagged, opposite``) and
returns one row per finding that applies, naming the judges and criteria it was found for and
the evidence. Only ``flagged`` rows count (the one flag rule, :func:`evalcore.stats.apply_fdr`):
a result significant in the direction that is not a bias (``opposite``) never triggers a rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .sections import RESULT_COLUMNS

STUREBORG = "Stureborg et al. 2024, Table 6"
HADA = "Hada et al. 2024, §6"


@dataclass(frozen=True)
class Rule:
    """A finding, how it is detected among flagged records, and what to do about it."""

    key: str
    section: str
    measures: tuple[str, ...]  # flagged measures (prefix match) that trigger the rule
    finding: str
    action: str
    source: str
    direction: str = "any"  # "positive", "negative" or "any": the sign of the estimate that counts


RULES: tuple[Rule, ...] = (
    Rule("familiarity", "familiarity", ("tau_difference",),
         "The judge rates low-perplexity (familiar) text higher than humans do.",
         "Keep the source document in the prompt, compare systems on items of similar perplexity, and check "
         "its verdicts against humans on unusually phrased outputs before trusting its ranking.", "Stureborg et al. 2024, §3.1 and Table 6 (keep the source)", "negative"),
    Rule("top_skew", "score_distribution", ("top_share_difference", "mean_shift"),
         "The judge gives higher scores than humans (skew toward the top of the scale).",
         "Calibrate the judge against human judgments before use, separately in each language where the shift "
         "is found (native speakers), and report calibrated rather than raw scores.", HADA, "positive"),
    Rule("low_shift", "score_distribution", ("mean_shift",),
         "The judge gives lower scores than humans.",
         "Calibrate the judge against human judgments before use (per language where it applies), and do not "
         "compare its raw scores with human-rated results.", HADA, "negative"),
    Rule("granularity", "score_distribution", ("entropy_difference",),
         "The judge uses less of the scale than humans (low granularity).",
         "Widen the scale to 1-10 and anchor each point with a description.", STUREBORG, "negative"),
    Rule("round_numbers", "score_distribution", ("round_excess_5_difference", "round_excess_10_difference"),
         "The judge crowds onto round numbers (multiples of 5 or 10) more than humans do.",
         "Use a shorter scale (1-10) or ask for a rating per described level instead of a free number.",
         STUREBORG, "positive"),
    Rule("label_prior", "score_distribution", ("category_share_difference",),
         "The judge gives some categories more or less often than humans do on the same items (a shifted label "
         "prior).",
         "Calibrate the judge's label prior on a human-labelled sample before use (contextual calibration), "
         "define every category with examples in the prompt, and report its category shares beside its verdicts.",
         "Zhao et al. 2021 (contextual calibration); Hada et al. 2024, §6"),
    Rule("category_familiarity", "familiarity", ("mean_perplexity_difference",),
         "The judge gives some categories to texts of another perplexity (familiarity) than humans do.",
         "Keep the source document in the prompt, and check its labels against humans on unusually phrased "
         "texts before trusting its category counts.", "Stureborg et al. 2024, §3.1 and Table 6 (keep the source)"),
    Rule("anchoring", "anchoring", ("r_difference",),
         "The judge's criteria are far more correlated than humans' (anchoring, when they are scored in one prompt).",
         "Judge one criterion per call (predict only one attribute per generation).", STUREBORG, "positive"),
    Rule("position", "anchoring", ("agreement_position_slope",),
         "Agreement with humans falls the later the criterion comes in the prompt.",
         "Judge one criterion per call, or randomise the criterion order and average.", STUREBORG, "negative"),
    Rule("self_consistency", "self_consistency", ("alpha_difference",),
         "The judge disagrees with itself across samples more than humans disagree with each other.",
         "Remove chain-of-thought and sample at temperature 0, or average several samples per item.",
         STUREBORG, "negative"),
    Rule("prompt_sensitivity", "self_consistency", ("alpha_across_variants_difference",),
         "The judge's scores change with prompt variants or temperature.",
         "Fix one prompt and temperature 0 for all comparisons; report results per variant when they differ.",
         STUREBORG, "negative"),
)
COLUMNS = ("finding", "recommendation", "judges", "criteria", "groups", "evidence", "source", "rule")


def _evidence(sel: pd.DataFrame) -> str:
    """The flagged results of a rule in a sentence: how many, and the largest with its interval and q-value."""
    top = sel.reindex(sel["estimate"].abs().sort_values(ascending=False).index).iloc[0]
    q = top.get("q_value", float("nan"))
    q_text = "" if pd.isna(q) else f", q = {q:.2g}" if q >= 1e-4 else ", q < 0.0001"
    return (f"{len(sel)} flagged result(s); largest: "
            f"{top['measure']} = {top['estimate']:.3f} [{top['ci_low']:.3f}, {top['ci_high']:.3f}]{q_text}"
            + (f" for {top['judge']}" if pd.notna(top["judge"]) else "")
            + (f", {top['criterion']}" if pd.notna(top["criterion"]) else "")
            + (f" ('{top['category']}')" if pd.notna(top.get("category")) else "")
            # A one-sided test can be significant while the two-sided 95% interval still reaches 0:
            # say so, rather than let the interval seem to contradict the flag.
            + ("; its two-sided 95% interval reaches 0, and the flag rests on the one-sided test in the "
               "harmful direction" if top["ci_low"] <= 0 <= top["ci_high"] else ""))


def recommendations(records: pd.DataFrame) -> pd.DataFrame:
    """Mitigations for the flagged findings in ``records``, one row per rule that applies.

    Parameters
    ----------
    records
        Tidy bias records as returned by evalcore's bias functions.

    Returns
    -------
    pandas.DataFrame
        Columns ``finding, recommendation, judges, criteria, groups, evidence, source, rule``;
        ``judges`` lists each judge with its number of flagged results, most first. Empty when
        nothing is flagged.
    """
    if records.empty or "flagged" not in records.columns:
        return pd.DataFrame(columns=list(COLUMNS))
    # Findings are about judges; rows describing the humans are the reference.
    flagged = records[records["flagged"].fillna(False).astype(bool) & records["judge"].notna()]
    base = set(RESULT_COLUMNS)
    group_cols = [c for c in records.columns if c not in base and c != "category"]  # a category is no group
    rows = []
    for rule in RULES:
        sel = flagged[(flagged["section"] == rule.section)
                      & flagged["measure"].astype(str).str.startswith(rule.measures)]
        if rule.direction == "positive":
            sel = sel[sel["estimate"] > 0]
        elif rule.direction == "negative":
            sel = sel[sel["estimate"] < 0]
        if sel.empty:
            continue
        per_judge = sel["judge"].astype(str).value_counts()
        judges = [f"{j} ({n})" for j, n in sorted(per_judge.items(), key=lambda kv: (-kv[1], kv[0]))]
        criteria = sorted({str(c) for c in sel["criterion"].dropna()})
        groups = sorted({" / ".join(str(r[c]) for c in group_cols) for _, r in sel.iterrows()} - {""})
        evidence = _evidence(sel)
        rows.append({"finding": rule.finding, "recommendation": rule.action, "judges": ", ".join(judges),
                     "criteria": ", ".join(criteria), "groups": ", ".join(groups[:12]), "evidence": evidence,
                     "source": rule.source, "rule": rule.key})
    return pd.DataFrame(rows, columns=list(COLUMNS))
