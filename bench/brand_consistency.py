"""Benchmark of the brand consistency scorer on the labelled set in tests/data/brand_consistency/.

Prints ROC AUC of `overall` (on-brand = positive), accuracy of the `passed` flag, per-brand AUC, a
cross-brand AUC (every other brand's on-brand texts as extra negatives) and the time to score a
2,000-character text. Run: .venv/bin/python bench/brand_consistency.py [--verbose]

`--holdout` scores the independently written set in tests/data/holdout/brand_cases.json instead and prints
aggregates only (no text is shown, so reading the output cannot tune the scorer to that set): ROC AUC overall,
ROC AUC on quiet cases (quiet off-brand texts against the on-brand ones), `passed` accuracy and the misses
counted by kind.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolhost.domains.brand.consistency import score_consistency

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "brand_consistency"
HOLDOUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "holdout" / "brand_cases.json"
RUBRIC = Path(__file__).resolve().parent.parent / "tests" / "data" / "rubric"


def roc_auc(scores: Sequence[float], labels: list[int]) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    positives = [score for score, label in zip(scores, labels, strict=True) if label == 1]
    negatives = [score for score, label in zip(scores, labels, strict=True) if label == 0]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def _texts(value: Any, *keys: str) -> list[str]:
    """Strings of a field that may be a string, a list of strings, or a list of objects."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    result = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict):
            item = next((item[key] for key in keys if isinstance(item.get(key), str)), None)
        if isinstance(item, str) and item.strip():
            result.append(item)
    return result


def _holdout_audience(audience: Any) -> dict[str, Any]:
    if not isinstance(audience, dict):
        return {"primary": " ".join(_texts(audience, "description", "name", "text"))}
    return {
        "primary": " ".join(_texts(audience.get("primary") or audience.get("description"), "description", "name")),
        "interests": _texts(audience.get("interests"), "name", "text"),
        "painPoints": _texts(audience.get("pain_points") or audience.get("painPoints"), "name", "text"),
        "aspirations": _texts(audience.get("aspirations") or audience.get("goals"), "name", "text"),
    }


def _holdout_proof(point: Any) -> dict[str, Any] | str:
    if isinstance(point, dict):
        return {
            "claim": point.get("claim") or point.get("text") or "",
            "evidence": point.get("evidence") or point.get("source") or "",
            "status": point.get("status") or "verified",
        }
    return str(point)


def holdout_runtime(brand: dict[str, Any]) -> dict[str, Any]:
    """The get_brand_runtime payload the held-out set's brand would have once saved as a profile."""
    voice = brand.get("voice") or {}
    return {
        "found": True,
        "name": brand.get("name"),
        "industry": brand.get("industry"),
        "description": brand.get("description"),
        "messaging": {
            "valuePropositions": _texts(brand.get("value_propositions"), "text", "name"),
            "messagingPillars": _texts(brand.get("pillars"), "description"),
            "contentPillars": _texts(brand.get("pillars"), "name", "text"),
            "proofPoints": [_holdout_proof(point) for point in brand.get("proof_points") or []],
        },
        "voice": {
            "tone": _texts(voice.get("tone"), "name"),
            "style": _texts(voice.get("do"), "text", "rule"),
            "avoidPatterns": _texts(voice.get("dont"), "text", "rule"),
            "preferredTerms": _texts(brand.get("preferred_terms"), "term", "name"),
            "bannedTerms": _texts(brand.get("banned_terms"), "term", "name"),
            "writingStyleRules": {},
            "examples": _texts(brand.get("examples"), "text"),
        },
        "audience": _holdout_audience(brand.get("audience")),
    }


def holdout() -> None:
    """Aggregates on the held-out set; prints no text, so the output cannot be used to fit to it."""
    cases = json.loads(HOLDOUT.read_text())
    runtimes = {brand["id"]: holdout_runtime(brand) for brand in cases["brands"]}
    scores, labels, quiet_scores, quiet_labels = [], [], [], []
    correct = 0
    misses: Counter[str] = Counter()
    for case in cases["texts"]:
        result = score_consistency(runtimes[case["brand_id"]], case["text"])
        label = 1 if case["label"] == "on_brand" else 0
        scores.append(result.overall)
        labels.append(label)
        if label == 1 or case.get("quiet"):
            quiet_scores.append(result.overall)
            quiet_labels.append(label)
        if result.passed == bool(label):
            correct += 1
        else:
            misses[f"{case['label']}/{case.get('kind')}"] += 1
    quiet_count = len(quiet_labels) - sum(quiet_labels)
    print(
        f"held-out texts: {len(labels)} ({sum(labels)} on-brand, {len(labels) - sum(labels)} off-brand, "
        f"{quiet_count} quiet), brands: {len(runtimes)}"
    )
    print(f"ROC AUC (overall): {roc_auc(scores, labels):.3f}")
    print(f"ROC AUC (quiet off-brand vs on-brand): {roc_auc(quiet_scores, quiet_labels):.3f}")
    print(f"pass-flag accuracy (passed: overall >= 60, no banned term): {correct / len(labels):.3f}")
    print("misses by label/kind: " + ", ".join(f"{kind} {count}" for kind, count in sorted(misses.items())))


def rubric_runtime(brand: dict[str, Any]) -> dict[str, Any]:
    """The get_brand_runtime payload of a rubric-set brand: what it sells is its industry, its tone words,
    pillars, audience and terms go where a saved profile keeps them."""
    return {
        "found": True,
        "name": brand["name"],
        "industry": brand["sells"],
        "description": brand["sells"],
        "messaging": {"contentPillars": brand["pillars"]},
        "voice": {
            "tone": brand["tone"],
            "preferredTerms": brand["preferred_terms"],
            "bannedTerms": brand["banned_terms"],
        },
        "audience": {"primary": brand["audience"]},
    }


def in_measuring_half(case: dict[str, Any]) -> bool:
    """Even-numbered ids are only measured on; odd-numbered ones are read and tuned on."""
    return int("".join(character for character in case["id"] if character.isdigit())) % 2 == 0


def rubric(verbose: bool) -> None:
    """The rubric set: figures for each half, the tuning half's misses with their text."""
    brands = {brand["id"]: rubric_runtime(brand) for brand in json.loads((RUBRIC / "brands.json").read_text())}
    cases = [json.loads(line) for line in (RUBRIC / "brand_consistency.jsonl").read_text().splitlines() if line]
    for half, measuring in (("tuning half (odd ids)", False), ("measuring half (even ids)", True)):
        part = [case for case in cases if in_measuring_half(case) == measuring]
        scores, labels, quiet_scores, quiet_labels, correct = [], [], [], [], 0
        misses: Counter[str] = Counter()
        for case in part:
            result = score_consistency(brands[case["brand_id"]], case["text"])
            label = int(case["label"] == "on")
            scores.append(result.overall)
            labels.append(label)
            if label or case["kind"] == "quiet":
                quiet_scores.append(result.overall)
                quiet_labels.append(label)
            correct += int(result.passed == bool(label))
            if result.passed != bool(label):
                misses[case["kind"]] += 1
                if not measuring:
                    dims = " ".join(f"{name[:5]}={round(d.score)}" for name, d in result.dimensions.items())
                    print(
                        f"MISS {case['id']} {case['brand_id']} {case['kind']} ({case['why']}) {result.overall} {dims}"
                    )
                    print(f"    {case['text'][:240]!r} blockers={result.blockers}")
            elif verbose and not measuring:
                print(f"ok   {case['id']} {case['kind']} {result.overall}")
        print(f"== rubric set, {half}: {len(part)} texts ({sum(labels)} on-brand)")
        print(f"ROC AUC (overall): {roc_auc(scores, labels):.3f}")
        print(f"ROC AUC (quiet off-brand vs on-brand): {roc_auc(quiet_scores, quiet_labels):.3f}")
        print(f"pass-flag accuracy: {correct / len(part):.3f}")
        print("misses by kind: " + ", ".join(f"{kind} {count}" for kind, count in sorted(misses.items())))


def main() -> None:
    if "--holdout" in sys.argv:
        holdout()
        return
    if "--rubric" in sys.argv:
        rubric("--verbose" in sys.argv)
        return
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
