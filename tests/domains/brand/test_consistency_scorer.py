"""The pure consistency scorer: it discriminates on the labelled set, matches inflections, is stable."""

from __future__ import annotations

import json
from pathlib import Path

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
