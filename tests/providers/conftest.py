"""A local stand-in web server (plain and TLS) for the fetcher's tests."""

from __future__ import annotations

import datetime
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from tests.local_http import serving

Route = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class LocalServer:
    """A threaded HTTP server on 127.0.0.1 whose routes tests set; it records each request's Host."""

    server: ThreadingHTTPServer
    routes: dict[str, Route] = field(default_factory=dict)
    hosts_seen: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def url(self, path: str = "/", host: str = "127.0.0.1", scheme: str = "http") -> str:
        return f"{scheme}://{host}:{self.port}{path}"

    def reply(self, path: str, body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> None:
        def route(handler: BaseHTTPRequestHandler) -> None:
            handler.send_response(status)
            for name, value in (headers or {"Content-Type": "text/html; charset=utf-8"}).items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)

        self.routes[path] = route

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.reply(path, b"", status=status, headers={"Location": location})


def _start(context: ssl.SSLContext | None) -> Iterator[LocalServer]:
    local: LocalServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            local.hosts_seen.append(self.headers.get("Host", ""))
            route = local.routes.get(self.path)
            if route is None:
                self.send_error(404)
                return
            route(self)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            local.hosts_seen.append(self.headers.get("Host", ""))
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    local = LocalServer(server=server)
    with serving(server):
        try:
            yield local
        finally:
            local.release.set()


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    """A plain-http server on 127.0.0.1."""
    yield from _start(None)


@dataclass(frozen=True)
class TestCertificate:
    ca_file: Path
    context: ssl.SSLContext


@pytest.fixture(scope="session")
def tls_certificate(tmp_path_factory: pytest.TempPathFactory) -> TestCertificate:
    """A private CA and a server certificate for the name `secure.test` only (not for 127.0.0.1)."""
    directory = tmp_path_factory.mktemp("tls")
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "toolhost test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "secure.test")]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("secure.test")]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_file = directory / "ca.pem"
    ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_file = directory / "server.pem"
    cert_file.write_bytes(
        server_cert.public_bytes(serialization.Encoding.PEM)
        + server_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file)
    return TestCertificate(ca_file=ca_file, context=context)


@pytest.fixture
def tls_server(tls_certificate: TestCertificate) -> Iterator[LocalServer]:
    """An https server on 127.0.0.1 whose certificate is valid for `secure.test` only."""
    yield from _start(tls_certificate.context)
