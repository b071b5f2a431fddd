"""extract_brand over HTTP on the ways people build pages that bench/brand_extraction.py found it misreading:
a dark theme beside the light one, colours in HTML attributes, "for X in Y who Z", badges and accreditations,
press in quotations and lists, a site's own pages that no keyword names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tests.domains.distribution.standins import serve

if TYPE_CHECKING:
    from starlette.requests import Request

    from tests.conftest import Tenant


async def extract_html(tenant: Tenant, html: str) -> dict[str, Any]:
    return await tenant.data("extract_brand", {"html": html, "response_format": "json"})


async def test_a_dark_theme_block_does_not_replace_the_sites_own_colours(tenant: Tenant) -> None:
    html = """<html><head><style>
    :root { --background: 0 0% 100%; --foreground: 222.2 47.4% 11.2%; --primary: 262.1 83.3% 57.8%; }
    .dark { --background: 224 71.4% 4.1%; --foreground: 210 20% 98%; --primary: 263.4 70% 50.4%; }
    @media (prefers-color-scheme: dark) { body { background: #000000; color: #eeeeee; } }
    body { background-color: hsl(var(--background)); color: hsl(var(--foreground)); }
    .btn-primary { background-color: hsl(var(--primary)); color: #fff; }
    </style></head>
    <body><h1>Ledgers that close themselves</h1><a class="btn-primary" href="/t">Start</a></body></html>"""
    palette = (await extract_html(tenant, html))["brand_context"]["colorPalette"]
    assert palette["primary"] == "#7c3aed"
    assert palette["background"] == "#ffffff"
    assert palette["text"] == "#0f172a"


async def test_colours_given_as_html_attributes_are_read_like_styles(tenant: Tenant) -> None:
    html = """<html><body bgcolor="#ffffff" text="#333333" link="#1565c0">
    <table width="100%" bgcolor="#1565c0">
    <tr><td><font color="#ffffff" size="6">Castle Plumbing</font></td></tr></table>
    <p>Boiler broken? We can usually be with you within two hours.</p></body></html>"""
    palette = (await extract_html(tenant, html))["brand_context"]["colorPalette"]
    assert (palette["primary"], palette["text"], palette["background"]) == ("#1565c0", "#333333", "#ffffff")


async def test_the_audience_runs_through_where_they_are_to_what_they_want(tenant: Tenant) -> None:
    cases = {
        "We look after families in Headingley who want a dentist that explains things.": (
            "families in Headingley who want a dentist that explains things"
        ),
        # the tagger reads "support" after "We" as a noun
        "We support families in Hull who are struggling to afford food, with no referral needed.": (
            "families in Hull who are struggling to afford food"
        ),
        "We act for employees and individuals who need a solicitor on their side, not a call centre.": (
            "employees and individuals who need a solicitor on their side"
        ),
        "We welcome PhD students who enjoy both fieldwork and code.": "PhD students who enjoy both fieldwork and code",
    }
    for sentence, audience in cases.items():
        data = await extract_html(tenant, f"<html><body><p>{sentence}</p></body></html>")
        assert data["audience"]["primary"] == audience, sentence
    # one passing "for X" says nothing about who the brand is for
    passing = await extract_html(tenant, "<html><body><p>There are always three pastas, one for vegetarians.</p>")
    assert passing["audience"]["primary"] == ""


async def test_badges_accreditations_memberships_and_grants_are_found_by_their_names(tenant: Tenant) -> None:
    html = """<html><body>
    <h2>Why patients trust us</h2>
    <ul><li>Rated Outstanding by the Care Quality Commission</li><li>Members of the British Dental Association</li>
    <li>Invisalign Gold Provider</li><li>Gas Safe registered (no. 512398)</li><li>Which? Trusted Trader</li></ul>
    <p><b>Our accreditations:</b></p>
    <div>Bosch eBike Certified Dealer · Cytech Level 3 accredited technicians</div>
    <p>The lab is funded by a European Research Council Starting Grant. A Living Wage Employer.</p>
    <table><tr><td>White filling</td><td>Band 2</td></tr></table>
    <p>Registered charity no. 1187654.</p>
    </body></html>"""
    awards = (await extract_html(tenant, html))["brand_context"]["socialProof"]["awards"]
    for name in (
        "Rated Outstanding by the Care Quality Commission",
        "Members of the British Dental Association",
        "Invisalign Gold Provider",
        "Gas Safe registered",
        "Which? Trusted Trader",
        "Bosch eBike Certified Dealer",
        "Cytech Level 3 accredited technicians",
        "European Research Council Starting Grant",
        "Living Wage Employer",
    ):
        assert name in awards, (name, awards)
    assert not {"Band 2", "Our accreditations", "Registered charity", "Certified Dealer"} & set(awards), awards


async def test_press_is_read_from_quotations_press_lists_and_reported_in(tenant: Tenant) -> None:
    html = """<html><body>
    <blockquote>"The best plate of pappardelle in the South West." <cite>The Guardian</cite></blockquote>
    <blockquote>"I used to dread the dentist." <cite>Helen, patient since 2016</cite></blockquote>
    <section class="press"><p>As seen in</p><ul><li>Vogue</li><li>ELLE UK</li></ul></section>
    <p>Our work has been reported in <em>The Law Society Gazette</em> and the <em>Bristol Post</em>.</p>
    </body></html>"""
    press = (await extract_html(tenant, html))["brand_context"]["socialProof"]["pressMentions"]
    assert set(press) == {"The Guardian", "Vogue", "ELLE UK", "The Law Society Gazette", "Bristol Post"}


async def test_the_sites_own_pages_are_read_even_when_no_keyword_names_them(tenant: Tenant) -> None:
    async def home(request: Request) -> HTMLResponse:
        return HTMLResponse(
            '<html><head><title>Spoke Cycles</title></head><body><nav><a href="/workshop.html">Workshop</a>'
            '<a href="/privacy">Privacy</a></nav><p>Bikes fixed by tomorrow morning in Kendal.</p></body></html>'
        )

    async def workshop(request: Request) -> HTMLResponse:
        return HTMLResponse(
            "<html><body><p>We welcome beginners who want to learn to fix their own bikes.</p></body></html>"
        )

    async def privacy(request: Request) -> HTMLResponse:
        return HTMLResponse("<html><body><p>We help lawyers who read privacy notices.</p></body></html>")

    app = Starlette(routes=[Route("/", home), Route("/workshop.html", workshop), Route("/privacy", privacy)])
    async with serve(app) as base_url:
        data = await tenant.data("extract_brand", {"url": base_url + "/", "response_format": "json"})
    assert data["audience"]["primary"] == "beginners who want to learn to fix their own bikes"
    assert data["brand_context"]["confidence"]["pagesScraped"] == 2


async def test_a_monochrome_site_whose_only_colour_is_a_hairline_has_its_ink_as_primary(tenant: Tenant) -> None:
    html = """<html><head><style>
    body { background: #ffffff; color: #111111; }
    .masthead { border-bottom: 1px solid #111111; }
    a.underline { color: #111111; border-bottom: 1px solid #a8865b; }
    </style></head><body><header class="masthead">MAISON</header>
    <p>Cut and sewn in our studio.</p><a class="underline" href="/shop">Shop</a></body></html>"""
    palette = (await extract_html(tenant, html))["brand_context"]["colorPalette"]
    assert palette["primary"] == palette["text"] == "#111111"
    assert palette["accent"] == "#a8865b"
