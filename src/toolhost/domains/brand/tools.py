"""Brand tools: extract, store and explain a project's four-layer brand runtime, and check copy against it."""

from __future__ import annotations

from dataclasses import asdict

from toolhost.domains.brand import service
from toolhost.domains.brand.schemas import (
    AuditBrandColorsIn,
    AuditBrandColorsOut,
    BrandAudience,
    BrandColors,
    BrandVoice,
    CheckBrandConsistencyIn,
    CheckBrandConsistencyOut,
    ExplainBrandSystemIn,
    ExplainBrandSystemOut,
    ExplainSection,
    ExportDesignTokensIn,
    ExportDesignTokensOut,
    ExtractBrandIn,
    ExtractBrandOut,
    GetBrandProfileIn,
    GetBrandProfileOut,
    GetBrandRuntimeIn,
    GetBrandRuntimeOut,
    PlatformOverride,
    SaveBrandProfileIn,
    SaveBrandProfileOut,
    UpdatePlatformVoiceIn,
    UpdatePlatformVoiceOut,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.dates import iso
from toolhost.platform.registry import tool


@tool(
    module="brand",
    scope="mcp:read",
    credits=2,
    read_only=True,
    idempotent=True,
    open_world=True,
    category="generation",
    policy_exempt_fields=frozenset({"html"}),
)
async def extract_brand(ctx: ToolContext, args: ExtractBrandIn) -> ExtractBrandOut:
    """Extracts a draft brand from a website (the page and up to 4 same-site pages with their CSS), raw HTML
    or plain text: name, description, palette, typography, voice, key phrases, audience, proof points, logo,
    each field with its confidence. Saves nothing: review `brand_context`, then call save_brand_profile.
    `url` takes a full URL or platform:handle (instagram:acme, tiktok:acme, x:acme, linkedin:acme, yt:acme).
    """
    draft = await service.extract(fetch_settings=ctx.settings.fetch, url=args.url, html=args.html, text=args.text)
    return ExtractBrandOut(
        brandName=draft.brand_name,
        description=draft.description,
        colors=BrandColors(primary=draft.colors.primary, secondary=draft.colors.secondary, accent=draft.colors.accent),
        voice=BrandVoice(
            tone=", ".join(draft.voice.tone), style=", ".join(draft.voice.style), keywords=draft.voice.keywords
        ),
        audience=BrandAudience(primary=draft.audience.primary, painPoints=draft.audience.pain_points),
        logoUrl=draft.logo_url,
        brand_context=draft.brand_context,
        extraction_metadata=asdict(draft.metadata),
    )


@tool(module="brand", scope="mcp:read", read_only=True, idempotent=True, project="strict")
async def get_brand_profile(ctx: ToolContext, args: GetBrandProfileIn) -> GetBrandProfileOut:
    """Returns the project's active brand profile as saved (brand_context) and in canonical form
    (profile_data), with its version and extraction metadata. No profile is a success with found=false:
    then call extract_brand and save_brand_profile.
    """
    row = await service.get_active(session=ctx.session, project_id=ctx.project_id)
    if row is None:
        return GetBrandProfileOut(found=False, project_id=str(ctx.project_id))
    return GetBrandProfileOut(
        found=True,
        profile_id=str(row.id),
        project_id=str(row.project_id),
        brand_name=row.brand_name,
        brand_context=row.brand_context,
        profile_data=row.profile_data,
        version=row.version,
        updated_at=iso(row.created_at),
        extraction_method=row.extraction_method,
        extraction_metadata=row.extraction_metadata,
        source_url=row.source_url,
        default_style_ref_url=row.default_style_ref_url,
    )


@tool(module="brand", scope="mcp:write", destructive=True, idempotent=True, project="strict")
async def save_brand_profile(ctx: ToolContext, args: SaveBrandProfileIn) -> SaveBrandProfileOut:
    """Saves a brand profile as the project's new version (a full replace, never a merge; earlier versions are
    kept). Accepts the canonical shape, a voiceProfile-only shape, a flat shape (voiceTone, voiceTags,
    discouragedTerms, preferredTerms) or an extract_brand result. Saving content identical to the active
    version changes nothing. Next: get_brand_runtime or explain_brand_system.
    """
    row, changed = await service.save(
        session=ctx.session,
        project_id=ctx.project_id,
        brand_context=args.brand_context,
        change_summary=args.change_summary,
        changed_paths=args.changed_paths,
        source_url=args.source_url,
        extraction_method=args.extraction_method,
        overall_confidence=args.overall_confidence,
        extraction_metadata=args.extraction_metadata,
    )
    return SaveBrandProfileOut(
        success=True, profile_id=str(row.id), version=row.version, updated_at=iso(row.created_at), changed=changed
    )


@tool(module="brand", scope="mcp:write", destructive=True, idempotent=True, project="strict")
async def update_platform_voice(ctx: ToolContext, args: UpdatePlatformVoiceIn) -> UpdatePlatformVoiceOut:
    """Sets one platform's voice override (samples, tone, style, avoid patterns, hashtag strategy, CTA style)
    as a new profile version; given fields replace, omitted fields keep their value. Needs a saved profile
    (not_found otherwise: call extract_brand, then save_brand_profile).
    """
    row, voice = await service.update_platform_voice(
        session=ctx.session,
        project_id=ctx.project_id,
        platform=args.platform,
        samples=args.samples,
        tone=args.tone,
        style=args.style,
        avoid_patterns=args.avoid_patterns,
        hashtag_strategy=args.hashtag_strategy,
        cta_style=args.cta_style,
    )
    return UpdatePlatformVoiceOut(
        success=True,
        profile_id=str(row.id),
        project_id=str(row.project_id),
        platform=args.platform,
        override=PlatformOverride(
            tone=voice.tone,
            style=voice.style,
            sampleContent=voice.sample_content,
            hashtagStrategy=voice.hashtag_strategy,
            ctaStyle=voice.cta_style,
            avoidPatterns=voice.avoid_patterns,
        ),
        version=row.version,
    )


@tool(
    module="brand",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    project="strict",
    response_format=None,
    public_api_server=True,
)
async def get_brand_runtime(ctx: ToolContext, args: GetBrandRuntimeIn) -> GetBrandRuntimeOut:
    """Returns the project's four-layer brand runtime: messaging (value propositions, pillars, proof points),
    voice (tone, vocabulary, avoid patterns, writing rules, platform overrides), visual (palette, typography,
    composition, logo) and operating constraints (audience, archetype), with per-field confidence. Read it
    before writing copy; check drafts with check_brand_consistency.
    """
    runtime = await service.get_runtime(session=ctx.session, project_id=ctx.project_id)
    if runtime is None:
        return GetBrandRuntimeOut(
            found=False,
            message="No brand profile for this project: call extract_brand, then save_brand_profile.",
        )
    return GetBrandRuntimeOut.model_validate(runtime)


@tool(
    module="brand",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    project="strict",
    response_format=None,
    text_shape="summary",
    public_api_server=True,
)
async def explain_brand_system(ctx: ToolContext, args: ExplainBrandSystemIn) -> ExplainBrandSystemOut:
    """Explains which brand data the project has and which is missing, in seven sections (Identity, Voice,
    Audience, Messaging, Visual, Vocabulary, Video Rules), with confidence and recommendations ordered by
    impact. Use it to decide what to add with save_brand_profile or update_platform_voice.
    """
    report = await service.explain_system(session=ctx.session, project_id=ctx.project_id)
    if report is None:
        return ExplainBrandSystemOut(
            found=False,
            sections=[],
            confidence={"overall": None, "pagesScraped": 0},
            recommendations=["Run extract_brand on the brand's website, then save_brand_profile."],
        )
    return ExplainBrandSystemOut(
        found=True,
        sections=[
            ExplainSection(
                name=section.name,
                present=section.present,
                total=section.total,
                label=section.label,
                missing_fields=section.missing_fields,
            )
            for section in report.sections
        ],
        confidence={"overall": report.overall_confidence, "pagesScraped": report.pages_scraped},
        recommendations=report.recommendations,
    )


@tool(
    module="brand",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    project="strict",
    response_format=None,
    public_api_server=True,
)
async def check_brand_consistency(ctx: ToolContext, args: CheckBrandConsistencyIn) -> CheckBrandConsistencyOut:
    """Checks a script, caption or post against the project's brand before publishing: tone and register,
    messaging and audience fit, vocabulary (preferred and banned terms), avoid patterns, structure, brand
    mentions, every claim against the brand's proof points, and voiceFit, a judgement learned from labelled
    copy of whether the text reads like the brand's own (its manner, promise and audience, not just its
    words). Returns overall 0-100 (60 is the line), passed (>= 60 and no banned term), clearToPublish (also
    no blocker: a banned term, a claim no proof point states, or a broken avoid rule; `blockers` says
    which), nine weighted dimensions, issues with the offending span and a suggestion, and claims.
    """
    result = await service.check(session=ctx.session, project_id=ctx.project_id, content=args.content)
    return CheckBrandConsistencyOut.model_validate(result.as_payload())


@tool(module="brand", scope="mcp:read", read_only=True, idempotent=True, project="strict", response_format=None)
async def audit_brand_colors(ctx: ToolContext, args: AuditBrandColorsIn) -> AuditBrandColorsOut:
    """Audits colours used in content against the brand palette: CIEDE2000 distance of each colour to the
    nearest palette slot, pass per threshold (default 10, lower is stricter), overall compliance (passed at
    >= 80), and the WCAG contrast of the palette's text/background pairs.
    """
    audit = await service.audit_colors(
        session=ctx.session,
        project_id=ctx.project_id,
        content_colors=args.content_colors,
        threshold=args.threshold,
    )
    return AuditBrandColorsOut(
        entries=[
            {
                "color": entry.color,
                "closestBrandColor": entry.closest_brand_color,
                "closestBrandSlot": entry.closest_brand_slot,
                "deltaE": entry.delta_e,
                "passed": entry.passed,
            }
            for entry in audit.entries
        ],
        overallScore=audit.overall_score,
        passed=audit.passed,
        contrast=[asdict(pair) for pair in audit.contrast],
    )


@tool(module="brand", scope="mcp:read", read_only=True, idempotent=True, project="strict", response_format=None)
async def export_design_tokens(ctx: ToolContext, args: ExportDesignTokensIn) -> ExportDesignTokensOut:
    """Exports the brand palette and fonts as design tokens: css (custom properties in :root), tailwind
    (theme config JSON), figma (tokens JSON) or dtcg (W3C Design Tokens, $value/$type).
    """
    tokens = await service.export_tokens(session=ctx.session, project_id=ctx.project_id, fmt=args.format)
    return ExportDesignTokensOut(format=args.format, tokens=tokens)
