"""The pure consistency scorer: it discriminates on the labelled set, matches inflections, is stable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolhost.domains.brand.claims import find_claims
from toolhost.domains.brand.consistency import score_consistency
from toolhost.domains.brand.text_analysis import find_term, term_pattern

DATA = Path(__file__).resolve().parents[2] / "data" / "brand_consistency"


def test_the_scorer_separates_on_brand_from_off_brand_copy_on_the_labelled_set() -> None:
    brands = json.loads((DATA / "brands.json").read_text())
    rows = [json.loads(line) for line in (DATA / "texts.jsonl").read_text().splitlines() if line.strip()]
    scored = [(score_consistency(brands[row["brand"]], row["text"]).overall, row["label"]) for row in rows]
    positives = [score for score, label in scored if label == 1]
    negatives = [score for score, label in scored if label == 0]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    assert len(rows) >= 60
    assert wins / (len(positives) * len(negatives)) >= 0.9


def test_terms_match_whole_words_with_inflections_only() -> None:
    pattern = term_pattern("guarantee")
    assert pattern is not None
    text = "We guaranteed it; guarantees apply. Guaranteeing nothing."
    assert [text[start:end] for start, end in find_term(pattern, text, "guarantee")] == [
        "guaranteed",
        "guarantees",
        "Guaranteeing",
    ]
    use = term_pattern("use")
    assert use is not None
    assert find_term(use, "users reuse it", "use") == []


def test_the_same_input_gives_the_same_output() -> None:
    runtime = json.loads((DATA / "brands.json").read_text())["sprout"]
    text = "Dinner in 20 minutes, with seasonal produce from our partner farms."
    assert score_consistency(runtime, text).as_payload() == score_consistency(runtime, text).as_payload()


def _labelled() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    brands = json.loads((DATA / "brands.json").read_text())
    rows = [json.loads(line) for line in (DATA / "texts.jsonl").read_text().splitlines() if line.strip()]
    return brands, rows


def test_clear_to_publish_agrees_with_the_labels_on_nine_texts_in_ten() -> None:
    brands, rows = _labelled()
    correct = sum(
        score_consistency(brands[row["brand"]], row["text"]).clear_to_publish == bool(row["label"]) for row in rows
    )
    assert correct / len(rows) >= 0.9


def test_an_invented_figure_fails_however_well_the_rest_reads() -> None:
    brands, _ = _labelled()
    text = (
        "Meals ready in 20 minutes, with seasonal produce from our 40 partner farms. "
        "Families who cook with us eat 73% more vegetables."
    )
    result = score_consistency(brands["sprout"], text)
    assert result.overall < 60, "a blocker caps overall under the pass mark"
    assert not result.passed
    assert not result.clear_to_publish
    assert result.blockers == ['Unsupported percentage claim: "Families who cook with us eat 73% more vegetables."']
    supported = score_consistency(brands["sprout"], text.split(" Families")[0])
    assert supported.passed and supported.clear_to_publish
    assert supported.blockers == []


def test_a_testimonial_superlative_is_not_a_ranking_and_learning_is_not_jargon() -> None:
    brands, _ = _labelled()
    text = "Dinner used to be a chore for Priya. Now, she says, it's the best part of her Tuesday."
    assert score_consistency(brands["sprout"], text).claims == []
    learning = score_consistency(brands["trailmix"], "Learning to read a trail map takes one afternoon.")
    assert not [issue for issue in learning.issues if issue.dimension == "avoidCompliance"]
    jargon = score_consistency(brands["trailmix"], "Our learnings from the trail, shared with you.")
    assert [issue.text for issue in jargon.issues if issue.dimension == "avoidCompliance"] == ["learnings"]


def test_a_readers_own_superlative_is_a_question_not_a_ranking_claim() -> None:
    assert find_claims("What is your biggest question about async updates?", []) == []
    [claim] = find_claims("The fastest payroll in Europe.", [])
    assert claim.kind == "ranking"
