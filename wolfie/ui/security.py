"""What keeps the explorer's pages safe to show untrusted memory text (docs/explorer.md).

- **Content-Security-Policy**: scripts, styles and images only from the server itself,
  no inline script or style, no plugin, no framing (``frame-ancestors 'none'``), forms
  post only back here. Jinja2 autoescapes every value; the policy is the second wall.
- **CSRF**: every form that changes state carries a token derived from a secret made at
  start-up (HMAC-SHA256), and a POST from another origin is refused. The token is the
  one guard a cookie session would need; with the bearer header (which a cross-site
  form can't send) it is a second one.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping

from packs.errors import CsrfRefused

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; "
    "frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # "no-referrer" makes a form's Origin "null"
    "Cache-Control": "no-store",
}


class Csrf:
    """This server's CSRF token and its check."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)
        self.token = hmac.new(self._secret, b"wolfie-ui-form", hashlib.sha256).hexdigest()

    def check(self, form: Mapping[str, str], headers: Mapping[str, str]) -> None:
        origin = headers.get("origin")
        host = headers.get("host", "")
        if origin and origin.split("://", 1)[-1] != host:
            raise CsrfRefused(f"A form from origin {origin!r} is refused; post from this page.")
        if not hmac.compare_digest(form.get("csrf", ""), self.token):
            raise CsrfRefused("The form's CSRF token is missing or wrong; reload the page.")
