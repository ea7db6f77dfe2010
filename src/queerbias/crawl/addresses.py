"""Never let a hostile feed, page or server point the crawler inside the network.

A feed item, a redirect or a post's uri can name `127.0.0.1`, `10.0.0.5`, the cloud
metadata address `169.254.169.254`, or a host name that resolves to one of them. The
check therefore runs after DNS resolution, on every connection (redirects open new
ones), and the socket is then connected to exactly the address that was checked, so a
second, different DNS answer cannot slip in between check and connect. Addresses the
user named explicitly (a local test server, a mirror) can be allowed by `host:port`.

A host name that does not resolve fails at once with `UnresolvableHost`; retrying a
misspelt instance name for half a minute helps nobody.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable

from queerbias.errors import QueerbiasError


class RefusedAddress(QueerbiasError):
    """The host resolves to a private, loopback, link-local or otherwise internal address."""


class UnresolvableHost(QueerbiasError):
    """DNS has no address for the host."""


def host_port(host: str, port: int | None) -> str:
    """`host:port` as `AddressPolicy` allow-lists hold them (IPv6 literals without brackets)."""
    return f"{host.strip('[]').lower()}:{port}"


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class AddressPolicy:
    """Resolves hosts and refuses internal addresses except the `host:port` pairs in `allowed`."""

    def __init__(self, allowed: Iterable[str] = ()):
        self.allowed = frozenset(entry.lower() for entry in allowed)

    def resolve(self, host: str, port: int) -> list[tuple]:
        """getaddrinfo results for a TCP connection to `host:port`, all checked."""
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as err:
            raise UnresolvableHost(f"cannot resolve host {host!r}: {err.strerror}") from None
        if host_port(host, port) not in self.allowed:
            for info in infos:
                if not _is_public(info[4][0]):
                    raise RefusedAddress(f"{host} resolves to the internal address {info[4][0]}; "
                                         "not fetched")
        return infos

    def connect(self, address: tuple[str, int], timeout=socket._GLOBAL_DEFAULT_TIMEOUT,
                source_address=None, **_ignored) -> socket.socket:
        """Drop-in for `socket.create_connection` that connects only to checked addresses."""
        host, port = address
        error: OSError | None = None
        for family, kind, proto, _, sockaddr in self.resolve(host, port):
            sock = socket.socket(family, kind, proto)
            try:
                if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:
                    sock.settimeout(timeout)
                if source_address:
                    sock.bind(source_address)
                sock.connect(sockaddr)
                return sock
            except OSError as err:
                error = err
                sock.close()
        raise error or OSError(f"no address to connect to for {host}")
