"""A logistic regression over named features, as the scorers' trained parts ship it: a JSON file of
{"bias": b, "weights": {feature: weight}} written by a bench/train_*.py script. Scoring is a sparse dot
product; no model runtime is loaded."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class LinearModel:
    bias: float
    weights: dict[str, float]

    @classmethod
    def load(cls, path: Path) -> LinearModel:
        data = json.loads(path.read_text())
        return cls(float(data["bias"]), {name: float(weight) for name, weight in data["weights"].items()})

    def logit(self, features: dict[str, float]) -> float:
        return self.bias + sum(self.weights.get(name, 0.0) * value for name, value in features.items())

    def probability(self, features: dict[str, float]) -> float:
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, self.logit(features)))))
