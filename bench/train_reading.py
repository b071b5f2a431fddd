"""Trains the quality gate's reading model (src/toolhost/domains/quality/reading.json) and says how well it ranks.

Run: `PYTHONPATH=src .venv/bin/python bench/train_reading.py [--write]`. Trains on the tuning data only: the
posts of tests/data/gate_training/ (seven writers who never saw the gate, from the rubric), the team's sets in
tests/data/quality/ and the rubric set's odd ids. Never on the rubric set's even ids or tests/data/holdout/,
which bench/quality_scorer.py measures. Prints, for each of the seven writers' sets, the ROC AUC of a model
trained on everything but that set, and of the gate's total before and with the model; with --write it fits
on everything and writes the weights the gate loads.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any
from unittest.mock import patch

import numpy as np
from logistic import fit, predict
from quality_scorer import DATA, RUBRIC, TUNING_SETS, _load, auc, in_measuring_half

from toolhost.domains.quality import reading
from toolhost.domains.quality.reading import WEIGHTS_FILE, post_features
from toolhost.domains.quality.scoring import PostInput, QualityResult, read_findings, score_post
from toolhost.providers.text.linear import LinearModel

WRITTEN = DATA / "gate_training"
MIN_POSTS = 3  # a feature seen in fewer posts is noise
L2 = 3.0


def tuning_posts() -> list[tuple[str, dict[str, Any]]]:
    """(source, post) pairs: each writer's set is its own source, the team's and the rubric set's one each."""
    posts = [(path.stem, row) for path in sorted(WRITTEN.glob("*.jsonl")) for row in _load(path)]
    posts += [("team", row) for name in TUNING_SETS for row in _load(DATA / "quality" / name)]
    posts += [("rubric", row) for row in _load(RUBRIC) if not in_measuring_half(row)]
    return posts


def caption_of(row: dict[str, Any]) -> str:
    return str(row["caption"] if "caption" in row else row["text"])


def features(row: dict[str, Any]) -> dict[str, float]:
    caption = caption_of(row)
    return post_features(caption, read_findings(caption))[0]


def vocabulary(rows: list[dict[str, float]]) -> list[str]:
    counts = Counter(name for row in rows for name in row)
    return sorted(name for name, count in counts.items() if count >= MIN_POSTS)


def train(rows: list[dict[str, float]], labels: list[int]) -> tuple[float, dict[str, float]]:
    names = vocabulary(rows)
    bias, weights = fit(rows, np.array(labels, dtype=float), names, L2)
    return bias, dict(zip(names, weights.tolist(), strict=True))


def gate(row: dict[str, Any]) -> QualityResult:
    return score_post(PostInput(caption_of(row), (row["platform"],)))


def gate_with(model: LinearModel, rows: list[dict[str, Any]]) -> list[QualityResult]:
    """The gate's verdicts with the reading model it is handed instead of the shipped one."""
    with patch.object(reading, "load_model", lambda: model):
        return [gate(row) for row in rows]


def figures(results: list[QualityResult], labels: list[int]) -> str:
    """ROC AUC of the total, accuracy of `passed`, and the two ways it errs."""
    good = [result for result, label in zip(results, labels, strict=True) if label]
    bad = [result for result, label in zip(results, labels, strict=True) if not label]
    blocked = sum(not result.passed for result in good) / len(good)
    let_through = sum(result.passed for result in bad) / len(bad)
    accuracy = sum(result.passed == bool(label) for result, label in zip(results, labels, strict=True)) / len(labels)
    return (
        f"AUC {auc([float(result.total) for result in results], labels):.3f}, passed {accuracy:.3f} "
        f"(publishable blocked {blocked:.2f}, unpublishable passed {let_through:.2f})"
    )


def main() -> None:
    posts = tuning_posts()
    rows = [features(row) for _, row in posts]
    labels = [int(row["label"]) for _, row in posts]
    print(f"tuning posts: {len(posts)} ({sum(labels)} publishable)")
    for held in sorted(path.stem for path in WRITTEN.glob("*.jsonl")):
        train_part = [i for i, (source, _) in enumerate(posts) if source != held]
        test_part = [i for i, (source, _) in enumerate(posts) if source == held]
        bias, weights = train([rows[i] for i in train_part], [labels[i] for i in train_part])
        logits = predict([rows[i] for i in test_part], bias, weights)
        test_labels = [labels[i] for i in test_part]
        print(f"  writer {held} ({len(test_part)} posts), model trained without it: AUC {auc(logits, test_labels):.3f}")
        held_posts = [posts[i][1] for i in test_part]
        # none: a certainty that never lowers Message Clarity; then the model trained without this writer
        without = gate_with(LinearModel(30.0, {}), held_posts)
        trained = gate_with(LinearModel(bias, weights), held_posts)
        for name, results in (("the gate without a reading model", without), ("the gate with that model", trained)):
            print(f"    {name}: {figures(results, test_labels)}")
    if "--write" in sys.argv:
        bias, weights = train(rows, labels)
        kept = {name: round(weight, 4) for name, weight in weights.items() if abs(weight) >= 0.01}
        WEIGHTS_FILE.write_text(json.dumps({"bias": round(bias, 4), "weights": kept}, sort_keys=True, indent=0) + "\n")
        print(f"wrote {Path(WEIGHTS_FILE).name}: {len(kept)} weights")


if __name__ == "__main__":
    main()
