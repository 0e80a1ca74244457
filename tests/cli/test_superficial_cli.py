"""``evalcore superficial`` end to end on LLMBar's Rating_NoRules files."""

from __future__ import annotations

import json

from evalcore.cli import main
from tests.helpers import LLMBAR, needs_datasets


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
