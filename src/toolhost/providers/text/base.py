"""The one text-generation interface: the brand context every provider gets, the requests, the results."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

HookFamily = Literal["curiosity", "authority", "pain_point", "contrarian", "data_driven"]
HOOK_FAMILIES: tuple[HookFamily, ...] = ("curiosity", "authority", "pain_point", "contrarian", "data_driven")
ContentType = Literal["script", "caption", "blog", "hook"]

_PILLAR_WEIGHT = re.compile(r"^(?P<name>.*?)\s*\((?P<percent>\d{1,3})\s*%\)\s*$")


def _strings(value: Any, limit: int = 40) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part for part in re.split(r"[,;\n]", value)]
    if not isinstance(value, list):
        return ()
    result = []
    for item in value[:limit]:
        if isinstance(item, str) and item.strip():
            result.append(item.strip())
        elif isinstance(item, dict):
            text = item.get("name") or item.get("text") or item.get("claim") or item.get("quote")
            if isinstance(text, str) and text.strip():
                result.append(text.strip())
    return tuple(result)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class ProofPoint:
    """A claim the brand can back, with its evidence; the only source of figures besides the request."""

    claim: str
    evidence: str = ""
    verified: bool = True


@dataclass(frozen=True, slots=True)
class PlatformVoice:
    """A platform's voice override (CATALOG.md §6 platformOverrides)."""

    tone: tuple[str, ...] = ()
    style: tuple[str, ...] = ()
    sample_content: str = ""
    hashtag_strategy: str = ""
    cta_style: str = ""
    avoid_patterns: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BrandContext:
    """What a provider may use of a project's brand runtime; empty when the project has no brand."""

    name: str = ""
    industry: str = ""
    tone: tuple[str, ...] = ()
    style: tuple[str, ...] = ()
    avoid_patterns: tuple[str, ...] = ()
    preferred_terms: tuple[str, ...] = ()
    banned_terms: tuple[str, ...] = ()
    perspective: str = ""
    use_contractions: bool = True
    emoji_policy: str = ""
    value_propositions: tuple[str, ...] = ()
    messaging_pillars: tuple[str, ...] = ()
    content_pillars: tuple[tuple[str, float], ...] = ()
    proof_points: tuple[ProofPoint, ...] = ()
    testimonials: tuple[str, ...] = ()
    audience_pains: tuple[str, ...] = ()
    audience_aspirations: tuple[str, ...] = ()
    audience_interests: tuple[str, ...] = ()
    audience_age: str = ""
    platform_voices: dict[str, PlatformVoice] = field(default_factory=dict)

    @property
    def exists(self) -> bool:
        """Whether there is any brand data at all."""
        return bool(self.name or self.value_propositions or self.content_pillars or self.tone)

    def blocked_terms(self, platform: str | None = None) -> tuple[str, ...]:
        """Banned terms plus avoid patterns (the platform's own included): what no output may contain."""
        terms = list(self.banned_terms) + list(self.avoid_patterns)
        if platform and platform in self.platform_voices:
            terms += list(self.platform_voices[platform].avoid_patterns)
        return tuple(dict.fromkeys(term for term in terms if term.strip()))

    def voice_for(self, platform: str | None) -> PlatformVoice | None:
        """The platform's voice override, if the brand has one."""
        return self.platform_voices.get(platform) if platform else None

    def with_voice(self, brand_voice: str | None) -> BrandContext:
        """The same brand with `brand_voice` replacing the runtime's tone words (CATALOG.md §2)."""
        if not brand_voice or not brand_voice.strip():
            return self
        tone = tuple(part.strip() for part in re.split(r"[,;/\n]| and ", brand_voice) if part.strip())
        return _replace(self, tone=tone[:10])

    @classmethod
    def from_runtime(cls, runtime: dict[str, Any] | None) -> BrandContext:
        """Reads the get_brand_runtime payload shape; unknown or missing parts are simply empty."""
        if not runtime or runtime.get("found") is False:
            return cls()
        messaging = _mapping(runtime.get("messaging"))
        voice = _mapping(runtime.get("voice"))
        rules = _mapping(voice.get("writingStyleRules"))
        audience = _mapping(runtime.get("audience"))
        social = _mapping(messaging.get("socialProof"))
        pillars: list[tuple[str, float]] = []
        for item in messaging.get("contentPillars") or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                weight = item.get("weight")
                pillars.append((item["name"].strip(), float(weight) if isinstance(weight, int | float) else 0.0))
            elif isinstance(item, str) and item.strip():
                match = _PILLAR_WEIGHT.match(item.strip())
                if match:
                    pillars.append((match["name"].strip(), int(match["percent"]) / 100))
                else:
                    pillars.append((item.strip(), 0.0))
        proofs: list[ProofPoint] = []
        for item in messaging.get("proofPoints") or []:
            if isinstance(item, dict) and isinstance(item.get("claim"), str) and item["claim"].strip():
                proofs.append(
                    ProofPoint(
                        claim=item["claim"].strip(),
                        evidence=str(item.get("evidence") or "").strip(),
                        verified=item.get("status", "verified") != "unverified",
                    )
                )
            elif isinstance(item, str) and item.strip():
                proofs.append(ProofPoint(claim=item.strip()))
        voices: dict[str, PlatformVoice] = {}
        for platform, override in _mapping(voice.get("platformOverrides")).items():
            if isinstance(override, dict):
                voices[str(platform).lower()] = PlatformVoice(
                    tone=_strings(override.get("tone")),
                    style=_strings(override.get("style")),
                    sample_content=str(override.get("sampleContent") or "")[:900],
                    hashtag_strategy=str(override.get("hashtagStrategy") or ""),
                    cta_style=str(override.get("ctaStyle") or ""),
                    avoid_patterns=_strings(override.get("avoidPatterns")),
                )
        contractions = rules.get("useContractions")
        return cls(
            name=str(runtime.get("name") or "").strip(),
            industry=str(runtime.get("industry") or "").strip(),
            tone=_strings(voice.get("tone")),
            style=_strings(voice.get("style")),
            avoid_patterns=_strings(voice.get("avoidPatterns")),
            preferred_terms=_strings(voice.get("preferredTerms")),
            banned_terms=_strings(voice.get("bannedTerms")),
            perspective=str(rules.get("perspective") or ""),
            use_contractions=contractions is not False,
            emoji_policy=str(rules.get("emojiPolicy") or ""),
            value_propositions=_strings(messaging.get("valuePropositions")),
            messaging_pillars=_strings(messaging.get("messagingPillars")),
            content_pillars=tuple(sorted(pillars, key=lambda pillar: -pillar[1])),
            proof_points=tuple(proofs),
            testimonials=_strings(social.get("testimonials")),
            audience_pains=_strings(audience.get("painPoints")),
            audience_aspirations=_strings(audience.get("aspirations")),
            audience_interests=_strings(audience.get("interests")),
            audience_age=str(audience.get("ageRange") or ""),
            platform_voices=voices,
        )

    def prompt_summary(self) -> str:
        """The brand as a compact system-prompt section for a chat endpoint."""
        lines = []
        if self.name:
            lines.append(f"Brand: {self.name}" + (f" ({self.industry})" if self.industry else ""))
        for label, values in (
            ("Tone", self.tone),
            ("Style", self.style),
            ("Value propositions", self.value_propositions),
            ("Messaging pillars", self.messaging_pillars),
            ("Content pillars", tuple(name for name, _ in self.content_pillars)),
            ("Audience pain points", self.audience_pains),
            ("Audience aspirations", self.audience_aspirations),
            ("Preferred terms", self.preferred_terms),
            ("Never use these terms", self.banned_terms),
            ("Avoid", self.avoid_patterns),
        ):
            if values:
                lines.append(f"{label}: " + "; ".join(values))
        if self.proof_points:
            lines.append(
                "Proof points (the only figures and claims you may use): "
                + "; ".join(
                    point.claim + (f" ({point.evidence})" if point.evidence else "") for point in self.proof_points
                )
            )
        if self.perspective:
            lines.append(f"Perspective: {self.perspective}")
        if not self.use_contractions:
            lines.append("Do not use contractions.")
        if self.emoji_policy:
            lines.append(f"Emoji policy: {self.emoji_policy}")
        return "\n".join(lines)


def _replace(brand: BrandContext, **changes: Any) -> BrandContext:
    values = {name: getattr(brand, name) for name in brand.__dataclass_fields__}
    values.update(changes)
    return BrandContext(**values)


@dataclass(frozen=True, slots=True)
class PostRequest:
    """generate_content and the posts of a plan: a topic (or prompt) written for a platform and a shape."""

    prompt: str
    content_type: ContentType
    brand: BrandContext
    platform: str | None = None
    hook_family: HookFamily | None = None
    angle: str | None = None
    hook: str | None = None
    ideation_context: str = ""
    variant: int = 0


@dataclass(frozen=True, slots=True)
class AdaptRequest:
    """adapt_content: existing text rewritten for another platform."""

    content: str
    target_platform: str
    brand: BrandContext
    source_platform: str | None = None


@dataclass(frozen=True, slots=True)
class StoryboardRequest:
    """create_storyboard: a concept turned into timed frames."""

    concept: str
    platform: str
    duration: float
    scenes: int
    brand: BrandContext
    style: str = ""
    brand_notes: str = ""
    short_form: bool = True


@dataclass(frozen=True, slots=True)
class CarouselRequest:
    """generate_carousel: slide text for a template."""

    topic: str
    template_id: str
    slide_count: int
    brand: BrandContext
    style: str = "professional"
    hook: str | None = None
    hook_family: HookFamily | None = None
    cta_text: str | None = None
    cta_url: str | None = None
    tone: str = ""
    constraints: str = ""
    platform: str | None = None


@dataclass(frozen=True, slots=True)
class PlanPostRequest:
    """One post of a weekly plan: platform, day, rotation index and the angle and hook chosen for it."""

    topic: str
    platform: str
    brand: BrandContext
    hook_family: HookFamily
    angle: str
    media_type: str
    day: int
    index: int
    top_hook: str | None = None
    source_notes: str = ""


@dataclass(frozen=True, slots=True)
class PlanPostDraft:
    """What a provider writes for one plan post."""

    hook: str
    angle: str
    caption: str
    hashtags: list[str]
    title: str | None
    visual_direction: str


class TextProvider(Protocol):
    """The one interface every generating tool uses; `builtin` and `openai` implement it."""

    name: str

    async def write(self, request: PostRequest) -> str:
        """A caption, hook, script or blog post."""
        ...

    async def adapt(self, request: AdaptRequest) -> str:
        """Existing text rewritten for the target platform."""
        ...

    async def storyboard(self, request: StoryboardRequest) -> dict[str, Any]:
        """A storyboard in the create_storyboard shape (without content_id)."""
        ...

    async def carousel(self, request: CarouselRequest) -> list[dict[str, Any]]:
        """The slides of a carousel in the generate_carousel shape."""
        ...

    async def plan_post(self, request: PlanPostRequest) -> PlanPostDraft:
        """One post of a content plan."""
        ...
