"""Logistic regression over sparse named features, for the scorers' trained parts (train_voice_fit.py,
train_reading.py): numpy only, deterministic, small enough to read."""

from __future__ import annotations

import numpy as np

from toolhost.providers.text.linear import LinearModel


def fit(rows: list[dict[str, float]], labels: np.ndarray, names: list[str], l2: float) -> tuple[float, np.ndarray]:
    """L2-regularised logistic regression by full-batch Adam over a sparse design matrix."""
    index = {name: position for position, name in enumerate(names)}
    row_ids, col_ids, values = [], [], []
    for row_id, row in enumerate(rows):
        for name, value in row.items():
            if name in index:
                row_ids.append(row_id)
                col_ids.append(index[name])
                values.append(value)
    rows_a, cols_a, vals_a = np.array(row_ids), np.array(col_ids), np.array(values)
    count = len(rows)
    # each class weighs the same, whatever the mix of the training data
    sample_weight = np.where(labels == 1, 0.5 / labels.mean(), 0.5 / (1 - labels.mean()))
    weights, bias = np.zeros(len(names)), 0.0
    moment, velocity, bias_moment, bias_velocity = np.zeros(len(names)), np.zeros(len(names)), 0.0, 0.0
    for step in range(1, 1501):
        logits = np.bincount(rows_a, weights=vals_a * weights[cols_a], minlength=count) + bias
        residual = sample_weight * (1 / (1 + np.exp(-logits)) - labels) / count
        gradient = np.bincount(cols_a, weights=vals_a * residual[rows_a], minlength=len(names)) + l2 * weights / count
        bias_gradient = residual.sum()
        moment = 0.9 * moment + 0.1 * gradient
        velocity = 0.999 * velocity + 0.001 * gradient**2
        weights -= 0.05 * (moment / (1 - 0.9**step)) / (np.sqrt(velocity / (1 - 0.999**step)) + 1e-8)
        bias_moment = 0.9 * bias_moment + 0.1 * bias_gradient
        bias_velocity = 0.999 * bias_velocity + 0.001 * bias_gradient**2
        bias -= 0.05 * (bias_moment / (1 - 0.9**step)) / (np.sqrt(bias_velocity / (1 - 0.999**step)) + 1e-8)
    return bias, weights


def predict(rows: list[dict[str, float]], bias: float, weights: dict[str, float]) -> list[float]:
    """Each row's logit under the model, as the scorer computes it."""
    model = LinearModel(bias, weights)
    return [model.logit(row) for row in rows]
