"""extract_url_content over HTTP: article text and metadata, product features, refusals."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.conftest import Tenant


async def test_an_article_returns_its_main_text_title_author_and_date(tenant: Tenant, site: str) -> None:
    data = await tenant.data("extract_url_content", {"url": site + "/article.html", "response_format": "json"})
    assert data["source_type"] == "article"
    assert data["title"] == "How to run a shorter weekly meeting"
    assert data["author"] == "Jordan Lee"
    assert data["published_at"].startswith("2026-03-04")
    assert "questions rather than topics" in data["transcript"]
    assert "Copyright" not in data["transcript"]
    assert len(data["suggested_hooks"]) == 3


async def test_a_product_page_returns_features_benefits_and_usp(tenant: Tenant, site: str) -> None:
    data = await tenant.data("extract_url_content", {"url": site + "/gadget.html", "response_format": "json"})
    assert data["source_type"] == "product"
    assert "USB-C, no drivers needed" in data["features"]
    assert any("helps you hear everyone" in benefit for benefit in data["benefits"])
    assert data["usp"].startswith("The only meeting microphone")


async def test_transcripts_need_a_video_url_and_private_urls_are_refused(tenant: Tenant, site: str) -> None:
    response = await tenant.call("extract_url_content", {"url": site + "/article.html", "extract_type": "transcript"})
    assert response.json()["structuredContent"]["error"]["error_type"] == "validation_error"
    refused = await tenant.call("extract_url_content", {"url": "http://169.254.169.254/latest/meta-data/"})
    assert refused.json()["structuredContent"]["error"]["message"] == "URL resolves to a private or internal address"


async def test_a_url_that_does_not_parse_is_a_validation_error_naming_it(tenant: Tenant) -> None:
    # "]" in the host made urlsplit raise inside the handler: a 500 (found by schemathesis).
    for url in ("HttP://z]FQ_na", "https://[1.2.3]/feed"):
        response = await tenant.call("extract_url_content", {"url": url})
        assert response.status_code == 400
        assert [error["path"] for error in response.json()["error"]["field_errors"]] == ["url"]
