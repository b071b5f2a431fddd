"""How well the quality score separates publishable from unpublishable posts (tests/data/quality/).

Prints, for the labelled set: accuracy of `passed` at the default threshold, the ROC AUC of the total
score, and the posts the gate gets wrong. Run: `.venv/bin/python bench/quality_scorer.py [--verbose]`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from toolhost.domains.quality.scoring import DEFAULT_THRESHOLD, PostInput, score_post

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "quality" / "labelled_posts.jsonl"


def auc(scores: list[float], labels: list[int]) -> float:
    """Probability that a random publishable post outscores a random unpublishable one (ties count half)."""
    positives = [score for score, label in zip(scores, labels, strict=True) if label]
    negatives = [score for score, label in zip(scores, labels, strict=True) if not label]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def main() -> None:
    verbose = "--verbose" in sys.argv
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    # A process's first score reads the hyphenation dictionary (syllables): timed apart from the steady state.
    started = time.perf_counter()
    score_post(PostInput(caption=rows[0]["caption"], platforms=(rows[0]["platform"],), title=rows[0].get("title")))
    first_call = time.perf_counter() - started
    started = time.perf_counter()
    results = [
        score_post(PostInput(caption=row["caption"], platforms=(row["platform"],), title=row.get("title")))
        for row in rows
    ]
    elapsed = time.perf_counter() - started
    labels = [row["label"] for row in rows]
    totals = [float(result.total) for result in results]
    correct = sum(int(result.passed) == label for result, label in zip(results, labels, strict=True))
    print(f"posts: {len(rows)} ({sum(labels)} publishable, {len(rows) - sum(labels)} not)")
    print(f"threshold: {DEFAULT_THRESHOLD}")
    print(f"accuracy (passed vs label): {correct / len(rows):.3f}")
    print(f"AUC (total score): {auc(totals, labels):.3f}")
    print(f"first call of the process: {first_call * 1000:.0f} ms")
    print(f"scoring time: {elapsed * 1000 / len(rows):.2f} ms per post")
    for row, result in zip(rows, results, strict=True):
        wrong = int(result.passed) != row["label"]
        if wrong or verbose:
            scores = " ".join(str(item["score"]) for item in result.categories)
            print(
                f"{'WRONG ' if wrong else ''}{row['id']} label={row['label']} total={result.total} "
                f"[{scores}] "
                f"blockers={result.blockers}"
            )
            if verbose:
                for item in result.categories:
                    print(f"    {item['name']}: {item['score']} - {item['detail']}")


if __name__ == "__main__":
    main()
