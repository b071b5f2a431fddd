"""extract_brand over HTTP on stand-in sites of different kinds (tests/data/brand_sites), served on 127.0.0.1:
a three-page coffee roaster, a three-page B2B SaaS and a one-page bakery, checked as a person reviewing the
draft would: the colours, who it is for, the awards and press, the terms, and how sure it is."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from tests.domains.distribution.standins import serve

if TYPE_CHECKING:
    from tests.conftest import Tenant

SITES = Path(__file__).resolve().parents[2] / "data" / "brand_sites"


@contextlib.asynccontextmanager
async def site(name: str) -> AsyncIterator[str]:
    """One stand-in site, served as static files; yields its home page URL."""
    app = Starlette(routes=[Mount("/", StaticFiles(directory=SITES / name, html=True))])
    async with serve(app) as base_url:
        yield base_url + "/"


async def extract(tenant: Tenant, name: str) -> dict[str, Any]:
    async with site(name) as url:
        return await tenant.data("extract_brand", {"url": url, "response_format": "json"})


def site_text(name: str) -> str:
    """The visible words of every page of a stand-in site, in lower case."""
    pages = [re.sub(r"<[^>]+>", " ", path.read_text()) for path in (SITES / name).glob("*.html")]
    return re.sub(r"\s+", " ", " ".join(pages)).replace("&amp;", "&").lower()


def headings(name: str) -> list[str]:
    found = []
    for path in (SITES / name).glob("*.html"):
        found += [
            re.sub(r"<[^>]+>", "", item).strip()
            for item in re.findall(r"<h[1-3][^>]*>(.*?)</h[1-3]>", path.read_text())
        ]
    return found


async def test_the_roasters_green_is_primary_its_copper_button_the_accent_and_its_body_ink_the_text(
    tenant: Tenant,
) -> None:
    data = await extract(tenant, "fernwood_coffee")
    palette = data["brand_context"]["colorPalette"]
    # theme-color, the header background, headings and links are all the dark green
    assert data["colors"]["primary"] == "#2d4a3e"
    assert data["colors"]["accent"] == "#c8662b"
    assert palette["text"] == "#3b332d"
    assert palette["background"] == "#f7f3ec"
    assert data["brand_context"]["typography"]["headingFont"] == "Playfair Display"


async def test_a_saas_button_in_the_brand_colour_leaves_it_primary_not_accent(tenant: Tenant) -> None:
    data = await extract(tenant, "pipewell")
    palette = data["brand_context"]["colorPalette"]
    assert data["colors"]["primary"] == "#4f46e5"
    assert data["colors"]["accent"] != "#4f46e5"
    assert palette["text"] == "#374151"
    assert palette["background"] == "#ffffff"


async def test_a_bakery_styled_in_its_own_page_gets_its_header_rose_and_body_ink(tenant: Tenant) -> None:
    data = await extract(tenant, "rosies_bakehouse")
    palette = data["brand_context"]["colorPalette"]
    assert data["brandName"] == "Rosie's Bakehouse"
    assert palette["primary"] == "#d9687b"
    assert palette["text"] == "#4a3b35"


async def test_who_the_brand_is_for_comes_from_the_sentence_that_says_it(tenant: Tenant) -> None:
    coffee = await extract(tenant, "fernwood_coffee")
    saas = await extract(tenant, "pipewell")
    assert coffee["audience"]["primary"] == "home brewers who care about where their beans come from"
    assert saas["audience"]["primary"] == "data teams who are tired of babysitting brittle pipelines"
    assert coffee["brand_context"]["targetAudience"]["primary"] == coffee["audience"]["primary"]


async def test_awards_certifications_and_press_the_site_names_are_found(tenant: Tenant) -> None:
    coffee = (await extract(tenant, "fernwood_coffee"))["brand_context"]
    saas = (await extract(tenant, "pipewell"))["brand_context"]
    awards = coffee["socialProof"]["awards"]
    for recognition in ("Good Food Award 2024", "Certified B Corp", "Fair Trade Certified", "USDA Organic"):
        assert recognition in awards
    assert set(coffee["socialProof"]["pressMentions"]) == {"Bon Appétit", "Sprudge", "Garden & Gun"}
    assert {"SOC 2 Type II", "ISO 27001"} <= set(saas["socialProof"]["awards"])
    assert {"TechCrunch", "The New Stack"} <= set(saas["socialProof"]["pressMentions"])
    claims = [point["claim"] for point in coffee["proofPoints"]]
    assert "Certified B Corp" in claims
    assert all(point["status"] == "unverified" for point in coffee["proofPoints"])


async def test_terms_are_whole_noun_phrases_and_propositions_are_sentences_not_headings(tenant: Tenant) -> None:
    data = await extract(tenant, "fernwood_coffee")
    context = data["brand_context"]
    preferred = context["vocabularyRules"]["preferredTerms"]
    text = site_text("fernwood_coffee")
    titles = headings("fernwood_coffee")
    assert {"partner farms", "small batches"} <= set(preferred)
    for term in preferred + data["voice"]["keywords"]:
        assert term.lower() in text
        # "Coffee worth slowing" was the heading "Coffee worth slowing down for" cut mid-phrase
        cut_heading = any(title.lower().startswith(term.lower() + " ") for title in titles)
        assert " " not in term or not cut_heading, term
    propositions = context["valuePropositions"]
    assert propositions
    assert not set(propositions) & set(titles)
    assert all(proposition.endswith((".", "!")) for proposition in propositions)


async def test_a_thin_one_page_site_is_less_certain_than_a_rich_three_page_one(tenant: Tenant) -> None:
    rich = (await extract(tenant, "fernwood_coffee"))["brand_context"]["confidence"]
    thin = (await extract(tenant, "rosies_bakehouse"))["brand_context"]["confidence"]
    assert (rich["pagesScraped"], thin["pagesScraped"]) == (3, 1)
    assert thin["overall"] < 0.4
    assert rich["overall"] > thin["overall"] + 0.25
    # the brand's green is backed by several kinds of evidence, the bakery's rose by one
    assert rich["fields"]["colorPalette.primary"]["value"] > thin["fields"]["colorPalette.primary"]["value"]


async def test_a_saved_draft_keeps_what_was_found(tenant: Tenant) -> None:
    async with site("fernwood_coffee") as url:
        draft = await tenant.data("extract_brand", {"url": url})
        await tenant.data("save_brand_profile", {"brand_context": draft, "extraction_method": "url_extract"})
    runtime = await tenant.data("get_brand_runtime", {})
    assert runtime["visual"]["colorPalette"]["primary"] == "#2d4a3e"
    assert "Good Food Award 2024" in runtime["messaging"]["socialProof"]["awards"]
    assert runtime["audience"]["primary"] == "home brewers who care about where their beans come from"
    assert "partner farms" in runtime["voice"]["preferredTerms"]
