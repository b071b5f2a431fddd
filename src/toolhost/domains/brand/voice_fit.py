"""voiceFit: does a text read like this brand's own copy? A judgement of manner, learned from labelled copy.

The lexical dimensions see what a rule can name: banned terms, hype, urgency, claims, topic words. Quiet
off-brand copy names none of them: it is fluent and on the brand's subject, and wrong in its manner (a
luxury or institutional register for a plain brand, gatekeeping, contempt, a promise the brand cannot keep).
That manner lives in the words a text uses that its brand's own profile never does, and in the words around
them. So a text is read against its brand: every content word the profile uses (pillars, value propositions,
voice rules, example posts, audience) stands for "the brand's subject" and carries no manner of its own;
function words, the other content words and the word pairs around them are the features, each word also
crossed with the families of the brand's tone words (sober, warm, playful: "delighted" is right for one and
wrong for another), with the text's length and how it speaks (contractions, "you", "we", sentence length)
crossed with the brand's tone words and set against how its example posts speak. A logistic
regression over those features, trained on labelled on- and off-brand copy of many brands by
`bench/train_voice_fit.py` (data and figures in bench/README.md), gives the probability that the brand's
editor would approve the text; its weights ship in `voice_fit.json` beside this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from toolhost.domains.brand.brand_model import BrandModel
from toolhost.domains.brand.dimensions import NEUTRAL, Dimension, Issue, record_issue
from toolhost.domains.brand.register import manner_of
from toolhost.providers.text.analysis import NUMBER, STOPWORDS, WORD, stem
from toolhost.providers.text.linear import LinearModel

WEIGHTS_FILE = Path(__file__).with_name("voice_fit.json")
BRAND_WORD = "~"  # what a content word the profile itself uses becomes: the brand's subject, no manner
SHORT_WORDS = 15
DOUBT = 50.0  # under this the model thinks the editor more likely to send the text back than approve it


@dataclass(frozen=True, slots=True)
class Token:
    """A word of the text as the model reads it: its stem, the brand's subject, or a function word."""

    form: str
    word: str  # lower-cased as written
    start: int
    end: int
    content: bool


def read_tokens(brand: BrandModel, text: str) -> tuple[list[Token], int, int, int]:
    """The text's tokens, and how many content words it has, how many the profile uses, how many only its
    avoid rules and banned terms use."""
    tokens: list[Token] = []
    content = licensed = avoided = 0
    for match in WORD.finditer(text):
        written = match.group(0).lower()
        word = written.replace("\u2019", "'")
        if word in STOPWORDS or len(word) <= 2:
            tokens.append(Token(word, written, match.start(), match.end(), content=False))
            continue
        content += 1
        word_stem = stem(word)
        if word_stem in brand.profile_stems:
            licensed += 1
            tokens.append(Token(BRAND_WORD, written, match.start(), match.end(), content=True))
            continue
        avoided += word_stem in brand.avoid_stems
        tokens.append(Token(word_stem, written, match.start(), match.end(), content=True))
    return tokens, content, licensed, avoided


def text_features(brand: BrandModel, text: str) -> dict[str, float]:
    """The features of a text read against its brand: what the model was trained on, computed the same way."""
    return _features(brand, text, read_tokens(brand, text))


def _features(brand: BrandModel, text: str, read: tuple[list[Token], int, int, int]) -> dict[str, float]:
    tokens, content, licensed, avoided = read
    features: dict[str, float] = {}
    for token in tokens:
        if token.form != BRAND_WORD:
            features["w:" + token.form] = 1.0
            for family in brand.tone_families:
                features[f"f:{family}:{token.form}"] = 1.0
    for first, second in zip(tokens, tokens[1:], strict=False):
        if first.form != BRAND_WORD or second.form != BRAND_WORD:  # "only ~", "our ~", "you deserve"
            features[f"b:{first.form} {second.form}"] = 1.0
    # How the text speaks, crossed with each tone word of the brand: contractions are right for a "warm"
    # brand and wrong for a "formal" one, and the model learns which from the labelled copy; and how far it
    # is from the way the brand's own example posts speak.
    words = [token.word for token in tokens]
    manner = manner_of(text, words)
    for tone in brand.tone_stems:
        for name, value in manner.items():
            features[f"x:{tone}*{name}"] = value
    for name, value in brand.example_manner.items():
        features["d:" + name] = abs(manner[name] - value)
    # Short copy gives the words little to go on: the model learns how far that alone should count.
    features["length"] = math.log1p(len(words)) / 5
    features["short"] = 1.0 if len(words) < SHORT_WORDS else 0.0
    features["licensed_share"] = licensed / content if content else 0.0
    features["avoid_words"] = min(avoided, 3) / 3
    unbacked = {match.group(0).rstrip(".,") for match in NUMBER.finditer(text)} - brand.backed_figures
    features["unbacked_figures"] = min(len(unbacked), 3) / 3
    return features


@cache
def load_model() -> LinearModel:
    return LinearModel.load(WEIGHTS_FILE)


def words_against(tokens: list[Token], model: LinearModel) -> list[tuple[int, int]]:
    """Spans of the (at most three) content words that count most against the text, strongest first (a
    function word may weigh as much, but "our" tells a writer nothing)."""
    weighed: dict[str, tuple[float, int, int]] = {}
    for token in tokens:
        weight = model.weights.get("w:" + token.form, 0.0)
        if token.content and token.form != BRAND_WORD and weight < 0 and token.form not in weighed:
            weighed[token.form] = (weight, token.start, token.end)
    return [(start, end) for _, start, end in sorted(weighed.values())[:3]]


def voice_fit(brand: BrandModel, text: str, issues: list[Issue]) -> Dimension:
    """The voiceFit dimension: the model's probability as a 0-100 score, and the words that weigh most
    against a text it doubts. A profile with no voice (no tone words, style or avoid rules, nor example
    posts: a name and a trade) gives it nothing to read a manner against, so it scores neutral."""
    if not brand.has_voice:
        return Dimension(
            score=NEUTRAL,
            weight=0.0,
            suggestions=["add the brand's tone words and example posts to judge how copy sounds"],
        )
    model = load_model()
    read = read_tokens(brand, text)  # once: for the features and for the words named against the text
    result = Dimension(score=100.0 * model.probability(_features(brand, text, read)), weight=0.0)
    if result.score < DOUBT:
        for span in words_against(read[0], model):
            record_issue(
                issues,
                result,
                "voiceFit",
                "Reads unlike the brand's own copy",
                text,
                span,
                "medium",
                "say it the way the brand's example posts and voice rules do: their register, their promise, "
                "their audience",
            )
    return result
