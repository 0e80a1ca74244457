"""Tests of evalcore.data.presets against the real published files and small hand-made ones.

The real-data tests read ../shared/datasets (unmodified files of LLMBar, PandaLM and HANNA)
and reproduce the authors' own figures: LLMBar's statistics.json, PandaLM's human-majority
counts and judge accuracies, HANNA's aggregate columns and its near-zero Fleiss' kappa.
"""

from __future__ import annotations

import inspect
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore import columns
from evalcore.data import ingest, io
from evalcore.data.presets import PRESETS, detect_preset, read_preset
from evalcore.data.presets.common import Preset, PresetResult
from evalcore.data.validation import validate
from evalcore.errors import DataError
from tests.helpers import DATASETS, SMALL

CROWDKIT_SMALL = SMALL / "crowdkit_small.csv"
BAYESCAL_SMALL = SMALL / "bayescal_small.csv"


def _dataset(name: str) -> Path:
    if not DATASETS.is_dir():
        pytest.skip("../shared/datasets not found: real-data preset tests need it")
    path = DATASETS / name
    assert path.exists(), f"{path} is missing although ../shared/datasets exists"
    return path


def _check_canonical(result: PresetResult) -> None:
    frame = result.frame
    assert result.table in columns.TABLES
    for c in columns.required_columns(result.table):
        assert c in frame.columns, c
    names = columns.column_names(result.table)
    canonical = [c for c in frame.columns if c in names]
    assert list(frame.columns[: len(canonical)]) == canonical, "canonical columns come first"
    assert canonical == [c for c in names if c in canonical], "in their documented order"
    assert set(frame["rater_kind"]) <= set(columns.RATER_KINDS)
    assert frame["item_id"].map(type).eq(str).all()
    assert frame["rater"].map(type).eq(str).all()
    if result.table == columns.COMPARISONS:
        invalid = frame["invalid"] if "invalid" in frame.columns else pd.Series(False, index=frame.index)
        assert set(frame.loc[~invalid, "winner"]) <= set(columns.WINNERS)
        assert frame.loc[invalid, "winner"].isna().all()  # an unparsed output has no winner
        for c in ("swapped", "invalid"):
            if c in frame.columns:
                assert frame[c].dtype == bool
    assert isinstance(result.notes, tuple) and all(isinstance(n, str) for n in result.notes)
    assert isinstance(result.source, str) and result.source


# --------------------------------------------------------------------------------------
# Registry and dispatch
# --------------------------------------------------------------------------------------


def test_registry_lists_the_five_presets_with_keyword_only_options():
    assert set(PRESETS) == {"llmbar", "pandalm", "hanna", "crowdkit", "bayescal"}
    tables = {n: p.table for n, p in PRESETS.items()}
    assert tables == {"llmbar": "comparisons", "pandalm": "comparisons", "hanna": "ratings",
                      "crowdkit": "ratings", "bayescal": "comparisons"}
    for name, preset in PRESETS.items():
        assert isinstance(preset, Preset) and preset.name == name
        assert preset.title and preset.description and preset.accepts
        assert preset.read.__doc__ and "Parameters" in preset.read.__doc__
        params = list(inspect.signature(preset.read).parameters.values())
        assert params[0].name == "paths"
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[1:])
    assert PRESETS["llmbar"].options == ("rater", "subset")
    assert PRESETS["crowdkit"].options == ("judges", "criterion")


def test_module_does_not_import_streamlit_or_eval():
    source = Path(inspect.getfile(PRESETS["llmbar"].read)).read_text()
    assert "import streamlit" not in source
    assert not re.search(r"(?<![\w.])eval\(", source)


def test_unknown_preset_and_option_are_data_errors():
    with pytest.raises(DataError, match="no preset called 'nope'.*Fix: choose one of llmbar"):
        read_preset("nope", [CROWDKIT_SMALL])
    with pytest.raises(DataError, match="no option colour.*judges, criterion"):
        read_preset("crowdkit", [CROWDKIT_SMALL], colour="red")


def test_missing_path_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="not found") as e:
        read_preset("crowdkit", [tmp_path / "absent.csv"])
    assert "absent.csv" in str(e.value)


# --------------------------------------------------------------------------------------
# llmbar
# --------------------------------------------------------------------------------------

_FRACTION = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*=")


def _fraction(text: str) -> tuple[int, int]:
    m = _FRACTION.match(text)
    assert m, text
    return int(m.group(1)), int(m.group(2))


def _llmbar_stats(frame: pd.DataFrame, subset: str, rater: str) -> dict[str, tuple[int, int]]:
    """The four counts of LLMBar's statistics.json, computed from the canonical table."""
    part = frame[frame["subset"] == subset] if "subset" in frame.columns else frame
    gold = part[part["rater"] == "gold"].set_index("item_id")["winner"]
    j = part[part["rater"] == rater]
    v0 = j[~j["swapped"]].set_index("item_id")["winner"].reindex(gold.index)
    v1 = j[j["swapped"]].set_index("item_id")["winner"].reindex(gold.index)
    n = len(gold)
    return {
        "correct_False": (int((v0 == gold).sum()), n),
        "correct_True": (int((v1 == gold).sum()), n),
        "correct_both": (int(((v0 == gold) & (v1 == gold)).sum()), n),
        "equal": (int((v0 == v1).sum()), n),
    }


@pytest.fixture(scope="module")
def llmbar_all():
    return read_preset("llmbar", [_dataset("llmbar")])


def test_llmbar_folder_reproduces_every_statistics_json(llmbar_all):
    root = _dataset("llmbar")
    result_files = sorted(root.rglob("result.json"))
    assert len(result_files) == 20
    _check_canonical(llmbar_all)
    frame = llmbar_all.frame
    checked = 0
    for f in result_files:
        rel = f.relative_to(root).parts  # <subset...>/evaluators/<judge>/<strategy>/result.json
        i = rel.index("evaluators")
        subset, rater = "/".join(rel[:i]), f"{rel[i + 1]}/{rel[i + 2]}"
        published = json.loads((f.parent / "statistics.json").read_text())
        expected = {k: _fraction(published[k]) for k in ("correct_False", "correct_True", "correct_both", "equal")}
        assert _llmbar_stats(frame, subset, rater) == expected, f
        # the same file read on its own gives the same table for that judge
        alone = read_preset("llmbar", [f]).frame
        assert _llmbar_stats(alone, subset, rater) == expected, f
        checked += 1
    assert checked == 20


def test_llmbar_folder_counts_and_gold_not_duplicated(llmbar_all):
    frame = llmbar_all.frame
    gold = frame[frame["rater"] == "gold"]
    assert gold["item_id"].is_unique
    assert gold.groupby("subset").size().to_dict() == {
        "Natural": 100, "Adversarial/Neighbor": 134, "Adversarial/GPTInst": 92,
        "Adversarial/GPTOut": 47, "Adversarial/Manual": 46,
    }
    assert len(gold) == 419 and (gold["rater_kind"] == "human").all() and not gold["swapped"].any()
    judges = frame[frame["rater_kind"] == "judge"]
    assert sorted(judges["rater"].unique()) == ["ChatGPT/Rating_NoRules", "ChatGPT/Vanilla_NoRules",
                                                "GPT-4/Rating_NoRules", "GPT-4/Vanilla_NoRules"]
    assert len(judges) == 4 * 2 * 419
    natural = judges[judges["subset"] == "Natural"]
    assert natural.groupby(["rater", "swapped"]).size().eq(100).all()
    assert "Natural/0" in set(frame["item_id"]) and "Adversarial/GPTInst/91" in set(frame["item_id"])
    assert "system_a" not in frame.columns and "system_b" not in frame.columns
    # Natural/0: label 1 in the source file
    first = json.loads((_dataset("llmbar") / "Natural" / "dataset.json").read_text())[0]
    assert gold.set_index("item_id").loc["Natural/0", "winner"] == ("a" if first["label"] == 1 else "b")


def test_llmbar_rating_scores_on_the_unswapped_row_only(llmbar_all):
    frame = llmbar_all.frame
    rating = frame[frame["rater"].str.endswith("Rating_NoRules")]
    vanilla = frame[frame["rater"].str.endswith("Vanilla_NoRules")]
    assert rating.loc[rating["swapped"], ["score_a", "score_b"]].isna().all().all()
    assert vanilla[["score_a", "score_b"]].isna().all().all()
    unswapped = rating[~rating["swapped"]]
    assert len(unswapped) == 2 * 419
    # 2 of the 1,676 scores are ['', 'content management policy'] (GPT-4 on GPTInst and Neighbor)
    n_nan = int(unswapped[["score_a", "score_b"]].isna().sum().sum())
    assert n_nan == 2
    assert any("2 unparseable pointwise scores of GPT-4/Rating_NoRules" in n for n in llmbar_all.notes)
    values = unswapped[["score_a", "score_b"]].stack().dropna()
    assert len(values) == 2 * 2 * 419 - 2
    assert values.between(0, 10).all() and (values == 10).sum() == 1
    # Natural/0 for GPT-4 Rating: score_1 ['7', 'stop'], score_2 ['1', 'stop'] in the source
    src = json.loads((_dataset("llmbar") / "Natural/evaluators/GPT-4/Rating_NoRules/result.json").read_text())
    row = unswapped[(unswapped["item_id"] == "Natural/0") & (unswapped["rater"] == "GPT-4/Rating_NoRules")].iloc[0]
    assert (row["score_a"], row["score_b"]) == (float(src[0]["results"][-1]["score_1"][0]),
                                                float(src[0]["results"][-1]["score_2"][0]))


def test_llmbar_flat_file_without_folder_structure(tmp_path):
    src = _dataset("llmbar") / "Natural" / "evaluators" / "GPT-4" / "Vanilla_NoRules" / "result.json"
    flat = tmp_path / "result.json"
    shutil.copy(src, flat)
    plain = read_preset("llmbar", [flat])
    _check_canonical(plain)
    # never the generic "judge": the strategy its content shows, and the file it came from
    assert set(plain.frame["rater"]) == {"gold", "Vanilla judge (result.json)"}
    assert "subset" not in plain.frame.columns
    assert plain.frame["item_id"].nunique() == 100 and "0" in set(plain.frame["item_id"])
    assert set(read_preset("llmbar", [flat], rater="GPT-4").frame["rater"]) == {"gold", "GPT-4/Vanilla"}
    rating = tmp_path / "GPT-4 rating.json"
    shutil.copy(src.parent.parent / "Rating_NoRules" / "result.json", rating)
    assert set(read_preset("llmbar", [rating]).frame["rater"]) == {"gold", "GPT-4 rating"}
    named = read_preset("llmbar", [flat], rater="GPT-4/Vanilla_NoRules", subset="Natural")
    assert set(named.frame["item_id"]) == {f"Natural/{i}" for i in range(100)}
    assert _llmbar_stats(named.frame, "Natural", "GPT-4/Vanilla_NoRules") == {
        "correct_False": (92, 100), "correct_True": (95, 100), "correct_both": (92, 100), "equal": (97, 100)}


def test_llmbar_unparseable_winner_is_kept_as_invalid_with_a_note(tmp_path):
    src = _dataset("llmbar") / "Natural" / "evaluators" / "ChatGPT" / "Vanilla_NoRules" / "result.json"
    data = json.loads(src.read_text())
    data[0]["results"][-1]["swap = True"]["winner"] = "I cannot decide"
    data[1]["results"][-1]["swap = False"]["winner"] = None
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data))
    result = read_preset("llmbar", [path], rater="ChatGPT/Vanilla_NoRules")
    judge = result.frame[result.frame["rater"] == "ChatGPT/Vanilla_NoRules"]
    assert len(judge) == 200 and int(judge["invalid"].sum()) == 2
    bad = judge[judge["invalid"]]
    assert bad["winner"].isna().all() and list(zip(bad["item_id"], bad["swapped"])) == [("0", True), ("1", False)]
    assert judge.loc[~judge["invalid"], "winner"].notna().all()
    assert any("2 unparseable verdicts of ChatGPT/Vanilla_NoRules (neither '1' nor '2') were kept as rows marked "
               "invalid" in n for n in result.notes)
    checked = validate(result.frame, table="comparisons", file="result.json").frame
    assert checked["invalid"].dtype == bool and int(checked["invalid"].sum()) == 2


def test_llmbar_errors_name_the_file(tmp_path):
    dataset_json = _dataset("llmbar") / "Natural" / "dataset.json"
    renamed = tmp_path / "natural.json"
    shutil.copy(dataset_json, renamed)
    with pytest.raises(DataError, match="no 'results'") as e:
        read_preset("llmbar", [renamed])
    assert "natural.json" in str(e.value) and "Fix:" in str(e.value)

    broken = tmp_path / "result.json"
    broken.write_text('[{"label": 1, "results": [')
    with pytest.raises(DataError, match="not valid JSON") as e:
        read_preset("llmbar", [broken])
    assert "result.json" in str(e.value)

    broken.write_text('{"label": 1}')
    with pytest.raises(DataError, match="not an LLMBar result file"):
        read_preset("llmbar", [broken])

    with pytest.raises(DataError, match="no LLMBar result.json"):
        read_preset("llmbar", [SMALL])
    with pytest.raises(DataError, match="not a JSON file"):
        read_preset("llmbar", [CROWDKIT_SMALL])

    # two files that would both be 'judge' on no subset
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    src = _dataset("llmbar") / "Natural" / "evaluators" / "GPT-4" / "Vanilla_NoRules" / "result.json"
    shutil.copy(src, a / "result.json")
    shutil.copy(src, b / "result.json")
    with pytest.raises(DataError, match=r"holds the verdicts of judge 'Vanilla judge \(result.json\)'"):
        read_preset("llmbar", [a / "result.json", b / "result.json"])


# --------------------------------------------------------------------------------------
# pandalm
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pandalm_all():
    return read_preset("pandalm", [_dataset("pandalm")])


def _majority(labels: list[str]) -> str | None:
    winner, count = Counter(labels).most_common(1)[0]
    return winner if count * 2 > len(labels) else None


def test_pandalm_items_pairs_and_human_majority(pandalm_all):
    _check_canonical(pandalm_all)
    frame = pandalm_all.frame
    raw = json.loads((_dataset("pandalm") / "testset-v1.json").read_text())
    assert frame["item_id"].nunique() == len(raw) == 999
    pairs = frame.drop_duplicates("item_id").groupby(["system_a", "system_b"]).size()
    expected = Counter(tuple(x["cmp_key"].split("_")) for x in raw)
    assert len(pairs) == 10 and pairs.to_dict() == dict(expected)
    assert pairs[("bloom-7b", "llama-7b")] == 111 and pairs[("bloom-7b", "opt-7b")] == 89
    assert frame.drop_duplicates("item_id")["task"].nunique() == 50
    humans = frame[frame["rater_kind"] == "human"]
    assert sorted(humans["rater"].unique()) == ["annotator1", "annotator2", "annotator3"]
    assert len(humans) == 3 * 999
    majority = humans.groupby("item_id")["winner"].agg(lambda s: _majority(list(s)))
    # "majority" = a label given by at least 2 of the 3 annotators; all 999 items have one
    # (879 unanimous, 120 split 2-1, none split three ways)
    assert majority.notna().all()
    agree = humans.groupby("item_id")["winner"].nunique().value_counts().to_dict()
    assert agree == {1: 879, 2: 120}
    assert majority.value_counts().to_dict() == {"tie": 105, "a": 422, "b": 472}
    assert not frame["swapped"].any()


def test_pandalm_judge_accuracy_against_human_majority(pandalm_all):
    frame = pandalm_all.frame
    humans = frame[frame["rater_kind"] == "human"]
    majority = humans.groupby("item_id")["winner"].agg(lambda s: _majority(list(s)))
    judges = frame[frame["rater_kind"] == "judge"]
    assert sorted(judges["rater"].unique()) == ["gpt-3.5-turbo", "pandalm-7b"]
    acc = {}
    for rater, part in judges.groupby("rater"):
        verdict = part.set_index("item_id")["winner"].reindex(majority.index)
        acc[rater] = int((verdict == majority).sum())  # missing (unparseable) counts as wrong
    assert acc == {"gpt-3.5-turbo": 697, "pandalm-7b": 667}
    assert acc["gpt-3.5-turbo"] / 999 == pytest.approx(0.6977, abs=5e-5)  # published: about 70%
    assert acc["pandalm-7b"] / 999 == pytest.approx(0.6677, abs=5e-5)  # published: about 67%
    assert (judges["rater"] == "gpt-3.5-turbo").sum() == 999  # the 25 unparseable outputs are kept, marked invalid
    assert (judges["rater"] == "pandalm-7b").sum() == 999
    gpt = judges[judges["rater"] == "gpt-3.5-turbo"]
    assert gpt["winner"].value_counts().to_dict() == {"b": 476, "a": 460, "tie": 38}
    assert int(gpt["invalid"].sum()) == 25 and gpt.loc[gpt["invalid"], "winner"].isna().all()
    assert not frame.loc[frame["rater"] != "gpt-3.5-turbo", "invalid"].any()
    assert any("25 unparseable verdicts of gpt-3.5-turbo were kept as rows marked invalid" in n
               for n in pandalm_all.notes)


def test_pandalm_accepts_files_flat_and_testset_alone(tmp_path, pandalm_all):
    root = _dataset("pandalm")
    names = ["testset-v1.json", "gpt-3.5-turbo-testset-v1.json", "pandalm-7b-testset-v1.json"]
    for n in names:
        shutil.copy(root / n, tmp_path / n)
    files = read_preset("pandalm", [tmp_path / n for n in names])
    pd.testing.assert_frame_equal(files.frame, pandalm_all.frame)
    alone = read_preset("pandalm", [root / "testset-v1.json"])
    assert set(alone.frame["rater_kind"]) == {"human"} and len(alone.frame) == 2997
    assert any("only the human labels" in n for n in alone.notes)


def test_pandalm_errors(tmp_path):
    root = _dataset("pandalm")
    with pytest.raises(DataError, match="no PandaLM testset-v1.json") as e:
        read_preset("pandalm", [root / "gpt-3.5-turbo-testset-v1.json"])
    assert "Fix:" in str(e.value)
    with pytest.raises(DataError, match="not a PandaLM test-set or judge file"):
        read_preset("pandalm", [_dataset("llmbar") / "Natural" / "dataset.json"])
    data = json.loads((root / "testset-v1.json").read_text())[:5]
    data[2]["cmp_key"] = "bloom-7b-llama-7b"
    bad = tmp_path / "testset-v1.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(DataError, match="idx=2 has cmp_key"):
        read_preset("pandalm", [bad])
    data[2]["cmp_key"] = "bloom-7b_llama-7b"
    data[3]["annotator2"] = "7"
    bad.write_text(json.dumps(data))
    with pytest.raises(DataError, match="annotator2='7'") as e:
        read_preset("pandalm", [bad])
    assert "testset-v1.json" in str(e.value)


# --------------------------------------------------------------------------------------
# hanna
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hanna_all():
    return read_preset("hanna", [_dataset("hanna") / "hanna_metric_scores_llm.csv"])


@pytest.mark.slow
def test_hanna_shape_raters_and_criteria(hanna_all):
    _check_canonical(hanna_all)
    frame = hanna_all.frame
    assert frame["item_id"].nunique() == 1056
    assert frame["system"].nunique() == 11 and "Human/95" in set(frame["item_id"])
    assert sorted(frame["criterion"].unique()) == sorted(
        ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"])
    humans = frame[frame["rater_kind"] == "human"]
    judges = frame[frame["rater_kind"] == "judge"]
    assert sorted(humans["rater"].unique()) == ["Human 1", "Human 2", "Human 3"]
    llms = {r.split("/")[0] for r in judges["rater"].unique()}
    assert llms == {"Beluga-13B", "OrcaPlatypus", "Mistral-7B", "Llama-13B", "ChatGPT"}
    assert judges["rater"].nunique() == 20 and "ChatGPT/prompt4" in set(judges["rater"])
    assert len(frame) == 1056 * 6 * (3 + 20)
    assert set(humans["score"].unique()) == {1.0, 2.0, 3.0, 4.0, 5.0}
    assert (judges["score"] % 1 != 0).any()  # averages of 3 samples
    assert any("averages of 3 samples" in n for n in hanna_all.notes)
    assert any("71 automatic metric columns" in n for n in hanna_all.notes)  # Text length is kept
    assert any("'Text length' as the column text_length" in n for n in hanna_all.notes)


def test_hanna_human_mean_equals_the_aggregate_columns(hanna_all):
    import ast

    raw = pd.read_csv(_dataset("hanna") / "hanna_metric_scores_llm.csv",
                      usecols=["Model", "Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"])
    humans = hanna_all.frame[hanna_all.frame["rater_kind"] == "human"]
    means = humans.groupby(["system", "criterion", "item_id"])["score"].mean()
    compared = 0
    for _, row in raw.iterrows():
        for crit in ("Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"):
            published = np.array(ast.literal_eval(row[crit]), dtype=float)
            ours = means.loc[(row["Model"], crit)]
            ours = ours.reindex([f"{row['Model']}/{i}" for i in range(len(published))]).to_numpy()
            np.testing.assert_allclose(ours, published, rtol=0, atol=1e-12)
            compared += len(published)
    assert compared == 1056 * 6


@pytest.mark.slow
def test_hanna_fleiss_kappa_relevance(hanna_all):
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    humans = hanna_all.frame[(hanna_all.frame["rater_kind"] == "human")
                             & (hanna_all.frame["criterion"] == "Relevance")]
    wide = humans.pivot(index="item_id", columns="rater", values="score")
    assert wide.shape == (1056, 3) and wide.notna().all().all()
    table, _ = aggregate_raters(wide.to_numpy().astype(int))
    kappa = fleiss_kappa(table, method="fleiss")
    assert kappa == pytest.approx(0.058713750778776184, abs=1e-12)  # HANNA humans agree poorly on Relevance (Fleiss kappa about 0.06)


def test_hanna_bad_cell_names_row_and_column(tmp_path):
    bad = tmp_path / "hanna.csv"
    pd.DataFrame({"Model": ["A", "B"], "Human 1 RE": ["[1, 2]", "[3, oops]"],
                  "Human 2 RE": ["[1, 2]", "[3, 4]"]}).to_csv(bad, index=False)
    with pytest.raises(DataError) as e:
        read_preset("hanna", [bad])
    msg = str(e.value)
    assert "hanna.csv" in msg and "row 3" in msg and "Human 1 RE" in msg and "Fix:" in msg
    with pytest.raises(DataError, match="not HANNA's score file"):
        read_preset("hanna", [CROWDKIT_SMALL])
    ok = tmp_path / "ok.csv"
    pd.DataFrame({"Model": ["A"], "Human 1 RE": ["[1, 2]"], "X CH 2": ["[1.5, 2.5]"]}).to_csv(ok, index=False)
    r = read_preset("hanna", [ok])
    assert len(r.frame) == 4 and set(r.frame["rater"]) == {"Human 1", "X/prompt2"}
    assert set(r.frame["criterion"]) == {"Relevance", "Coherence"}


# --------------------------------------------------------------------------------------
# crowdkit
# --------------------------------------------------------------------------------------


def test_crowdkit_small_file():
    result = read_preset("crowdkit", [CROWDKIT_SMALL])
    _check_canonical(result)
    frame = result.frame
    assert result.table == "ratings"
    assert len(frame) == 12  # 13 rows, one without a label
    assert any("1 row without a label was left out" in n for n in result.notes)
    assert frame["item_id"].nunique() == 3 and set(frame["criterion"]) == {"overall"}
    kinds = frame.drop_duplicates("rater").set_index("rater")["rater_kind"].to_dict()
    assert kinds == {"alice": "human", "bob": "human", "carol": "human",
                     "gpt-4o": "judge", "llama-3-70b-judge": "judge"}
    assert (frame["rater_kind"] == "human").sum() == 6 and (frame["rater_kind"] == "judge").sum() == 6
    assert frame["score"].dtype == float and frame["score"].sum() == 36.0
    assert "language" in frame.columns and frame.groupby("language").size().to_dict() == {"de": 3, "en": 4, "fr": 5}
    assert any("gpt-4o, llama-3-70b-judge" in n and "alice, bob, carol" in n for n in result.notes)


def test_crowdkit_judges_option_and_other_formats(tmp_path):
    result = read_preset("crowdkit", [CROWDKIT_SMALL], judges=["carol"], criterion="helpfulness")
    kinds = result.frame.drop_duplicates("rater").set_index("rater")["rater_kind"].to_dict()
    assert kinds["carol"] == "judge" and kinds["gpt-4o"] == "human"
    assert set(result.frame["criterion"]) == {"helpfulness"}
    with pytest.raises(DataError, match="judges= names dave"):
        read_preset("crowdkit", [CROWDKIT_SMALL], judges=["dave"])

    raw = pd.read_csv(CROWDKIT_SMALL)
    raw.to_csv(tmp_path / "a.tsv", sep="\t", index=False)
    raw.to_json(tmp_path / "b.jsonl", orient="records", lines=True)
    raw.to_parquet(tmp_path / "c.parquet")
    for name in ("a.tsv", "b.jsonl", "c.parquet"):
        r = read_preset("crowdkit", [tmp_path / name])
        assert len(r.frame) == 12, name
        assert r.frame["score"].sum() == 36.0, name
        assert set(r.frame["item_id"]) == {"t1", "t2", "t3"}, name
    folder = read_preset("crowdkit", [tmp_path])
    assert len(folder.frame) == 36

    cats = tmp_path / "cats.csv"
    cats.write_text("task,worker,label\n1,w1,cat\n1,gpt-4,dog\n2,w1,dog\n")
    r = read_preset("crowdkit", [cats])
    assert list(r.frame["score"]) == ["cat", "dog", "dog"] and list(r.frame["item_id"]) == ["1", "1", "2"]
    assert any("text categories" in n for n in r.notes)
    ing = ingest.load([cats], preset="crowdkit")  # validated: nominal categories, as written
    assert ing.frame["category"].tolist() == ["cat", "dog", "dog"] and set(ing.frame["scale"]) == {"nominal"}


def test_crowdkit_missing_column_is_a_data_error(tmp_path):
    bad = tmp_path / "no_label.csv"
    bad.write_text("task,worker,score\nt1,alice,3\n")
    with pytest.raises(DataError) as e:
        read_preset("crowdkit", [bad])
    msg = str(e.value)
    assert "no_label.csv" in msg and "column 'label'" in msg and "missing" in msg and "Fix:" in msg
    empty_worker = tmp_path / "empty_worker.csv"
    empty_worker.write_text("task,worker,label\nt1,alice,3\nt2,,4\n")
    with pytest.raises(DataError, match="row 3, column 'worker'"):
        read_preset("crowdkit", [empty_worker])
    with pytest.raises(DataError, match="unsupported extension"):
        read_preset("crowdkit", [Path(__file__)])


def test_model_name_heuristic_is_the_one_rule_of_raters():
    from evalcore.data.raters import looks_like_judge

    for name in ("gpt-4o", "Claude-3-opus", "gemini-1.5", "Llama-3-70B", "mistral-large", "judge_7",
                 "reward-model", "chatbot", "qwen2-72b", "o1-mini", "my_bot", "prometheus-7b"):
        assert looks_like_judge(name), name
    for name in ("alice", "worker_17", "A3KX9PQ2", "Abbott", "Palmer", "annotator1", "Gemma"):
        assert not looks_like_judge(name), name


def test_crowdkit_classifies_open_judges_by_name_and_reads_decimal_commas(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text('task;worker;label\nt1;alice;"4,0"\nt1;selene;"3,5"\nt1;Phil;"4,0"\nt2;alice;"2,0"\n'
                    't2;qwen2.5-72b;"2,5"\nt2;Phil;"1,0"\n')
    result = read_preset("crowdkit", [path])
    kinds = dict(zip(result.frame["rater"], result.frame["rater_kind"]))
    assert kinds == {"alice": "human", "selene": "judge", "Phil": "human", "qwen2.5-72b": "judge"}
    assert list(result.frame["score"]) == [4.0, 3.5, 4.0, 2.0, 2.5, 1.0]
    assert not any("text categories" in n for n in result.notes)



_NA_TABLE = pd.DataFrame({"task": ["t1", "t1", "null", "null", "t3", "t3"],
                          "worker": ["NA", "gpt-4o", "NA", "gpt-4o", "NA", "gpt-4o"],
                          "label": ["4", "5", "3", "NA", "2", "n/a"]})


@pytest.mark.parametrize("suffix", ["csv", "tsv", "jsonl", "xlsx"])
def test_crowdkit_worker_named_na_stays_a_worker(tmp_path, suffix):
    """Presets read files as evalcore.data.io does: names stay as written (a worker called NA, a task called
    null); a word such as NA is a missing value only outside the name columns (here, two missing labels)."""
    path = tmp_path / f"na.{suffix}"
    if suffix == "jsonl":
        _NA_TABLE.to_json(path, orient="records", lines=True)
    elif suffix == "xlsx":
        _NA_TABLE.to_excel(path, index=False)
    else:
        _NA_TABLE.to_csv(path, sep="\t" if suffix == "tsv" else ",", index=False)
    result = read_preset("crowdkit", [path])
    frame = result.frame
    assert dict(zip(frame["rater"], frame["rater_kind"])) == {"NA": "human", "gpt-4o": "judge"}
    assert list(zip(frame["item_id"], frame["rater"], frame["score"])) == [
        ("t1", "NA", 4.0), ("t1", "gpt-4o", 5.0), ("null", "NA", 3.0), ("t3", "NA", 2.0)]
    assert any("2 rows without a label were left out" in n for n in result.notes)
    # Through the whole import, as the CLI and the app run it: the worker NA is still a rater.
    ing = ingest.load(path, preset="crowdkit")
    assert sorted(set(ing.frame["rater"])) == ["NA", "gpt-4o"] and len(ing.frame) == 4


@pytest.mark.parametrize("preset,name", [("llmbar", "result.json"), ("pandalm", "testset-v1.json"),
                                         ("crowdkit", "deep.json"), ("crowdkit", "deep.jsonl"),
                                         ("bayescal", "deep.json")])
def test_deeply_nested_json_gets_the_readers_message(tmp_path, preset, name):
    """JSON nested deeper than Python's parser goes: the message evalcore.data.io gives, not a RecursionError."""
    nested = "[" * 100_000 + "]" * 100_000
    path = tmp_path / name
    path.write_text('{"task": "t1", "worker": "w", "label": %s}\n' % nested if name.endswith(".jsonl") else nested)
    with pytest.raises(DataError) as plain:
        io.read_table(path)
    with pytest.raises(DataError) as got:
        read_preset(preset, [path])
    assert (got.value.problem, got.value.fix) == (plain.value.problem, plain.value.fix)
    assert got.value.file == str(path)
    assert "recursion" not in str(got.value).lower()


# --------------------------------------------------------------------------------------
# bayescal
# --------------------------------------------------------------------------------------


def test_bayescal_small_file():
    result = read_preset("bayescal", [BAYESCAL_SMALL])
    _check_canonical(result)
    frame = result.frame
    humans = frame[frame["rater_kind"] == "human"]
    judges = frame[frame["rater_kind"] == "judge"]
    # 4 tasks; task 3 has no human label; one llm_label is missing
    assert humans.set_index("item_id")["winner"].to_dict() == {"0": "a", "1": "b", "2": "tie"}
    assert set(humans["rater"]) == {"human"}
    assert len(judges) == 11 and judges["rater"].nunique() == 3
    assert judges.groupby("winner").size().to_dict() == {"a": 5, "b": 5, "tie": 1}
    pairs = frame.drop_duplicates("item_id").set_index("item_id")[["system_a", "system_b"]]
    assert pairs.loc["0"].tolist() == ["gpt2", "pegasus"] and pairs.loc["3"].tolist() == ["pegasus", "gpt2"]
    assert "premise" not in frame.columns
    assert not frame["swapped"].any()
    assert any("1 task without a human_label has no human row" in n for n in result.notes)
    assert any("1 row without an llm_label was left out" in n for n in result.notes)
    # empirical win rate of generator_1 by the humans: p = P(human_label == 0)
    assert (humans["winner"] == "a").mean() == pytest.approx(1 / 3)


def test_bayescal_aliases_and_errors(tmp_path):
    raw = pd.read_csv(BAYESCAL_SMALL)
    alias = tmp_path / "hub.parquet"
    raw.rename(columns={"task": "task_id", "worker": "worker_id"}).assign(__index_level_0__=range(len(raw))).to_parquet(alias)
    r = read_preset("bayescal", [alias])
    assert len(r.frame) == 14 and "__index_level_0__" not in r.frame.columns

    conflict = raw.copy()
    conflict.loc[4, "human_label"] = 0  # task 1: 1, 0, 1
    path = tmp_path / "conflict.csv"
    conflict.to_csv(path, index=False)
    with pytest.raises(DataError) as e:
        read_preset("bayescal", [path])
    msg = str(e.value)
    assert "conflict.csv" in msg and "row 6" in msg and "task 1" in msg and "human_label" in msg and "row 5" in msg

    bad_label = raw.copy()
    bad_label["llm_label"] = bad_label["llm_label"].astype(object)
    bad_label.loc[2, "llm_label"] = "A"
    path = tmp_path / "bad_label.csv"
    bad_label.to_csv(path, index=False)
    with pytest.raises(DataError, match="row 4, column 'llm_label'.*label 'A'"):
        read_preset("bayescal", [path])

    missing = tmp_path / "missing.csv"
    raw.drop(columns=["generator_2"]).to_csv(missing, index=False)
    with pytest.raises(DataError, match="column 'generator_2'.*missing"):
        read_preset("bayescal", [missing])


# --------------------------------------------------------------------------------------
# detect_preset
# --------------------------------------------------------------------------------------


def test_detect_preset_small_files(tmp_path):
    assert detect_preset([CROWDKIT_SMALL]) == "crowdkit"
    assert detect_preset([BAYESCAL_SMALL]) == "bayescal"
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    assert detect_preset([other]) is None
    assert detect_preset([tmp_path / "absent"]) is None
    pd.read_csv(CROWDKIT_SMALL).to_json(tmp_path / "k.jsonl", orient="records", lines=True)
    assert detect_preset([tmp_path / "k.jsonl"]) == "crowdkit"


def test_detect_preset_real_data():
    assert detect_preset([_dataset("llmbar")]) == "llmbar"
    assert detect_preset([_dataset("llmbar") / "Natural/evaluators/GPT-4/Rating_NoRules/result.json"]) == "llmbar"
    assert detect_preset([_dataset("llmbar") / "Natural/dataset.json"]) is None
    assert detect_preset([_dataset("pandalm")]) == "pandalm"
    assert detect_preset([_dataset("pandalm") / "testset-v1.json"]) == "pandalm"
    assert detect_preset([_dataset("hanna")]) == "hanna"


@pytest.fixture(scope="module")
def hanna_loaded():
    """The plain HANNA file through ``load`` (the same for every compression, read once)."""
    from evalcore.data.ingest import load

    return load(DATASETS / "hanna" / "hanna_metric_scores_llm.csv", preset="auto")


@pytest.mark.slow
@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the HANNA file is needed")
@pytest.mark.parametrize("kind", ["gz", "bz2"])
def test_a_compressed_preset_file_is_recognised_and_read_like_the_plain_one(tmp_path, kind, hanna_loaded):
    """Judgment logs arrive compressed: hanna_metric_scores_llm.csv.gz is HANNA, and reads to the same table."""
    import bz2
    import gzip

    from evalcore.data.ingest import load

    plain = DATASETS / "hanna" / "hanna_metric_scores_llm.csv"
    packed = tmp_path / f"{plain.name}.{kind}"
    # The fastest level: what is read back does not depend on it (gzip at 9 costs 20 times the CPU of 1).
    packed.write_bytes((gzip.compress if kind == "gz" else bz2.compress)(plain.read_bytes(), 1))
    assert detect_preset([packed]) == "hanna"
    a, b = hanna_loaded, load(packed, preset="auto")
    assert a.preset == b.preset == "hanna"
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert not list(tmp_path.glob("*.csv"))  # nothing decompressed is left beside the file
