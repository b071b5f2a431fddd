"""The one SSRF-safe fetcher (CATALOG.md §1.14): every URL toolhost reads or posts to goes through it.

Each hop (the first request and every redirect) is parsed, checked and resolved once; every address
the name resolves to must be public (or allowlisted), and the connection is then made to that checked
address, never to a second resolution of the name, so DNS rebinding cannot swap the target. TLS is
still verified against the host name (the SNI and certificate check use the name, the socket the IP).

Kept as one module past 500 lines on purpose: the address checks, the pinned connection and the redirect loop
are one security boundary, reviewed together.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
import socket
import ssl
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from toolhost.db.session import ensure_no_open_transaction
from toolhost.platform.results import UpstreamFailed, ValidationFailed

if TYPE_CHECKING:
    from toolhost.config import FetchSettings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

PRIVATE_ADDRESS = "URL resolves to a private or internal address"
# The operator settings that lift the two refusals (config.FetchSettings), named in them so the fix is findable.
ALLOW_SETTING = "TOOLHOST_FETCH__ALLOW"
ALLOW_HTTP_SETTING = "TOOLHOST_FETCH__ALLOW_HTTP"
PRIVATE_RECOVERY = (
    f"use a public http(s) URL; an operator lets toolhost reach private hosts or networks by listing them in "
    f"the setting {ALLOW_SETTING} (a JSON list of host names or CIDRs, e.g. '[\"10.0.0.0/8\"]')"
)
HTTP_RECOVERY = (
    f"use an https URL; an operator allows plain http to the hosts listed in {ALLOW_SETTING} with the setting "
    f"{ALLOW_HTTP_SETTING}=true"
)
# Targets a keep-alive fetcher keeps a client for: a worker's connectors talk to a handful of API hosts.
KEPT_CLIENTS = 32
REFUSED_PORTS = frozenset({22, 23, 25, 110, 143, 445, 3306, 5432, 6379, 11211, 27017})
REFUSED_HOST_NAMES = frozenset(
    {
        "localhost",
        "localhost.localdomain",
        "local",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
REFUSED_IPV4_NETWORKS = tuple(
    ipaddress.IPv4Network(network)
    for network in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "192.0.0.0/24",
        "198.18.0.0/15",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
)
REFUSED_IPV6_NETWORKS = tuple(
    ipaddress.IPv6Network(network)
    for network in (
        "::/128",
        "::1/128",
        "fe80::/10",
        "fc00::/7",
        "ff00::/8",
        "fec0::/10",
        # Local-use NAT64 (RFC 8215): a site's own translator, which places the IPv4 address wherever its prefix
        # length puts it (RFC 6052), so no one position can be checked; it is never a public destination.
        "64:ff9b:1::/48",
    )
)
# IPv6 prefixes that carry an IPv4 address in their low 32 bits: IPv4-compatible (::a.b.c.d),
# IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d, RFC 2765), NAT64 (64:ff9b::a.b.c.d).
# 6to4 (2002::/16) carries it in bits 16-48; Teredo (2001::/32) a server in bits 32-64 and a client,
# inverted, in the low 32 (the standard library decodes both).
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
IPV4_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
UNICODE_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
LEGACY_IPV4_PART = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
USER_AGENT = "toolhost-fetcher/0.1"
CHUNK_BYTES = 64 * 1024
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})


@dataclass(frozen=True)
class FetchedResponse:
    """A fetched page or reply: the final URL after redirects, its status, headers and body."""

    url: str
    status: int
    headers: dict[str, str]
    content: bytes

    @property
    def content_type(self) -> str:
        """The media type without parameters, lower-case ("" when the server sent none)."""
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @cached_property
    def text(self) -> str:
        """The body decoded with the charset the server or the document declares, else UTF-8."""
        for charset in (_header_charset(self.headers.get("content-type", "")), _meta_charset(self.content)):
            if charset:
                try:
                    return self.content.decode(charset, errors="replace")
                except LookupError:
                    continue
        return self.content.decode("utf-8", errors="replace")

    @property
    def ok(self) -> bool:
        """Whether the status is 2xx."""
        return 200 <= self.status < 300

    def ensure_success(self) -> FetchedResponse:
        """Itself when 2xx; otherwise the upstream_error a caller reports for a page that failed."""
        if not self.ok:
            raise UpstreamFailed(
                f"{_host_of(self.url)} answered HTTP {self.status}", provider="fetch", status=self.status
            )
        return self


@dataclass(frozen=True, slots=True)
class CheckedTarget:
    """One hop after its checks: the parsed URL, its host name and the addresses it may connect to."""

    url: httpx.URL
    host: str
    port: int
    addresses: tuple[IPAddress, ...]


async def resolve_host(host: str, port: int) -> list[str]:
    """All A/AAAA answers for a name (the system resolver); tests replace this function."""
    loop = asyncio.get_running_loop()
    answers = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(answer[4][0]) for answer in answers]


class Fetcher:
    """Fetches URLs for every domain, failing closed on anything that could reach inside the network."""

    def __init__(self, settings: FetchSettings, *, keep_alive: bool = False) -> None:
        """`keep_alive` keeps a client per checked target for reuse (a worker's connectors call the same few
        APIs all day: a new TCP and TLS connection per call cost more than the call); close it with `aclose`."""
        self.settings = settings
        self._keep_alive = keep_alive
        self._clients: dict[tuple[str, str, int, IPAddress], httpx.AsyncClient] = {}
        self._allowed_hosts: set[str] = set()
        self._allowed_networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in settings.allow:
            entry = entry.strip().lower().rstrip(".")
            if not entry:
                continue
            try:
                self._allowed_networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                self._allowed_hosts.add(entry)

    async def get(
        self,
        url: str,
        *,
        max_bytes: int | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> FetchedResponse:
        """GETs a URL, following up to `max_redirects` redirects, each re-checked and re-pinned."""
        ensure_no_open_transaction("a fetch")
        limit = max_bytes if max_bytes is not None else self.settings.max_page_bytes
        seconds = timeout if timeout is not None else self.settings.total_timeout
        return await self._with_deadline(
            self._follow(url, limit=limit, headers=headers or {}, timeout=seconds), url, seconds
        )

    async def post(
        self,
        url: str,
        *,
        content: bytes,
        headers: dict[str, str] | None = None,
        https_only: bool = True,
        timeout: float | None = None,
    ) -> FetchedResponse:
        """POSTs a body (webhooks, connector APIs); redirects are not followed, a 3xx is returned as is."""
        ensure_no_open_transaction("a fetch")
        seconds = timeout if timeout is not None else self.settings.total_timeout
        target = await self.check_target(url, https_only=https_only)
        return await self._with_deadline(
            self._send(
                "POST",
                target,
                headers=headers or {},
                content=content,
                limit=self.settings.max_page_bytes,
                timeout=seconds,
            ),
            url,
            seconds,
        )

    async def request(
        self,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: dict[str, str] | None = None,
        https_only: bool = True,
        timeout: float | None = None,
    ) -> FetchedResponse:
        """Any method, one checked and pinned hop, no redirects (connector APIs: PUT uploads, DELETE).

        Added for the connectors (distribution domain): unlike `get`, a redirect is returned as is, so a
        bearer token is never forwarded to a second host.
        """
        ensure_no_open_transaction("a fetch")
        seconds = timeout if timeout is not None else self.settings.total_timeout
        target = await self.check_target(url, https_only=https_only)
        return await self._with_deadline(
            self._send(
                method.upper(),
                target,
                headers=headers or {},
                content=content if content or method.upper() in ("POST", "PUT", "PATCH") else None,
                limit=self.settings.max_page_bytes,
                timeout=seconds,
            ),
            url,
            seconds,
        )

    async def check_url(self, url: str, *, https_only: bool = False) -> None:
        """Raises ValidationFailed when the URL may not be fetched; resolves the name to check it."""
        await self.check_target(url, https_only=https_only)

    async def check_target(self, url: str, *, https_only: bool = False) -> CheckedTarget:
        """Every rule of CATALOG.md §1.14 for one hop; returns the addresses the connection may use."""
        ensure_no_open_transaction("a name lookup")
        parsed, host, port = self._parse(url, https_only=https_only)
        literal = _ip_literal(host)
        if literal is not None:
            addresses: list[IPAddress] = [literal]
        else:
            addresses = await self._resolve(host, port)
        if not (host in self._allowed_hosts or all(self._address_allowed(address) for address in addresses)):
            raise ValidationFailed(PRIVATE_ADDRESS, recover_with=PRIVATE_RECOVERY)
        return CheckedTarget(url=parsed, host=host, port=port, addresses=tuple(addresses))

    def _parse(self, url: str, *, https_only: bool) -> tuple[httpx.URL, str, int]:
        if not url or len(url) > 2048:
            raise ValidationFailed("URL must be 1 to 2,048 characters")
        if any(character.isspace() or ord(character) < 0x20 or character == "\\" for character in url):
            raise ValidationFailed("URL contains whitespace, control characters or backslashes")
        try:
            split = urlsplit(url.translate(UNICODE_DOTS))
        except ValueError as error:
            # A bracket out of place in the host ("a]b", "[a]"): from an argument or a redirect alike.
            raise ValidationFailed("URL is not valid") from error
        scheme = split.scheme.lower()
        if scheme not in ("http", "https"):
            raise ValidationFailed("only http and https URLs can be fetched")
        if "@" in split.netloc:
            raise ValidationFailed("URL must not carry credentials (user:password@)")
        try:
            explicit_port = split.port
        except ValueError as error:
            raise ValidationFailed("URL port is not valid") from error
        legacy = _legacy_ipv4(split.hostname or "")
        if legacy is not None:
            # 2130706433, 0x7f.1 and 0177.0.0.1 all mean 127.0.0.1; check and connect to that canonical form.
            netloc = str(legacy) + (f":{explicit_port}" if explicit_port is not None else "")
            url = urlunsplit((scheme, netloc, split.path, split.query, split.fragment))
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, ValueError) as error:
            raise ValidationFailed("URL is not valid") from error
        if parsed.userinfo:
            raise ValidationFailed("URL must not carry credentials (user:password@)")
        host = parsed.raw_host.decode("ascii").lower().rstrip(".")
        if not host:
            raise ValidationFailed("URL has no host")
        port = parsed.port or (443 if scheme == "https" else 80)
        if not 0 < port < 65536:
            raise ValidationFailed("URL port is not valid")
        if port in REFUSED_PORTS:
            raise ValidationFailed(f"port {port} is refused")
        if host in REFUSED_HOST_NAMES or host.endswith(".localhost"):
            raise ValidationFailed(PRIVATE_ADDRESS, recover_with=PRIVATE_RECOVERY)
        if scheme == "http" and https_only and not (self.settings.allow_http and self._host_allowlisted(host)):
            raise ValidationFailed("only https URLs are accepted here", recover_with=HTTP_RECOVERY)
        return parsed, host, port

    async def _resolve(self, host: str, port: int) -> list[IPAddress]:
        try:
            answers = await resolve_host(host, port)
        except (OSError, UnicodeError) as error:
            raise ValidationFailed(f"URL host {host} does not resolve") from error
        addresses: list[IPAddress] = []
        for answer in answers:
            try:
                address = ipaddress.ip_address(answer.split("%", 1)[0])
            except ValueError as error:
                raise ValidationFailed(f"URL host {host} resolves to an unusable address") from error
            if address not in addresses:
                addresses.append(address)
        if not addresses:
            raise ValidationFailed(f"URL host {host} does not resolve")
        return addresses

    def _host_allowlisted(self, host: str) -> bool:
        literal = _ip_literal(host)
        if literal is not None:
            return any(literal in network for network in self._allowed_networks)
        return host in self._allowed_hosts

    def _address_allowed(self, address: IPAddress) -> bool:
        if any(address.version == network.version and address in network for network in self._allowed_networks):
            return True
        return is_public_address(address)

    async def _with_deadline(
        self, operation: Coroutine[Any, Any, FetchedResponse], url: str, seconds: float
    ) -> FetchedResponse:
        try:
            async with asyncio.timeout(seconds):
                return await operation
        except TimeoutError as error:
            raise UpstreamFailed(f"{_host_of(url)} did not answer within {seconds:g} s", provider="fetch") from error

    async def _follow(self, url: str, *, limit: int, headers: dict[str, str], timeout: float) -> FetchedResponse:
        current = url
        first_host: str | None = None
        for _ in range(self.settings.max_redirects + 1):
            target = await self.check_target(current)
            first_host = first_host or target.host
            if target.host != first_host:
                # credentials meant for the first site never follow a redirect to another one
                headers = {k: v for k, v in headers.items() if k.lower() not in CREDENTIAL_HEADERS}
            response = await self._send("GET", target, headers=headers, content=None, limit=limit, timeout=timeout)
            location = response.headers.get("location")
            if response.status not in REDIRECT_STATUSES or not location:
                return response
            try:
                current = str(target.url.join(location))
            except (httpx.InvalidURL, ValueError) as error:
                raise UpstreamFailed(f"{target.host} redirected to an invalid URL", provider="fetch") from error
        raise UpstreamFailed(
            f"more than {self.settings.max_redirects} redirects from {_host_of(url)}", provider="fetch"
        )

    async def _send(
        self,
        method: str,
        target: CheckedTarget,
        *,
        headers: dict[str, str],
        content: bytes | None,
        limit: int,
        timeout: float,
    ) -> FetchedResponse:
        last_error: httpx.HTTPError | None = None
        for address in target.addresses:
            try:
                return await self._send_to(
                    method, target, address, headers=headers, content=content, limit=limit, timeout=timeout
                )
            except httpx.ConnectError as error:
                last_error = error  # the next checked address of the same name may answer
            except httpx.TimeoutException as error:
                raise UpstreamFailed(f"{target.host} did not answer within {timeout:g} s", provider="fetch") from error
            except httpx.HTTPError as error:
                raise UpstreamFailed(f"fetching from {target.host} failed", provider="fetch") from error
        raise UpstreamFailed(f"could not connect to {target.host}", provider="fetch") from last_error

    async def _send_to(
        self,
        method: str,
        target: CheckedTarget,
        address: IPAddress,
        *,
        headers: dict[str, str],
        content: bytes | None,
        limit: int,
        timeout: float,
    ) -> FetchedResponse:
        pinned = target.url.copy_with(host=str(address))
        default_port = 443 if target.url.scheme == "https" else 80
        host_header = target.url.raw_host.decode("ascii")
        if ":" in host_header:
            host_header = f"[{host_header}]"
        if target.port != default_port:
            host_header = f"{host_header}:{target.port}"
        request_headers = {"user-agent": USER_AGENT, **{k.lower(): v for k, v in headers.items()}}
        request_headers["host"] = host_header
        extensions = {"sni_hostname": target.host} if target.url.scheme == "https" else {}
        request_timeout = httpx.Timeout(timeout, connect=min(timeout, self.settings.connect_timeout))
        async with self._client_for(target, address) as client:
            request = client.build_request(
                method, pinned, headers=request_headers, content=content, extensions=extensions, timeout=request_timeout
            )
            response = await client.send(request, stream=True)
            try:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise UpstreamFailed("page too large", provider="fetch", max_bytes=limit)
                body = bytearray()
                async for chunk in response.aiter_bytes(CHUNK_BYTES):
                    body.extend(chunk)
                    if len(body) > limit:
                        raise UpstreamFailed("page too large", provider="fetch", max_bytes=limit)
            finally:
                await response.aclose()
        merged: dict[str, str] = {}
        for name, value in response.headers.multi_items():
            key = name.lower()
            merged[key] = f"{merged[key]}, {value}" if key in merged else value
        return FetchedResponse(url=str(target.url), status=response.status_code, headers=merged, content=bytes(body))

    @contextlib.asynccontextmanager
    async def _client_for(self, target: CheckedTarget, address: IPAddress) -> AsyncIterator[httpx.AsyncClient]:
        """A client whose connections go to one checked address for one name only: a pooled connection opened
        for one name must never serve another name that happens to share the address (its certificate was
        checked for the first name only). Kept for reuse with `keep_alive`, up to KEPT_CLIENTS targets (the
        rest get a client of their own per request); otherwise closed after the request."""
        key = (target.url.scheme, target.host, target.port, address)
        client = self._clients.get(key)
        if client is not None:
            yield client
            return
        # trust_env=False so that proxy variables cannot route around the pinned address.
        client = httpx.AsyncClient(verify=self._tls_context(), trust_env=False, follow_redirects=False)
        if self._keep_alive and len(self._clients) < KEPT_CLIENTS:
            self._clients[key] = client
            yield client
            return
        async with client:
            yield client

    async def aclose(self) -> None:
        """Closes the clients kept for reuse."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()

    def _tls_context(self) -> ssl.SSLContext:
        bundle = self.settings.ca_bundle
        return _shared_tls_context(str(bundle) if bundle else None, bundle.stat().st_mtime_ns if bundle else None)


# One context per CA bundle (and version of its file) for the process: loading the system's certificates costs
# ~60 ms of CPU, which a Fetcher built per call paid on its first https request. A context serves any number of
# connections at once.
@lru_cache(maxsize=8)
def _shared_tls_context(ca_bundle: str | None, ca_bundle_modified: int | None) -> ssl.SSLContext:
    # hostname checking stays on: the socket goes to the pinned IP, the certificate matches the name
    context = ssl.create_default_context()
    if ca_bundle:
        context.load_verify_locations(cafile=ca_bundle)
    return context


def is_public_address(address: IPAddress) -> bool:
    """Whether an address is outside every refused range, IPv4 embedded in IPv6 included."""
    if isinstance(address, ipaddress.IPv4Address):
        return not any(address in network for network in REFUSED_IPV4_NETWORKS)
    if any(address in network for network in REFUSED_IPV6_NETWORKS):
        return False
    return all(is_public_address(embedded) for embedded in _embedded_ipv4(address))


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses a packet to `address` may end up at."""
    if address in IPV4_MAPPED or address in IPV4_TRANSLATED or address in IPV4_COMPATIBLE or address in NAT64:
        return (ipaddress.IPv4Address(int(address) & 0xFFFFFFFF),)
    if address in SIX_TO_FOUR:
        return (ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF),)
    return address.teredo or ()


def _ip_literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return _legacy_ipv4(host)


def _legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address of the inet_aton forms (decimal 2130706433, hex 0x7f.1, octal 0177.0.0.1, short 127.1)."""
    host = host.lower().rstrip(".")
    parts = host.split(".")
    if not host or len(parts) > 4 or not all(LEGACY_IPV4_PART.match(part) for part in parts):
        return None
    values: list[int] = []
    for part in parts:
        if part.startswith("0x"):
            values.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            if any(digit in "89" for digit in part):
                return None
            values.append(int(part, 8))
        else:
            values.append(int(part))
    *leading, last = values
    if any(value > 255 for value in leading) or last >= 256 ** (5 - len(values)):
        return None
    number = last
    for index, value in enumerate(leading):
        number |= value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def _host_of(url: str) -> str:
    try:
        return urlsplit(url).hostname or "the site"
    except ValueError:
        return "the site"


def _header_charset(content_type: str) -> str | None:
    match = re.search(r"charset=[\"']?([\w.:-]+)", content_type, re.IGNORECASE)
    return match.group(1) if match else None


def _meta_charset(content: bytes) -> str | None:
    match = re.search(rb"<meta[^>]+charset=[\"']?([\w.:-]+)", content[:4096], re.IGNORECASE)
    return match.group(1).decode("ascii") if match else None
