"""Benchmark of the brand consistency scorer on the labelled set in tests/data/brand_consistency/.

Prints ROC AUC of `overall` (on-brand = positive), accuracy of the `passed` flag, per-brand AUC, a
cross-brand AUC (every other brand's on-brand texts as extra negatives) and the time to score a
2,000-character text. Run: .venv/bin/python bench/brand_consistency.py [--verbose]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from toolhost.domains.brand.consistency import score_consistency

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "brand_consistency"


def roc_auc(scores: Sequence[float], labels: list[int]) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    positives = [score for score, label in zip(scores, labels, strict=True) if label == 1]
    negatives = [score for score, label in zip(scores, labels, strict=True) if label == 0]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def main() -> None:
    verbose = "--verbose" in sys.argv
    brands = json.loads((DATA / "brands.json").read_text())
    rows = [json.loads(line) for line in (DATA / "texts.jsonl").read_text().splitlines() if line.strip()]
    scores, labels, correct, clear_correct = [], [], 0, 0
    per_brand: dict[str, tuple[list[float], list[int]]] = {}
    for row in rows:
        result = score_consistency(brands[row["brand"]], row["text"])
        scores.append(result.overall)
        labels.append(row["label"])
        correct += int(result.passed == bool(row["label"]))
        clear_correct += int(result.clear_to_publish == bool(row["label"]))
        brand_scores, brand_labels = per_brand.setdefault(row["brand"], ([], []))
        brand_scores.append(result.overall)
        brand_labels.append(row["label"])
        if verbose:
            dims = " ".join(f"{name[:5]}={round(d.score)}" for name, d in result.dimensions.items())
            flag = "ok " if result.clear_to_publish == bool(row["label"]) else "BAD"
            print(f"{flag} {row['brand']:9} {row['label']} {row['kind']:10} {result.overall:3}  {dims}")
    print(f"texts: {len(rows)} ({sum(labels)} on-brand, {len(labels) - sum(labels)} off-brand), brands: {len(brands)}")
    print(f"ROC AUC (overall): {roc_auc(scores, labels):.3f}")
    print(f"pass-flag accuracy (passed: overall >= 60, no banned term): {correct / len(rows):.3f}")
    print(f"clearToPublish accuracy (passed and no blocker): {clear_correct / len(rows):.3f}")
    for brand, (brand_scores, brand_labels) in per_brand.items():
        print(f"  {brand}: AUC {roc_auc(brand_scores, brand_labels):.3f}")
    cross_scores, cross_labels = [], []
    for brand, runtime in brands.items():
        for row in rows:
            if row["brand"] == brand or row["label"] == 1:
                label = 1 if row["brand"] == brand and row["label"] == 1 else 0
                cross_scores.append(score_consistency(runtime, row["text"]).overall)
                cross_labels.append(label)
    cross_auc = roc_auc(cross_scores, cross_labels)
    print(f"cross-brand AUC (other brands' on-brand texts as negatives too): {cross_auc:.3f}")
    text = " ".join(row["text"] for row in rows if row["brand"] == "ledgerly")[:2000]
    runtime = brands["ledgerly"]
    score_consistency(runtime, text)  # warm the brand cache, as a running service would be
    timings = []
    for _ in range(200):
        start = time.perf_counter()
        score_consistency(runtime, text)
        timings.append((time.perf_counter() - start) * 1000)
    print(
        f"time per call, 2,000-char text: median {statistics.median(timings):.2f} ms, "
        f"p95 {sorted(timings)[int(len(timings) * 0.95)]:.2f} ms"
    )
    cold = []
    for index in range(20):
        fresh = dict(runtime, name=f"Ledgerly {index}")
        start = time.perf_counter()
        score_consistency(fresh, text)
        cold.append((time.perf_counter() - start) * 1000)
    print(f"time per call with an uncached brand: median {statistics.median(cold):.2f} ms")


if __name__ == "__main__":
    main()
