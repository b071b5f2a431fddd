"""How well the quality score separates publishable from unpublishable posts.

Run: `.venv/bin/python bench/quality_scorer.py [--verbose]` prints, for each tuning set of tests/data/quality/
(the team's labelled posts, the rubric set with garble and plain posts, the built-in writer's output from
before issue 10): accuracy of `passed` at the default threshold, the ROC AUC of the total score, and the
posts the gate gets wrong.

`--holdout` scores tests/data/holdout/quality_posts.jsonl instead, written by someone who never saw the
scorer, and prints aggregate figures only (accuracy, AUC, misses counted by `kind`): no text and no id, so
the set can measure the gate without being read or tuned on. `--set PATH` prints the same for another
labelled set (tests/data/quality/sense_faults.jsonl: faults of sense, which no model is trained on).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from toolhost.domains.quality.scoring import DEFAULT_THRESHOLD, PostInput, QualityResult, score_post
from toolhost.domains.quality.service import BrandJudge

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
TUNING_SETS = ("labelled_posts.jsonl", "rubric_posts.jsonl", "old_writer_posts.jsonl")
HOLDOUT = DATA / "holdout" / "quality_posts.jsonl"
RUBRIC = DATA / "rubric" / "gate.jsonl"


def auc(scores: list[float], labels: list[int]) -> float:
    """Probability that a random publishable post outscores a random unpublishable one (ties count half)."""
    positives = [score for score, label in zip(scores, labels, strict=True) if label]
    negatives = [score for score, label in zip(scores, labels, strict=True) if not label]
    if not positives or not negatives:
        return float("nan")
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def _load(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    # The held-out set labels in words ("publishable" / "unpublishable"), the rubric set "pass" / "fail",
    # the team's tuning sets in 1 and 0.
    for row in rows:
        if isinstance(row["label"], str):
            row["label"] = int(row["label"] in ("publishable", "pass"))
    return rows


def brand_runtime(description: str) -> dict[str, Any]:
    """The thin profile a project of the rubric set's brand would have: its name and what it does.

    The rubric set names each post's brand as "Name, what it does" ("Ember & Oak, a small-batch coffee
    roaster"); a brand named alone ("Northwind Credit Union") says what it does in its name.
    """
    name, _, trade = description.partition(", ")
    return {"found": True, "name": name, "industry": trade or name}


def _score(row: dict[str, Any], *, with_brand: bool = False) -> QualityResult:
    # The held-out set names the post's text `text`; the tuning sets name it `caption`.
    caption = row["caption"] if "caption" in row else row["text"]
    post = PostInput(caption=caption, platforms=(row["platform"],), title=row.get("title"))
    if with_brand and isinstance(row.get("brand"), str):
        judge = BrandJudge(brand_runtime(row["brand"]), keyword=None, avoid_patterns=[], banned_terms=[])
        return score_post(post, brand=judge.signals(caption))
    return score_post(post)


def _figures(rows: list[dict[str, Any]], results: list[QualityResult]) -> None:
    labels = [int(row["label"]) for row in rows]
    totals = [float(result.total) for result in results]
    correct = sum(int(result.passed) == label for result, label in zip(results, labels, strict=True))
    print(f"posts: {len(rows)} ({sum(labels)} publishable, {len(rows) - sum(labels)} not)")
    print(f"accuracy (passed vs label): {correct / len(rows):.3f}")
    print(f"AUC (total score): {auc(totals, labels):.3f}")


def holdout(path: Path = HOLDOUT) -> None:
    """Aggregate figures of the held-out set, or of another labelled set: nothing that shows a post."""
    rows = _load(path)
    results = [_score(row) for row in rows]
    print(f"{path.name}, threshold {DEFAULT_THRESHOLD}")
    _figures(rows, results)
    misses = Counter(
        (row.get("kind", "?"), "passed but unpublishable" if result.passed else "blocked but publishable")
        for row, result in zip(rows, results, strict=True)
        if int(result.passed) != int(row["label"])
    )
    for (kind, way), count in sorted(misses.items()):
        print(f"  missed {count:3d}  kind={kind}  ({way})")
    # Scored again with each post's brand as a thin profile, when the set names one (aggregates only).
    branded = sum(1 for row in rows if isinstance(row.get("brand"), str))
    if branded:
        print(f"with the brand's thin profile ({branded} posts name a brand)")
        _figures(rows, [_score(row, with_brand=True) for row in rows])


def in_measuring_half(row: dict[str, Any]) -> bool:
    """The rubric set's split: even-numbered ids are only measured on, odd-numbered ones are read and tuned on."""
    return int("".join(character for character in row["id"] if character.isdigit())) % 2 == 0


def rubric(verbose: bool) -> None:
    """The rubric set (tests/data/rubric/gate.jsonl): the tuning half's misses shown, the measuring half's
    figures only, each scored with its brand's thin profile and without one."""
    rows = _load(RUBRIC)
    for half, measuring in (("tuning half (odd ids)", False), ("measuring half (even ids)", True)):
        part = [row for row in rows if in_measuring_half(row) == measuring]
        for with_brand in (True, False):
            results = [_score(row, with_brand=with_brand) for row in part]
            print(f"== rubric set, {half}, {'with' if with_brand else 'without'} the brand's profile")
            _figures(part, results)
            passed_bad = sum(1 for row, r in zip(part, results, strict=True) if r.passed and not row["label"])
            blocked_good = sum(1 for row, r in zip(part, results, strict=True) if not r.passed and row["label"])
            print(f"misses: {passed_bad} unpublishable passed, {blocked_good} publishable blocked")
            if measuring or not with_brand:
                continue
            for row, result in zip(part, results, strict=True):
                wrong = int(result.passed) != row["label"]
                if wrong or verbose:
                    scores = " ".join(str(item.score) for item in result.categories)
                    print(
                        f"{'WRONG ' if wrong else ''}{row['id']} ({row['why']}) label={row['label']} "
                        f"total={result.total} [{scores}] blockers={result.blockers}"
                    )
                    print(f"    {row['brand']} | {row['text'][:300]!r}")


def main() -> None:
    if "--holdout" in sys.argv:
        holdout()
        return
    if "--set" in sys.argv:
        holdout(Path(sys.argv[sys.argv.index("--set") + 1]))
        return
    if "--rubric" in sys.argv:
        rubric("--verbose" in sys.argv)
        return
    verbose = "--verbose" in sys.argv
    first = _load(DATA / "quality" / TUNING_SETS[0])[0]
    # A process's first score reads the hyphenation dictionary (syllables): timed apart from the steady state.
    started = time.perf_counter()
    _score(first)
    first_call = time.perf_counter() - started
    every: list[tuple[dict[str, Any], QualityResult]] = []
    started = time.perf_counter()
    for name in TUNING_SETS:
        rows = _load(DATA / "quality" / name)
        results = [_score(row) for row in rows]
        every += list(zip(rows, results, strict=True))
        print(f"== {name}")
        _figures(rows, results)
        for row, result in zip(rows, results, strict=True):
            wrong = int(result.passed) != row["label"]
            if wrong or verbose:
                scores = " ".join(str(item.score) for item in result.categories)
                print(
                    f"{'WRONG ' if wrong else ''}{row['id']} {row.get('kind', '')} label={row['label']} "
                    f"total={result.total} [{scores}] blockers={result.blockers}"
                )
                if verbose:
                    for item in result.categories:
                        print(f"    {item.name}: {item.score} - {item.detail}")
    elapsed = time.perf_counter() - started
    print("== all tuning sets")
    _figures([row for row, _ in every], [result for _, result in every])
    print(f"threshold: {DEFAULT_THRESHOLD}")
    print(f"first call of the process: {first_call * 1000:.0f} ms")
    print(f"scoring time: {elapsed * 1000 / len(every):.2f} ms per post")


if __name__ == "__main__":
    main()
