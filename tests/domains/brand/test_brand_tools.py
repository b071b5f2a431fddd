"""The brand tools over HTTP against the real app: extraction, versions, runtime, checks, audits, tokens."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

import tinycss2

if TYPE_CHECKING:
    from tests.conftest import Tenant, TenantFactory

PROFILE: dict[str, Any] = {
    "brandName": "Ledgerly",
    "tagline": "Close your books in days, not weeks",
    "industryClassification": "Accounting software",
    "competitivePositioning": "The calm, automated way for small businesses to close their books",
    "voiceProfile": {
        "tone": ["professional", "reassuring"],
        "style": ["concise"],
        "avoidPatterns": ["hype", "exclamation marks"],
    },
    "vocabularyRules": {
        "preferredTerms": ["close your books", "reconciliation"],
        "bannedTerms": ["revolutionary"],
    },
    "writingStyleRules": {
        "perspective": "first-person plural (we)",
        "useContractions": True,
        "emojiPolicy": "none",
    },
    "targetAudience": {
        "ageRange": "30-55",
        "painPoints": ["month-end close takes too long", "messy spreadsheets"],
    },
    "valuePropositions": ["Close your books in days, not weeks", "Automatic bank reconciliation"],
    "proofPoints": [
        {"claim": "Customers close their books 60% faster", "evidence": "2025 survey", "status": "verified"}
    ],
    "contentPillars": ["Month-end close (60%)", "Cash-flow visibility (40%)"],
    "colorPalette": {"primary": "#1f4e79", "accent": "#f2a900", "background": "#ffffff", "text": "#1a1a1a"},
    "typography": {"headingFont": "Fraunces", "bodyFont": "Inter"},
}
ON_BRAND = (
    "Month-end close should not eat your evenings. With Ledgerly, bank reconciliation runs automatically, "
    "so most transactions are already matched when you sit down. Our customers close their books 60% faster."
)
OFF_BRAND = (
    "OMG this revolutionary app is INSANE!!! Ledgerly is the #1 accounting tool in the world and is "
    "guaranteed to save you $10,000!!! Buy now!!!"
)


def _error(response: Any) -> dict[str, Any]:
    body = response.json()
    assert body["isError"], body
    return body["structuredContent"]["error"]  # type: ignore[no-any-return]


async def test_extract_brand_reads_the_site_pages_and_css_and_saves_nothing(tenant: Tenant, site: str) -> None:
    data = await tenant.data("extract_brand", {"url": site + "/", "response_format": "json"})
    assert data["brandName"] == "Harbor Notes"
    assert data["colors"]["primary"] == "#0f766e"
    assert data["colors"]["accent"] == "#f97316"
    context = data["brand_context"]
    assert context["typography"]["headingFont"] == "Fraunces"
    assert context["typography"]["bodyFont"] == "Inter"
    assert {400, 700} <= set(context["typography"]["weights"])
    assert context["colorPalette"]["background"] in ("#ffffff", "#f8fafc")  # near-duplicates merged
    assert context["logoUrl"] == site + "/logo.svg"
    assert context["confidence"]["pagesScraped"] == 4
    assert 0 < context["confidence"]["overall"] <= 1
    assert data["audience"]["primary"] == "small teams who are tired of losing decisions in chat threads"
    assert any("4,000 teams" in point["claim"] for point in context["proofPoints"])
    assert all(point["status"] == "unverified" for point in context["proofPoints"])
    assert data["voice"]["keywords"]
    assert context["confidence"]["fields"]["colorPalette.primary"]["source"] == "extracted"
    profile = await tenant.data("get_brand_profile", {})
    assert profile["found"] is False


async def test_an_extracted_draft_saves_as_a_profile(tenant: Tenant, site: str) -> None:
    draft = await tenant.data("extract_brand", {"url": site + "/"})
    saved = await tenant.data(
        "save_brand_profile",
        {"brand_context": draft, "extraction_method": "url_extract", "source_url": site + "/"},
    )
    runtime = await tenant.data("get_brand_runtime", {})
    assert saved["version"] == 1
    assert runtime["name"] == "Harbor Notes"
    assert runtime["visual"]["colorPalette"]["primary"] == "#0f766e"


async def test_a_page_without_css_gives_an_honest_partial_result(tenant: Tenant) -> None:
    html = "<html><head><title>Plain Shop</title></head><body><h1>Handmade mugs for slow mornings</h1></body>"
    data = await tenant.data("extract_brand", {"html": html})
    assert data["colors"] == {"primary": None, "secondary": None, "accent": None}
    assert data["brand_context"]["confidence"]["overall"] < 0.5


async def test_plain_text_extraction_reads_voice_and_key_phrases(tenant: Tenant) -> None:
    text = " ".join([ON_BRAND] * 4)
    data = await tenant.data("extract_brand", {"text": text})
    assert data["voice"]["keywords"]
    assert data["brand_context"]["voiceProfile"]["measured"]["word_count"] > 30


async def test_extract_brand_refuses_bad_sources(tenant: Tenant, site: str) -> None:
    handle = await tenant.call("extract_brand", {"url": "@acme"})
    assert _error(handle)["error_type"] == "validation_error"
    private = await tenant.call("extract_brand", {"url": "http://10.0.0.1/"})
    assert _error(private)["message"] == "URL resolves to a private or internal address"
    slow = await tenant.call("extract_brand", {"url": site + "/hang"})
    assert _error(slow)["error_type"] == "upstream_error"
    huge = await tenant.call("extract_brand", {"url": site + "/huge"})
    assert _error(huge)["message"] == "page too large"
    both = await tenant.call("extract_brand", {"url": site, "text": "x"})
    assert both.status_code == 400
    oversized = await tenant.call("extract_brand", {"html": "<p>" + "x" * (10 * 1024 * 1024) + "</p>"})
    assert oversized.status_code in (400, 413)


async def test_the_save_runtime_explain_check_cycle(tenant: Tenant) -> None:
    saved = await tenant.data("save_brand_profile", {"brand_context": PROFILE, "change_summary": "first"})
    runtime = await tenant.data("get_brand_runtime", {})
    assert runtime["found"] is True
    assert runtime["messaging"]["contentPillars"] == ["Month-end close (60%)", "Cash-flow visibility (40%)"]
    assert runtime["voice"]["bannedTerms"] == ["revolutionary"]
    assert runtime["confidence"]["fields"]["brandName"] == {"value": 1.0, "source": "stated"}
    assert runtime["archetype"] == ""
    assert runtime["visual"]["composition"] is not None
    explained = await tenant.data("explain_brand_system", {})
    labels = {section["name"]: section["label"] for section in explained["sections"]}
    assert labels["Identity"] == "OK"
    assert labels["Video Rules"] == "MISSING"
    assert any("logo" in item for item in explained["recommendations"])
    good = await tenant.data("check_brand_consistency", {"content": ON_BRAND})
    bad = await tenant.data("check_brand_consistency", {"content": OFF_BRAND})
    assert good["passed"]
    assert good["overall"] > bad["overall"] + 20
    assert not bad["passed"]
    assert bad["bannedTermsFound"] == ["revolutionary"]
    assert bad["fabricationWarnings"]
    assert any(
        claim["kind"] in ("ranking", "number", "guarantee") and not claim["supported"] for claim in bad["claims"]
    )
    supported = [claim for claim in good["claims"] if claim["supported"]]
    assert supported
    assert "60%" in supported[0]["evidence"]
    assert set(good["dimensions"]) == {
        "toneAlignment",
        "vocabularyAdherence",
        "avoidCompliance",
        "audienceRelevance",
        "brandMentions",
        "structuralPatterns",
        "messagingAlignment",
        "claimSupport",
        "voiceFit",
    }
    assert round(sum(d["weight"] for d in good["dimensions"].values()), 6) == 1.0
    span = bad["issues"][0]["span"]
    assert OFF_BRAND[span["start"] : span["end"]] == span["text"]
    assert saved["version"] == 1


async def test_an_identical_save_is_a_no_op_and_a_change_adds_a_version(tenant: Tenant) -> None:
    first = await tenant.data("save_brand_profile", {"brand_context": PROFILE})
    again = await tenant.data("save_brand_profile", {"brand_context": PROFILE})
    assert (again["version"], again["profile_id"], again["changed"]) == (1, first["profile_id"], False)
    changed = await tenant.data("save_brand_profile", {"brand_context": {**PROFILE, "tagline": "Calm books"}})
    assert (changed["version"], changed["changed"]) == (2, True)
    profile = await tenant.data("get_brand_profile", {})
    assert profile["version"] == 2
    assert profile["profile_data"]["tagline"] == "Calm books"


async def test_a_failed_save_keeps_the_previous_version(tenant: Tenant) -> None:
    await tenant.data("save_brand_profile", {"brand_context": PROFILE})
    broken = {**PROFILE, "colorPalette": {"primary": "banana"}}
    response = await tenant.call("save_brand_profile", {"brand_context": broken})
    error = _error(response)
    assert error["field_errors"][0]["path"] == "brand_context.colorPalette.primary"
    profile = await tenant.data("get_brand_profile", {})
    assert profile["version"] == 1
    assert profile["profile_data"]["colorPalette"]["primary"] == "#1f4e79"


async def test_shapes_resolve_to_the_canonical_profile(tenant: Tenant) -> None:
    flat = {
        "brandName": "Flatco",
        "voiceTone": "warm, direct",
        "discouragedTerms": "cheap; synergy",
        "preferredTerms": ["craft"],
    }
    await tenant.data("save_brand_profile", {"brand_context": flat})
    runtime = await tenant.data("get_brand_runtime", {})
    assert runtime["voice"]["tone"] == ["warm", "direct"]
    assert runtime["voice"]["bannedTerms"] == ["cheap", "synergy"]
    voice_only = {
        "voiceProfile": {
            "tone": ["calm"],
            "avoidPatterns": ['never say "world-class"', "jargon"],
            "languagePatterns": ["plain words"],
        }
    }
    await tenant.data("save_brand_profile", {"brand_context": voice_only})
    runtime = await tenant.data("get_brand_runtime", {})
    assert runtime["voice"]["bannedTerms"] == ["world-class", "jargon"]
    assert runtime["voice"]["preferredTerms"] == ["plain words"]


async def test_a_profile_missing_every_layer_is_kept_as_a_stub(tenant: Tenant) -> None:
    saved = await tenant.data("save_brand_profile", {"brand_context": {"notes": "to be filled in"}})
    explained = await tenant.data("explain_brand_system", {})
    assert saved["version"] == 1
    assert {section["label"] for section in explained["sections"]} == {"MISSING"}
    checked = await tenant.data("check_brand_consistency", {"content": ON_BRAND})
    assert 0 <= checked["overall"] <= 100
    empty = await tenant.call("save_brand_profile", {"brand_context": {}})
    assert _error(empty)["error_type"] == "validation_error"


async def test_a_project_without_a_brand_answers_found_false_or_not_found(tenant: Tenant) -> None:
    runtime = await tenant.call("get_brand_runtime", {})
    assert runtime.json()["structuredContent"]["found"] is False
    text = await tenant.call("get_brand_profile", {})
    assert text.json()["content"][0]["text"] == "No active brand profile found for this project."
    explained = await tenant.data("explain_brand_system", {})
    assert explained["found"] is False
    check = _error(await tenant.call("check_brand_consistency", {"content": "Hello"}))
    assert check["message"] == "No brand profile found. Cannot check consistency without brand data."
    audit = _error(await tenant.call("audit_brand_colors", {"content_colors": ["#ffffff"]}))
    assert audit["message"] == "No brand color palette found. Extract a brand profile first."
    tokens = _error(await tenant.call("export_design_tokens", {"format": "css"}))
    assert tokens["error_type"] == "not_found"
    voice = _error(await tenant.call("update_platform_voice", {"platform": "linkedin", "tone": ["warm"]}))
    assert voice["error_type"] == "not_found"


async def test_content_of_zero_or_20001_characters_is_refused(tenant: Tenant) -> None:
    await tenant.data("save_brand_profile", {"brand_context": PROFILE})
    assert (await tenant.call("check_brand_consistency", {"content": ""})).status_code == 400
    assert (await tenant.call("check_brand_consistency", {"content": "a" * 20_001})).status_code == 400
    assert (await tenant.call("check_brand_consistency", {"content": "a " * 10_000})).status_code == 200


async def test_another_tenants_project_is_not_found(tenant: Tenant, make_tenant: TenantFactory) -> None:
    await tenant.data("save_brand_profile", {"brand_context": PROFILE})
    other = await make_tenant()
    for name, extra in (
        ("get_brand_runtime", {}),
        ("get_brand_profile", {}),
        ("check_brand_consistency", {"content": "hi"}),
        ("save_brand_profile", {"brand_context": PROFILE}),
    ):
        response = await other.call(name, {"project_id": str(tenant.project_id), **extra})
        assert response.status_code == 404, name
    mine = await other.data("get_brand_runtime", {})
    assert mine["found"] is False
    assert (await other.call("get_brand_runtime", {"project_id": str(uuid.uuid4())})).status_code == 404


async def test_update_platform_voice_replaces_given_fields_and_keeps_the_rest(tenant: Tenant) -> None:
    await tenant.data("save_brand_profile", {"brand_context": PROFILE})
    first = await tenant.data(
        "update_platform_voice", {"platform": "linkedin", "tone": ["expert"], "cta_style": "Invite a reply"}
    )
    second = await tenant.data("update_platform_voice", {"platform": "linkedin", "hashtag_strategy": "3 tags"})
    assert second["override"] == {
        "tone": ["expert"],
        "style": [],
        "sampleContent": "",
        "hashtagStrategy": "3 tags",
        "ctaStyle": "Invite a reply",
        "avoidPatterns": [],
    }
    assert (first["version"], second["version"]) == (2, 3)
    runtime = await tenant.data("get_brand_runtime", {})
    assert runtime["voice"]["platformOverrides"]["linkedin"]["ctaStyle"] == "Invite a reply"


async def test_audit_brand_colors_measures_ciede2000_and_contrast(tenant: Tenant) -> None:
    await tenant.data("save_brand_profile", {"brand_context": PROFILE})
    data = await tenant.data("audit_brand_colors", {"content_colors": ["#1f4e79", "#204f7a", "#ff00ff"]})
    first, near, far = data["entries"]
    assert (first["deltaE"], first["closestBrandSlot"], first["passed"]) == (0.0, "primary", True)
    assert 0 < near["deltaE"] < 2
    assert near["passed"]
    assert far["deltaE"] > 10
    assert not far["passed"]
    assert data["overallScore"] == 67
    assert data["passed"] is False
    text_pair = next(pair for pair in data["contrast"] if pair["foreground"] == "#1a1a1a")
    assert text_pair["ratio"] > 15
    assert text_pair["aaa"]
    bad = await tenant.call("audit_brand_colors", {"content_colors": ["not-a-colour"]})
    assert bad.status_code == 400


async def test_design_tokens_parse_as_what_they_claim(tenant: Tenant) -> None:
    await tenant.data("save_brand_profile", {"brand_context": PROFILE})
    css = (await tenant.data("export_design_tokens", {"format": "css"}))["tokens"]
    rules = tinycss2.parse_stylesheet(css, skip_whitespace=True)
    assert len(rules) == 1
    assert rules[0].type == "qualified-rule"
    assert tinycss2.serialize(rules[0].prelude).strip() == ":root"
    declarations = {
        d.name: tinycss2.serialize(d.value).strip()
        for d in tinycss2.parse_declaration_list(rules[0].content, skip_whitespace=True)
        if d.type == "declaration"
    }
    assert declarations["--brand-primary"] == "#1f4e79"
    assert declarations["--brand-background"] == "#ffffff"
    assert declarations["--brand-font-heading"] == '"Fraunces"'
    tailwind = json.loads((await tenant.data("export_design_tokens", {"format": "tailwind"}))["tokens"])
    assert tailwind["theme"]["extend"]["colors"]["brand-accent"] == "#f2a900"
    assert tailwind["theme"]["extend"]["fontFamily"]["brand-body"] == ["Inter"]
    figma = json.loads((await tenant.data("export_design_tokens", {"format": "figma"}))["tokens"])
    assert figma["color"]["text"] == {"value": "#1a1a1a", "type": "color"}
    assert figma["fontFamily"]["heading"] == {"value": "Fraunces", "type": "fontFamilies"}
    dtcg = json.loads((await tenant.data("export_design_tokens", {"format": "dtcg"}))["tokens"])
    assert dtcg["brand"]["color"]["primary"] == {"$type": "color", "$value": "#1f4e79"}


async def test_audit_brand_colors_takes_any_finite_positive_threshold(tenant: Tenant) -> None:
    await tenant.data("save_brand_profile", {"brand_context": PROFILE})
    data = await tenant.data("audit_brand_colors", {"content_colors": ["#ff00ff"], "threshold": 500})
    assert data["passed"] is True
    for refused in (0, -1):
        response = await tenant.call("audit_brand_colors", {"content_colors": ["#ff00ff"], "threshold": refused})
        assert response.json()["error"]["error_type"] == "validation_error"


async def test_example_posts_saved_with_the_voice_shape_the_consistency_check(tenant: Tenant) -> None:
    stiff = (
        "Ledgerly is pleased to announce the availability of enhanced reconciliation functionality, "
        "which enables organisations to achieve operational efficiency in the execution of month-end processes."
    )
    warm_voice = {"tone": ["warm", "friendly"], "style": ["conversational"]}
    examples = [
        "We match your bank feed as it arrives, so month-end is a short review instead of a long night.",
        "Not sure where your cash went this month? Open the cash-flow view and we'll show you, line by line.",
    ]
    profile = dict(PROFILE, voiceProfile=dict(warm_voice, examples=examples))
    await tenant.data("save_brand_profile", {"brand_context": profile})
    runtime = await tenant.data("get_brand_runtime", {})
    assert runtime["voice"]["examples"] == examples
    checked = await tenant.data("check_brand_consistency", {"content": stiff})
    assert not checked["passed"]
    assert any(issue["rule"] == "tone: institutional register" for issue in checked["issues"])
