"""Does a post read like a careful writer's? A judgement learned from labelled posts, for Message Clarity.

The gate's rules (`coherence`, `tagged`) each name a shape of broken text: a sentence with no verb, "our
bakers makes", a pasted prompt. Garble that a template writer or a careless paste leaves behind takes more
shapes than rules can name: a word of the wrong class in an otherwise fluent sentence, a clause grafted
from another one, a verb that does not fit its object. Those shapes show in the sequence of part-of-speech
tags, so the features of a post are the tag pairs and triples of each sentence (function words kept as
words, since "of the" and "the of" differ) and the rules' findings by kind and weight. A logistic regression
over them, trained by `bench/train_reading.py` on about 2,300 posts, most labelled by writers who never saw
the gate (data and figures in bench/README.md), gives the probability that a careful editor would publish
the post as it is; its weights ship in `reading.json` beside this module.

Not the content words: with them the model ranked a little better on writers it had not seen (ROC AUC 0.887
against 0.876) but learned a trade's vocabulary as a fault ("team", "remote" and "dashboard" mark
wrong-industry posts in the training data), so it blocked a software company's plain posts; whether a post
speaks in the wrong trade is for the rules that know the brand.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from toolhost.domains.quality.coherence import Finding, prose, sentences
from toolhost.providers.text.analysis import STOPWORDS, tag
from toolhost.providers.text.linear import LinearModel

WEIGHTS_FILE = Path(__file__).with_name("reading.json")


@dataclass(frozen=True, slots=True)
class Reading:
    """The probability that a careful editor would publish the post, and its sentence that reads worst."""

    probability: float
    worst_sentence: str


def sentence_features(sentence: str) -> dict[str, float]:
    """The tag pairs and triples of a sentence, function words standing as themselves."""
    marks = ["<s>", *(token.lower if token.lower in STOPWORDS else token.tag for token in tag(sentence)), "</s>"]
    features = {f"t2:{first} {second}": 1.0 for first, second in zip(marks, marks[1:], strict=False)}
    features.update(
        {f"t3:{first} {second} {third}": 1.0 for first, second, third in zip(marks, marks[1:], marks[2:], strict=False)}
    )
    return features


def post_features(caption: str, findings: list[Finding]) -> tuple[dict[str, float], list[tuple[str, dict[str, float]]]]:
    """The post's features, and each sentence's own tag features (to say which sentence reads worst)."""
    features: dict[str, float] = {}
    for finding in findings:
        features["f:" + finding.kind] = features.get("f:" + finding.kind, 0.0) + finding.weight
    per_sentence = [(sentence, sentence_features(sentence)) for sentence in sentences(prose(caption))]
    for _, tagged in per_sentence:
        features.update(tagged)
    return features, per_sentence


@cache
def load_model() -> LinearModel:
    return LinearModel.load(WEIGHTS_FILE)


def read(caption: str, findings: list[Finding], model: LinearModel | None = None) -> Reading:
    """How likely a careful editor is to publish the post as it is, and the sentence that counts most against."""
    model = model or load_model()
    features, per_sentence = post_features(caption, findings)
    worst = min(
        per_sentence,
        key=lambda item: sum(model.weights.get(name, 0.0) for name in item[1]),
        default=("", {}),
    )[0]
    return Reading(model.probability(features), worst)
