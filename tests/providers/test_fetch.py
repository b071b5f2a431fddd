"""The SSRF-safe fetcher: hostile URLs are refused; allowlisted local servers are fetched, pinned, capped."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import pytest
from tests.local_http import serving

from toolhost.config import FetchSettings, load_settings
from toolhost.platform.results import UpstreamFailed, ValidationFailed
from toolhost.providers import fetch
from toolhost.providers.fetch import PRIVATE_ADDRESS, Fetcher, is_public_address

if TYPE_CHECKING:
    from tests.providers.conftest import LocalServer, TestCertificate

FAKE_DNS: dict[str, list[str]] = {
    "internal.example": ["10.0.0.1"],
    "mixed.example": ["93.184.216.34", "10.0.0.1"],
    "mapped.example": ["::ffff:169.254.169.254"],
    "nat64.example": ["64:ff9b::a9fe:a9fe"],
    "sixtofour.example": ["2002:a00:1::1"],
    "public-nat64.example": ["64:ff9b::5db8:d822"],
    "public.example": ["93.184.216.34"],
    "empty.example": [],
    "site.test": ["127.0.0.1"],
    "secure.test": ["127.0.0.1"],
    "wrong.test": ["127.0.0.1"],
}


@pytest.fixture(autouse=True)
def fake_resolver(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """No test reaches a real resolver; every lookup is recorded."""
    lookups: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        lookups.append(host)
        if host not in FAKE_DNS:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return FAKE_DNS[host]

    monkeypatch.setattr(fetch, "resolve_host", resolve)
    return lookups


HOSTILE_ADDRESS_URLS = [
    "http://127.0.0.1/",
    "http://2130706433/",  # decimal
    "http://0x7f000001/",  # hex
    "http://0177.0.0.1/",  # octal
    "http://0x7f.1/",  # mixed short form
    "http://127.1/",
    "http://0251.0376.0251.0376/latest/meta-data/",  # octal 169.254.169.254
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::ffff:a9fe:a9fe]/",  # mapped 169.254.169.254, hex spelling
    "http://[::127.0.0.1]/",  # IPv4-compatible
    "http://[::ffff:0:7f00:1]/",  # IPv4-translated 127.0.0.1 (RFC 2765)
    "http://[::ffff:0:a9fe:a9fe]/",  # IPv4-translated 169.254.169.254
    "http://[64:ff9b::a00:1]/",  # NAT64 of 10.0.0.1
    "http://[64:ff9b::7f00:1]/",  # NAT64 of 127.0.0.1
    "http://[64:ff9b::127.0.0.1]/",  # NAT64, dotted spelling
    "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of 169.254.169.254
    "http://[64:ff9b::c0a8:101]/",  # NAT64 of 192.168.1.1
    "http://[64:ff9b:1::a00:1]/",  # the local-use NAT64 prefix (RFC 8215): never a public destination
    "http://[64:ff9b:1:ffff::5db8:d822]/",
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[2002:a9fe:a9fe::1]/",  # 6to4 of 169.254.169.254
    "http://[2002:a00:1:ffff::1]/",  # 6to4 of 10.0.0.1, any subnet and interface id
    "http://[2002:c0a8:101::]/",  # 6to4 of 192.168.1.1
    "http://[2001:0:5db8:d822::f5ff:fffe]/",  # Teredo whose client is 10.0.0.1 (stored inverted)
    "http://[2001:0:a00:1::a247:2bdd]/",  # Teredo whose server is 10.0.0.1
    "http://[fd00:ec2::254]/",  # AWS IMDS over IPv6
    "http://[::1]/",
    "http://[::]/",
    "http://[fe80::1]/",
    "http://[ff02::1]/",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://0.0.0.0/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "http://198.18.0.1/",
    "http://192.0.0.170/",
    "http://127\u30020\u30020\u30021/",  # ideographic full stops
    "https://internal.example/",  # a name whose answer is 10.0.0.1
    "https://mixed.example/",  # one public and one private answer
    "https://mapped.example/",  # an AAAA answer that maps a link-local IPv4
    "https://nat64.example/",  # an AAAA answer that is NAT64 of the metadata address
    "https://sixtofour.example/",  # an AAAA answer that is 6to4 of 10.0.0.1
    "http://localhost:8080/",
    "http://api.localhost/",
    "http://localhost.localdomain/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://metadata.goog/",
    "http://instance-data/",
    "http://instance-data.ec2.internal/",
]

HOSTILE_RULE_URLS = [
    ("file:///etc/passwd", "only http and https"),
    ("gopher://127.0.0.1:70/", "only http and https"),
    ("ftp://public.example/", "only http and https"),
    ("http://user:secret@public.example/", "credentials"),
    ("http://@public.example/", "credentials"),
    ("http://public.example:6379/", "port 6379"),
    ("http://public.example:22/", "port 22"),
    ("http://public.example:5432/", "port 5432"),
    ("http://public.example:99999/", "port is not valid"),
    ("http://public.example\\@127.0.0.1/", "backslashes"),
    ("http://nowhere.example/", "does not resolve"),
    ("http://public.example]/", "URL is not valid"),
    ("http://[public.example]/", "URL is not valid"),
    ("http://empty.example/", "does not resolve"),
]


@pytest.mark.parametrize("url", HOSTILE_ADDRESS_URLS)
async def test_a_url_reaching_an_internal_address_is_refused(url: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        await Fetcher(FetchSettings()).get(url)
    assert refused.value.message == PRIVATE_ADDRESS


@pytest.mark.parametrize(("url", "rule"), HOSTILE_RULE_URLS)
async def test_a_url_breaking_a_rule_is_refused_naming_the_rule(url: str, rule: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        await Fetcher(FetchSettings()).get(url)
    assert rule in refused.value.message


async def test_ip_literals_are_checked_without_asking_the_resolver(fake_resolver: list[str]) -> None:
    for url in ("http://2130706433/", "http://[::ffff:127.0.0.1]/", "http://169.254.169.254/"):
        with pytest.raises(ValidationFailed):
            await Fetcher(FetchSettings()).check_url(url)
    assert fake_resolver == []


async def test_a_name_answering_nat64_of_a_public_address_passes_the_check() -> None:
    await Fetcher(FetchSettings()).check_url("https://public-nat64.example/")


def test_embedded_ipv4_forms_are_judged_by_their_ipv4_address() -> None:
    import ipaddress

    assert not is_public_address(ipaddress.ip_address("::ffff:10.1.2.3"))
    assert not is_public_address(ipaddress.ip_address("2002:a9fe:a9fe::1"))  # 6to4 of 169.254.169.254
    assert not is_public_address(ipaddress.ip_address("64:ff9b::10.1.2.3"))  # NAT64
    assert is_public_address(ipaddress.ip_address("64:ff9b::93.184.216.34"))  # NAT64 of a public address
    assert is_public_address(ipaddress.ip_address("2002:5db8:d822::1"))  # 6to4 of a public address
    assert is_public_address(ipaddress.ip_address("2001:0:5db8:d822::a247:2bdd"))  # Teredo, both ends public
    assert is_public_address(ipaddress.ip_address("::ffff:93.184.216.34"))
    assert is_public_address(ipaddress.ip_address("2606:4700::1111"))
    assert is_public_address(ipaddress.ip_address("93.184.216.34"))


async def test_an_allowlisted_local_server_is_fetched_with_lower_case_headers(
    local_server: LocalServer,
) -> None:
    local_server.reply(
        "/page",
        "<h1>Caf\u00e9</h1>".encode(),
        headers={"Content-Type": "text/HTML; charset=UTF-8", "X-Custom": "yes"},
    )
    response = await Fetcher(FetchSettings(allow=["127.0.0.1/32"])).get(local_server.url("/page"))
    assert response.status == 200
    assert response.content_type == "text/html"
    assert response.headers["x-custom"] == "yes"
    assert response.text == "<h1>Caf\u00e9</h1>"
    assert response.url == local_server.url("/page")


async def test_a_non_2xx_page_is_returned_and_ensure_success_reports_it(local_server: LocalServer) -> None:
    response = await Fetcher(FetchSettings(allow=["127.0.0.1"])).get(local_server.url("/missing"))
    assert response.status == 404
    with pytest.raises(UpstreamFailed) as failed:
        response.ensure_success()
    assert failed.value.details["provider"] == "fetch"


async def test_the_connection_is_pinned_to_the_checked_address_and_keeps_the_host_name(
    local_server: LocalServer, fake_resolver: list[str]
) -> None:
    local_server.reply("/", b"hello")
    response = await Fetcher(FetchSettings(allow=["site.test"])).get(local_server.url("/", host="site.test"))
    assert response.content == b"hello"
    assert local_server.hosts_seen == [f"site.test:{local_server.port}"]
    assert fake_resolver == ["site.test"]  # resolved once, checked, and that answer was used


async def test_an_allowlisted_name_does_not_open_other_names_on_the_same_address(
    local_server: LocalServer,
) -> None:
    with pytest.raises(ValidationFailed):
        await Fetcher(FetchSettings(allow=["site.test"])).get(local_server.url("/", host="secure.test"))


async def test_a_redirect_to_the_metadata_address_is_refused(local_server: LocalServer) -> None:
    local_server.redirect("/go", "http://169.254.169.254/latest/meta-data/iam/")
    with pytest.raises(ValidationFailed) as refused:
        await Fetcher(FetchSettings(allow=["127.0.0.1/32"])).get(local_server.url("/go"))
    assert refused.value.message == PRIVATE_ADDRESS
    assert local_server.hosts_seen == [f"127.0.0.1:{local_server.port}"]


async def test_a_redirect_to_a_name_resolving_inside_is_refused(local_server: LocalServer) -> None:
    local_server.redirect("/go", "https://internal.example/admin")
    with pytest.raises(ValidationFailed):
        await Fetcher(FetchSettings(allow=["127.0.0.1/32"])).get(local_server.url("/go"))


async def test_relative_redirects_are_followed_and_the_final_url_reported(local_server: LocalServer) -> None:
    local_server.redirect("/a", "/b", status=301)
    local_server.redirect("/b", "c", status=307)
    local_server.reply("/c", b"arrived")
    response = await Fetcher(FetchSettings(allow=["127.0.0.1/32"])).get(local_server.url("/a"))
    assert (response.content, response.url) == (b"arrived", local_server.url("/c"))


async def test_more_than_five_redirects_fail_upstream(local_server: LocalServer) -> None:
    for index in range(7):
        local_server.redirect(f"/{index}", f"/{index + 1}")
    local_server.reply("/7", b"too far")
    with pytest.raises(UpstreamFailed, match="redirects"):
        await Fetcher(FetchSettings(allow=["127.0.0.1/32"])).get(local_server.url("/0"))
    assert len(local_server.hosts_seen) == 6


async def test_credentials_do_not_follow_a_redirect_to_another_host(local_server: LocalServer) -> None:
    seen: list[str | None] = []

    def record(handler: BaseHTTPRequestHandler) -> None:
        seen.append(handler.headers.get("Authorization"))
        handler.send_response(200)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    local_server.redirect("/start", local_server.url("/end", host="site.test"))
    local_server.routes["/end"] = record
    fetcher = Fetcher(FetchSettings(allow=["127.0.0.1/32"]))
    await fetcher.get(local_server.url("/start"), headers={"Authorization": "Bearer abc"})
    assert seen == [None]


async def test_a_body_over_the_cap_is_refused_as_too_large(local_server: LocalServer) -> None:
    local_server.reply("/big", b"x" * 5000)
    with pytest.raises(UpstreamFailed, match="page too large"):
        await Fetcher(FetchSettings(allow=["127.0.0.1/32"])).get(local_server.url("/big"), max_bytes=4096)


async def test_a_body_without_length_is_cut_at_the_cap(local_server: LocalServer) -> None:
    def stream(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.end_headers()
        for _ in range(64):
            handler.wfile.write(b"y" * 1024)

    local_server.routes["/stream"] = stream
    fetcher = Fetcher(FetchSettings(allow=["127.0.0.1/32"], max_page_bytes=10_000))
    with pytest.raises(UpstreamFailed, match="page too large"):
        await fetcher.get(local_server.url("/stream"))


async def test_a_site_that_does_not_answer_in_time_fails_upstream(local_server: LocalServer) -> None:
    def hang(handler: BaseHTTPRequestHandler) -> None:
        local_server.release.wait(timeout=10)

    local_server.routes["/hang"] = hang
    with pytest.raises(UpstreamFailed, match="did not answer"):
        await Fetcher(FetchSettings(allow=["127.0.0.1/32"])).get(local_server.url("/hang"), timeout=0.3)


async def test_a_closed_port_fails_upstream() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(UpstreamFailed, match="could not connect"):
        await Fetcher(FetchSettings(allow=["127.0.0.1/32"])).get(f"http://127.0.0.1:{port}/")


async def test_https_only_posts_refuse_plain_http_unless_allowed_for_an_allowlisted_host(
    local_server: LocalServer,
) -> None:
    url = local_server.url("/hook")
    with pytest.raises(ValidationFailed, match="only https"):
        await Fetcher(FetchSettings(allow=["127.0.0.1/32"])).post(url, content=b"{}")
    with pytest.raises(ValidationFailed, match="only https"):
        await Fetcher(FetchSettings(allow_http=True)).post("http://public.example/hook", content=b"{}")
    response = await Fetcher(FetchSettings(allow=["127.0.0.1/32"], allow_http=True)).post(
        url, content=b'{"a": 1}', headers={"Content-Type": "application/json"}
    )
    assert (response.status, response.content) == (200, b'{"a": 1}')
    await Fetcher(FetchSettings(allow=["127.0.0.1/32"])).post(url, content=b"ok", https_only=False)


async def test_check_url_applies_the_https_only_rule() -> None:
    fetcher = Fetcher(FetchSettings())
    await fetcher.check_url("http://public.example/feed")
    with pytest.raises(ValidationFailed):
        await fetcher.check_url("http://public.example/feed", https_only=True)
    await fetcher.check_url("https://public.example/feed", https_only=True)


async def test_tls_is_verified_against_the_host_name_while_connecting_to_the_pinned_address(
    tls_server: LocalServer, tls_certificate: TestCertificate
) -> None:
    tls_server.reply("/", b"secure")
    settings = FetchSettings(allow=["127.0.0.1/32"], ca_bundle=tls_certificate.ca_file)
    response = await Fetcher(settings).get(tls_server.url("/", host="secure.test", scheme="https"))
    assert response.content == b"secure"
    for wrong_name in ("wrong.test", "127.0.0.1"):
        with pytest.raises(UpstreamFailed):
            await Fetcher(settings).get(tls_server.url("/", host=wrong_name, scheme="https"))


async def test_tls_without_the_operator_ca_is_refused(tls_server: LocalServer) -> None:
    tls_server.reply("/", b"secure")
    with pytest.raises(UpstreamFailed):
        await Fetcher(FetchSettings(allow=["127.0.0.1/32"])).get(
            tls_server.url("/", host="secure.test", scheme="https")
        )


def test_the_document_charset_is_used_when_the_header_has_none() -> None:
    body = '<meta charset="iso-8859-1"><p>na\u00efve</p>'.encode("latin-1")
    response = fetch.FetchedResponse(
        url="https://x.example/", status=200, headers={"content-type": "text/html"}, content=body
    )
    assert "na\u00efve" in response.text


async def test_a_refusal_names_the_setting_that_lifts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationFailed) as private:
        await Fetcher(FetchSettings()).check_url("http://internal.example/hook")
    assert private.value.recover_with is not None and "TOOLHOST_FETCH__ALLOW " in private.value.recover_with
    with pytest.raises(ValidationFailed) as plain:
        await Fetcher(FetchSettings()).check_url("http://public.example/hook", https_only=True)
    assert plain.value.recover_with is not None and "TOOLHOST_FETCH__ALLOW_HTTP=true" in plain.value.recover_with

    # The settings named are the ones that work.
    monkeypatch.setenv("TOOLHOST_FETCH__ALLOW", '["internal.example"]')
    monkeypatch.setenv("TOOLHOST_FETCH__ALLOW_HTTP", "true")
    allowing = load_settings(environment="test", secret_key="test-secret-not-for-production-0123456789").fetch
    await Fetcher(allowing).check_url("http://internal.example/hook", https_only=True)


@pytest.fixture
def keep_alive_server() -> Iterator[tuple[int, list[tuple[str, int]]]]:
    """An HTTP/1.1 server on 127.0.0.1 that keeps connections open; it records each POST's Host header and the
    client's port (one port per TCP connection)."""
    seen: list[tuple[str, int]] = []

    class KeepAliveHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            seen.append((self.headers.get("Host", "").split(":")[0], self.client_address[1]))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), KeepAliveHandler)
    server.daemon_threads = True
    with serving(server):
        yield server.server_address[1], seen


async def test_a_keep_alive_fetcher_reuses_one_connection_per_name_and_closes_them(
    keep_alive_server: tuple[int, list[tuple[str, int]]],
) -> None:
    port, seen = keep_alive_server
    fetcher = Fetcher(FetchSettings(allow=["site.test", "wrong.test"], allow_http=True), keep_alive=True)
    try:
        for host in ("site.test", "site.test", "wrong.test", "site.test"):
            response = await fetcher.post(f"http://{host}:{port}/hook", content=b"{}", https_only=False)
            assert response.content == b"ok"
        await fetcher.aclose()
        await fetcher.post(f"http://site.test:{port}/hook", content=b"{}", https_only=False)
    finally:
        await fetcher.aclose()
    assert [host for host, _ in seen] == ["site.test", "site.test", "wrong.test", "site.test", "site.test"]
    ports = [client_port for _, client_port in seen]
    # One connection served site.test three times; wrong.test, on the same address, had one of its own (a
    # connection opened for one name never serves another); after aclose, a new one.
    assert ports[0] == ports[1] == ports[3]
    assert ports[2] != ports[0]
    assert ports[4] not in (ports[0], ports[2])


async def test_a_fetcher_without_keep_alive_opens_a_connection_per_request(
    keep_alive_server: tuple[int, list[tuple[str, int]]],
) -> None:
    port, seen = keep_alive_server
    fetcher = Fetcher(FetchSettings(allow=["site.test"], allow_http=True))
    for _ in range(2):
        await fetcher.post(f"http://site.test:{port}/hook", content=b"{}", https_only=False)
    assert len(seen) == 2 and seen[0][1] != seen[1][1]
