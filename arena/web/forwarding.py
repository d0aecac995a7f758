"""Forwarded headers, believed only from the reverse proxies named in ``trusted_proxies``.

A proxy tells the app who the client is (``X-Forwarded-For``, ``X-Real-IP``), which host the client asked for
(``X-Forwarded-Host``, ``Forwarded``), and Gradio's own proxy names the public address (``X-Gradio-Server``). The app
counts per-address limits by the client address, and Gradio builds the page's root URL, where the page sends the
sign-in name, token and stored resume token, from the host headers. So a client must not be able to set any of them:
:class:`TrustedForwarding` removes them from every request that does not come straight from a trusted proxy, then
uvicorn's ``ProxyHeadersMiddleware`` takes the client address and scheme from a trusted proxy's headers (its rightmost
untrusted ``X-Forwarded-For`` entry, so a client cannot put an address of its choice in front). ``X-Forwarded-Proto``
is left to Gradio, which reads it only to turn ``http`` into ``https`` on the host it already has: no client can
choose a host with it, and a proxy that ends TLS needs it.

Behind a proxy (Hugging Face Spaces included) every client reaches the app from the proxy's address: without
``ARENA_TRUSTED_PROXIES`` all of them share one address for the limits, and one address's failed sign-ins throttle
everyone's. :func:`warn_untrusted_proxy` says so at start on a Space.
"""

from __future__ import annotations

import ipaddress

FORWARDED_HEADERS = frozenset({b"x-forwarded-for", b"x-forwarded-host", b"x-forwarded-port", b"x-forwarded-prefix",
                               b"x-forwarded-server", b"x-real-ip", b"forwarded", b"x-gradio-server"})


class TrustedForwarding:
    """ASGI: forwarded headers reach ``app`` only on connections from ``trusted`` (addresses or networks); uvicorn's
    proxy middleware then reads the client address and scheme from them."""

    def __init__(self, app, trusted: list[str]):
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        self.networks = [ipaddress.ip_network(entry, strict=False) for entry in trusted]
        self.app = ProxyHeadersMiddleware(app, trusted_hosts=trusted) if trusted else app

    def trusts(self, host: str | None) -> bool:
        try:
            address = ipaddress.ip_address(host or "")
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket") and not self.trusts((scope.get("client") or (None,))[0]):
            scope = dict(scope, headers=[(name, value) for name, value in scope["headers"]
                                         if name not in FORWARDED_HEADERS])
        return await self.app(scope, receive, send)


def warn_untrusted_proxy(trusted: list[str], environ=None) -> bool:
    """Log a warning when the app runs on Hugging Face Spaces (``SPACE_ID`` is set) without trusted proxies: every
    client then shares the proxy's address. True when it warned."""
    import logging
    import os

    environ = os.environ if environ is None else environ
    if trusted or not environ.get("SPACE_ID"):
        return False
    logging.getLogger(__name__).warning(
        "running on Hugging Face Spaces without ARENA_TRUSTED_PROXIES: every client reaches the app from the proxy's "
        "address, so the per-address limits and the sign-in throttle count all clients together (one person's "
        "failed sign-ins make everyone wait). Set ARENA_TRUSTED_PROXIES to the address the refusal lines in this "
        "log name.")
    return True
