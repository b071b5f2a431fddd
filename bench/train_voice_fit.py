"""Trains the brand scorer's voiceFit model (src/toolhost/domains/brand/voice_fit.json) and says how well it ranks.

Run: `PYTHONPATH=src .venv/bin/python bench/train_voice_fit.py [--write]`. Trains on the tuning data only:
tests/data/voice_fit/ (brands and labelled copy written from the rubric by writers who never saw the scorer),
the team's set (tests/data/brand_consistency/) and the rubric set's odd ids. Never on the rubric set's even ids
or tests/data/holdout/, which bench/brand_consistency.py measures. Prints a leave-brands-out cross-validated
ROC AUC (five folds, each brand's texts in one fold) and, with --write, fits on everything and writes the
weights the scorer loads.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from brand_consistency import DATA, RUBRIC, holdout_runtime, in_measuring_half, roc_auc, rubric_runtime
from logistic import fit, predict

from toolhost.domains.brand.brand_model import compile_brand
from toolhost.domains.brand.consistency import PASS_MARK, WEIGHTS, calibrate, score_consistency
from toolhost.domains.brand.voice_fit import WEIGHTS_FILE, text_features

WRITTEN = Path(__file__).resolve().parent.parent / "tests" / "data" / "voice_fit"
MIN_TEXTS = 3  # a feature seen in fewer texts is noise
MIN_BRANDS = 3  # one seen with fewer brands is those brands' subject, not a manner
L2 = 3.0  # chosen by the leave-brands-out figures below (1 and 10 ranked a little worse)
FOLDS = 5
WEIGHT_FLOOR = 0.02


@dataclass(frozen=True, slots=True)
class Case:
    brand: str
    runtime: dict[str, Any]
    text: str
    on_brand: bool
    quiet: bool
    kind: str


def tuning_cases() -> Iterator[Case]:
    for path in sorted(WRITTEN.glob("*.json")):
        written = json.loads(path.read_text())
        runtimes = {brand["id"]: holdout_runtime(brand) for brand in written["brands"]}
        for text in written["texts"]:
            yield Case(
                f"{path.stem}/{text['brand_id']}",
                runtimes[text["brand_id"]],
                text["text"],
                text["label"] == "on_brand",
                bool(text.get("quiet")),
                text["kind"],
            )
    team = json.loads((DATA / "brands.json").read_text())
    for line in (DATA / "texts.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            yield Case(
                f"team/{row['brand']}",
                team[row["brand"]],
                row["text"],
                row["label"] == 1,
                "quiet" in row["kind"],
                row["kind"],
            )
    rubric = {brand["id"]: rubric_runtime(brand) for brand in json.loads((RUBRIC / "brands.json").read_text())}
    for line in (RUBRIC / "brand_consistency.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            if not in_measuring_half(row):
                yield Case(
                    f"rubric/{row['brand_id']}",
                    rubric[row["brand_id"]],
                    row["text"],
                    row["label"] == "on",
                    row["kind"] == "quiet",
                    row["kind"],
                )


def featurize(cases: list[Case]) -> list[dict[str, float]]:
    return [text_features(compile_brand(case.runtime), case.text) for case in cases]


def vocabulary(rows: list[dict[str, float]], cases: list[Case]) -> list[str]:
    texts: dict[str, int] = defaultdict(int)
    brands: dict[str, set[str]] = defaultdict(set)
    for row, case in zip(rows, cases, strict=True):
        for name in row:
            texts[name] += 1
            brands[name].add(case.brand)
    return sorted(
        name for name in texts if ":" not in name or (texts[name] >= MIN_TEXTS and len(brands[name]) >= MIN_BRANDS)
    )


def cross_validate(cases: list[Case], rows: list[dict[str, float]]) -> list[float]:
    """Each text's logit from a model that never saw its brand."""
    brands = sorted({case.brand for case in cases})
    fold_of = {brand: position % FOLDS for position, brand in enumerate(brands)}
    logits = [0.0] * len(cases)
    for fold in range(FOLDS):
        train = [i for i, case in enumerate(cases) if fold_of[case.brand] != fold]
        test = [i for i, case in enumerate(cases) if fold_of[case.brand] == fold]
        train_rows = [rows[i] for i in train]
        names = vocabulary(train_rows, [cases[i] for i in train])
        bias, weights = fit(train_rows, np.array([cases[i].on_brand for i in train], dtype=float), names, L2)
        named = dict(zip(names, weights.tolist(), strict=True))
        for i, logit in zip(test, predict([rows[i] for i in test], bias, named), strict=True):
            logits[i] = logit
    return logits


def dimension_scores(cases: list[Case], logits: list[float]) -> tuple[np.ndarray, list[bool], list[bool]]:
    """Each text's dimension scores, voiceFit from its out-of-fold logit; whether it has a blocker; a banned term."""
    names = list(WEIGHTS)
    scores, blocked, banned = [], [], []
    for case, logit in zip(cases, logits, strict=True):
        result = score_consistency(case.runtime, case.text)
        row = [result.dimensions[name].score for name in names]
        row[names.index("voiceFit")] = 100 / (1 + np.exp(-logit))
        scores.append(row)
        blocked.append(bool(result.blockers))
        banned.append(bool(result.banned_terms_found))
    return np.array(scores), blocked, banned


def dimension_weights(cases: list[Case], scores: np.ndarray) -> dict[str, float]:
    """The weights of `overall` that best put 60 between on- and off-brand copy, voiceFit taken from models
    that never saw the text's brand: a logistic regression without intercept on each score's distance from
    the pass mark, each weight kept at or above a floor (every dimension counts for something), scaled to sum
    to 1 (so `overall` >= 60 is its decision)."""
    names = list(WEIGHTS)
    design = (scores - PASS_MARK) / 100
    labels = np.array([case.on_brand for case in cases], dtype=float)
    sample_weight = np.where(labels == 1, 0.5 / labels.mean(), 0.5 / (1 - labels.mean()))

    def shares_of(theta: np.ndarray) -> np.ndarray:
        exponent = np.exp(theta[1:] - theta[1:].max())
        shares: np.ndarray = WEIGHT_FLOOR + (1 - WEIGHT_FLOOR * len(names)) * exponent / exponent.sum()
        return shares

    def loss(theta: np.ndarray) -> float:
        margin = np.exp(theta[0]) * (design @ shares_of(theta))
        return float(sample_weight @ (np.logaddexp(0, margin) - labels * margin)) / len(labels)

    theta = np.zeros(len(names) + 1)
    theta[0] = np.log(10.0)  # the scale of the logit: overall 10 points above the mark is about e:1
    for _ in range(3000):
        gradient = np.array([(loss(theta + step) - loss(theta - step)) / 2e-4 for step in np.eye(len(theta)) * 1e-4])
        theta -= 0.2 * gradient
    shares = shares_of(theta).round(2)
    shares[shares.argmax()] += 1 - shares.sum()  # rounded, they still sum to 1
    return dict(zip(names, shares.round(2).tolist(), strict=True))


def ranking(values: list[float], cases: list[Case]) -> str:
    """ROC AUC of the values, on all the cases and on the quiet off-brand ones against the on-brand ones."""
    labels = [int(case.on_brand) for case in cases]
    quiet = [(value, label) for value, label, case in zip(values, labels, cases, strict=True) if label or case.quiet]
    quiet_auc = roc_auc([value for value, _ in quiet], [label for _, label in quiet])
    return f"AUC {roc_auc(values, labels):.3f}, quiet {quiet_auc:.3f}"


def by_source(cases: list[Case]) -> dict[str, list[int]]:
    sources: dict[str, list[int]] = defaultdict(list)
    for position, case in enumerate(cases):
        sources[case.brand.split("/")[0]].append(position)
    return dict(sorted(sources.items()))


def main() -> None:
    cases = list(tuning_cases())
    rows = featurize(cases)
    labels = [int(case.on_brand) for case in cases]
    print(f"tuning texts: {len(cases)} ({sum(labels)} on-brand) from {len({case.brand for case in cases})} brands")
    logits = cross_validate(cases, rows)
    print(f"voiceFit alone, leave-brands-out: {ranking(logits, cases)}")
    for source, part in by_source(cases).items():
        print(f"  {source} ({len(part)} texts): {ranking([logits[i] for i in part], [cases[i] for i in part])}")
    scores, blocked, banned = dimension_scores(cases, logits)
    print("dimension weights that put the pass mark at 60:", dimension_weights(cases, scores))
    weighted = scores @ np.array(list(WEIGHTS.values()))
    overall = [
        float(calibrate(value, ["blocked"] if block else [])) for value, block in zip(weighted, blocked, strict=True)
    ]
    passed = [score >= PASS_MARK and not ban for score, ban in zip(overall, banned, strict=True)]
    print("overall with the weights in consistency.py, voiceFit out of fold:")
    for source, part in by_source(cases).items():
        accuracy = np.mean([passed[i] == cases[i].on_brand for i in part])
        print(f"  {source}: {ranking([overall[i] for i in part], [cases[i] for i in part])}, passed {accuracy:.3f}")
    verdicts = list(zip(cases, passed, strict=True))
    right = np.mean([verdict == case.on_brand for case, verdict in verdicts])
    on_blocked = sum(1 for case, verdict in verdicts if case.on_brand and not verdict)
    off_passed = sum(1 for case, verdict in verdicts if not case.on_brand and verdict)
    print(
        f"  all sources: passed {right:.3f} (on-brand blocked {on_blocked} of {sum(labels)},"
        f" off-brand passed {off_passed} of {len(cases) - sum(labels)})"
    )
    misses = Counter(
        f"{'on' if case.on_brand else 'off'}/{case.kind}"
        for case, verdict in zip(cases, passed, strict=True)
        if verdict != case.on_brand
    )
    print("  misses by label/kind: " + ", ".join(f"{kind} {count}" for kind, count in misses.most_common()))
    if "--write" in sys.argv:
        names = vocabulary(rows, cases)
        bias, weights = fit(rows, np.array(labels, dtype=float), names, L2)
        kept = {
            name: round(float(weight), 4) for name, weight in zip(names, weights, strict=True) if abs(weight) >= 0.01
        }
        WEIGHTS_FILE.write_text(json.dumps({"bias": round(bias, 4), "weights": kept}, sort_keys=True, indent=0) + "\n")
        print(f"wrote {WEIGHTS_FILE.name}: {len(kept)} weights")


if __name__ == "__main__":
    main()
