"""The quality score discriminates the labelled set and follows the catalogue's blocking rules."""

from __future__ import annotations

import json
from pathlib import Path

from toolhost.domains.quality.scoring import BrandSignals, PostInput, QualityResult, score_post

DATA = Path(__file__).parents[2] / "data" / "quality" / "labelled_posts.jsonl"


def _auc(scores: list[float], labels: list[int]) -> float:
    positives = [s for s, label in zip(scores, labels, strict=True) if label]
    negatives = [s for s, label in zip(scores, labels, strict=True) if not label]
    return sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives) / (
        len(positives) * len(negatives)
    )


def test_the_score_separates_publishable_from_unpublishable_posts() -> None:
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    assert len(rows) >= 40
    results = [
        score_post(PostInput(caption=row["caption"], platforms=(row["platform"],), title=row.get("title")))
        for row in rows
    ]
    labels = [row["label"] for row in rows]
    assert _auc([float(result.total) for result in results], labels) >= 0.85
    accuracy = sum(int(result.passed) == label for result, label in zip(results, labels, strict=True)) / len(rows)
    assert accuracy >= 0.85


def test_a_blocked_term_blocks_whatever_the_total() -> None:
    post = PostInput(
        caption="Why do remote teams lose focus time? Our guide shows the fix, step by step. "
        "Read it and tell us what you would add in the comments. #RemoteWork #Focus #Teams",
        platforms=("linkedin",),
    )
    clean = score_post(post)
    blocked = score_post(post, brand=BrandSignals(banned_terms=("guide",)))
    assert clean.passed
    assert not blocked.passed
    assert 'Contains blocked term: "guide"' in blocked.blockers


def test_an_over_limit_tweet_fails_platform_fit_with_a_blocker() -> None:
    result = score_post(PostInput(caption="word " * 80, platforms=("twitter",)))
    fit = next(item for item in result.categories if item["name"] == "Platform Fit")
    assert fit["score"] == 0
    assert "over the Twitter limit" in fit["detail"]
    assert "Platform Fit below threshold (0/5)" in result.blockers


def test_a_plan_post_without_media_for_instagram_is_flagged() -> None:
    caption = (
        "Three checks before a new cream touches sensitive skin. Save this for your next shop. "
        "#skincare #sensitiveskin #fragrancefree #routine #tips"
    )
    with_media = score_post(
        PostInput(caption=caption, platforms=("instagram",), plan_post=True, media_url="https://example.com/a.png")
    )
    without = score_post(PostInput(caption=caption, platforms=("instagram",), plan_post=True))

    def fit(result: QualityResult) -> int:
        score: int = next(item["score"] for item in result.categories if item["name"] == "Platform Fit")
        return score

    assert fit(without) < 3 <= fit(with_media)


def test_the_score_is_deterministic() -> None:
    post = PostInput(
        caption="Stop writing 'quick question' in Slack. Reply with your pet peeve.", platforms=("threads",)
    )
    assert score_post(post) == score_post(post)
