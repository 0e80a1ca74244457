"""``evalcore superficial`` end to end on LLMBar's Rating_NoRules files."""

from __future__ import annotations

import json

import pytest

from evalcore.cli import main
from tests.helpers import HANNA, LLMBAR, PANDALM, needs_datasets


@needs_datasets
def test_superficial_json_records(capsys):
    files = [str(LLMBAR / "Natural/evaluators/GPT-4/Rating_NoRules/result.json"),
             str(LLMBAR / "Adversarial/Neighbor/evaluators/GPT-4/Rating_NoRules/result.json")]
    code = main(["superficial", *files, "--preset", "llmbar", "--by", "subset", "--alphas", "0:1:0.25",
                 "--boot", "100", "--folds", "4", "--json"])
    assert code == 0
    recs = json.loads(capsys.readouterr().out)
    acc = [r for r in recs if r["measure"] == "accuracy"]
    assert len(acc) == 2 * 5
    assert {"judge", "subset", "alpha", "measure", "estimate", "ci_low", "ci_high", "n"} <= set(acc[0])
    for subset in ("Natural", "Adversarial/Neighbor"):
        mine = [r for r in recs if r["subset"] == subset]
        assert sum(r["measure"] == "alpha_cv" for r in mine) == 1
        assert sum(r["measure"] == "accuracy_cv" for r in mine) == 1
        assert [r["alpha"] for r in mine if r["measure"] == "accuracy"] == [0.0, 0.25, 0.5, 0.75, 1.0]


@needs_datasets
def test_superficial_needs_scores(capsys):
    path = str(LLMBAR / "Natural/evaluators/GPT-4/Vanilla_NoRules/result.json")
    assert main(["superficial", path, "--preset", "llmbar"]) != 0
    assert "score_a" in capsys.readouterr().err


@pytest.mark.slow
@needs_datasets
def test_superficial_pointwise_hanna(capsys):
    code = main(["superficial", str(HANNA), "--preset", "hanna", "--judge", "ChatGPT/prompt1", "--q", "text_length",
                 "--alphas", "0:1:0.5", "--boot", "50", "--json"])
    assert code == 0
    recs = json.loads(capsys.readouterr().out)
    taus = [r for r in recs if r["measure"] == "kendall_tau"]
    assert len(taus) == 6 * 3 and {r["criterion"] for r in taus} == {"Coherence", "Complexity", "Empathy",
                                                                     "Engagement", "Relevance", "Surprise"}
    coh0 = next(r for r in taus if r["criterion"] == "Coherence" and r["alpha"] == 0)
    assert round(coh0["estimate"], 3) == 0.376 and coh0["n"] == 1056
    assert sum(r["measure"] == "alpha_cv" for r in recs) == 6
    assert sum(r["measure"] == "kendall_tau_cv" for r in recs) == 6


@pytest.mark.slow
@needs_datasets
def test_superficial_length_controlled_pandalm(capsys):
    code = main(["superficial", str(PANDALM), "--preset", "pandalm", "--length-controlled", "--judge", "pandalm-7b",
                 "--boot", "50", "--json"])
    assert code == 0
    recs = json.loads(capsys.readouterr().out)
    assert {r["measure"] for r in recs} == {"win_rate", "lc_win_rate", "human_win_rate"}
    assert len(recs) == 3 * 10  # 5 systems: 10 pairs
    for r in recs:
        assert r["ci_low"] <= r["estimate"] <= r["ci_high"]
    lc = [r for r in recs if r["measure"] == "lc_win_rate"]
    assert all("AlpacaEval's minimal GLM (no instruction difficulty)" in r["note"] for r in lc)
    # one pair alone gives the same number: the pairs are fitted independently
    pair = next(r for r in lc if r["system_a"] == "llama-7b" and r["system_b"] == "opt-7b")
    from evalcore.data.ingest import load
    from evalcore.pairwise.superficial import length_controlled

    frame = load(PANDALM, preset="pandalm").frame
    alone = frame[frame.system_a.isin(["llama-7b", "opt-7b"]) & frame.system_b.isin(["llama-7b", "opt-7b"])]
    res = length_controlled(alone, judges="pandalm-7b", alpha=None, n_boot=50)
    assert res[res.measure == "lc_win_rate"][["estimate", "ci_low", "ci_high"]].iloc[0].tolist() == \
        [pair["estimate"], pair["ci_low"], pair["ci_high"]]


def test_length_controlled_help_says_what_is_left_out(capsys):
    import pytest

    with pytest.raises(SystemExit):
        main(["superficial", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "length_controlled_minimal" in out and "instruction-difficulty term" in out and "left out" in out


@needs_datasets
def test_length_controlled_needs_pairs(capsys):
    assert main(["superficial", str(HANNA), "--preset", "hanna", "--length-controlled"]) == 1
    assert "comparisons" in capsys.readouterr().err
