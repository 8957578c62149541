"""Credential screening for the few free-text fields a preview copies (titles, app name, ids).

The preview never reads prompts, code, headers or variables at all; this screen is the second
line of defence for text that *is* copied. It masks spans that look like credentials: known API
key shapes, bearer/basic tokens, JWTs, ``key=value`` secrets, URLs carrying user info or secret
query parameters, and long random-looking tokens.
"""

from __future__ import annotations

import itertools
import re

MASK = "[masked]"

_TOKEN_CHARS = r"A-Za-z0-9_\-+/=."

_PATTERNS: tuple[re.Pattern[str], ...] = (
    # URLs with user info (scheme://user:pass@host) or secret-looking query parameters.
    re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s/@]*@\S*"),
    re.compile(
        r"(?i)\b[a-z][a-z0-9+.\-]*://\S*?[?&;](?:[a-z0-9_\-]*(?:key|token|secret|passw(?:or)?d|"
        r"pwd|auth|sig|signature|credential|session)[a-z0-9_\-]*)=\S*"
    ),
    # Authorization schemes followed by a credential: after "Bearer" any token (letters only
    # too), after the common words "basic" and "token" one holding a digit or a sign.
    re.compile(r"(?i)\b(?:bearer|apikey)\s*[:=]?\s+[A-Za-z0-9_\-+/=.~]{8,}"),
    re.compile(
        r"(?i)\b(?:basic|token)\s*[:=]?\s+"
        r"(?=[A-Za-z0-9_\-+/=.~]*[0-9+/=._\-])[A-Za-z0-9_\-+/=.~]{8,}"
    ),
    # name = value / name: value where the name says it is secret.
    re.compile(
        r"(?i)\b[a-z0-9_\-]*(?:api[_\-]?key|secret|passw(?:or)?d|passwd|pwd|pass|token|"
        r"access[_\-]?key|private[_\-]?key|credential)s?\s*[:=]\s*\S+"
    ),
    # A secret named in words before it, without a sign ("aws secret PVsf...").
    re.compile(
        r"(?i)\b(?:secret|private)(?:[\s_\-]+(?:access|api))?(?:[\s_\-]+key)?\s+"
        r"(?=[A-Za-z0-9/+=_\-]*[0-9/+=])[A-Za-z0-9/+=_\-]{16,}"
    ),
    # Well-known key shapes: OpenAI/Anthropic/Stripe/Dify/GitHub/Slack/Google/AWS/GitLab/HF.
    re.compile(
        r"\b(?:sk|pk|rk|ak)[_\-](?:[A-Za-z0-9]+[_\-])*[A-Za-z0-9]{12,}"
        r"|\b(?:app|dataset)-[A-Za-z0-9]{16,}"
        r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"
        r"|\bxox[abprse]-[A-Za-z0-9\-]{10,}"
        r"|\bAIza[A-Za-z0-9_\-]{30,}"
        r"|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"
        r"|\bglpat-[A-Za-z0-9_\-]{16,}"
        r"|\bhf_[A-Za-z0-9]{20,}"
        r"|\bya29\.[A-Za-z0-9_\-]{20,}"  # Google OAuth access token
        r"|\bshp(?:at|ca|pa|ss)_[A-Fa-f0-9]{32}"  # Shopify
        r"|\bnpm_[A-Za-z0-9]{36}"
        r"|\b(?:bot)?\d{6,12}:[A-Za-z0-9_\-]{30,}"  # Telegram bot token
    ),
    # JSON Web Tokens.
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
    # PEM blocks.
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
)

_RUN = re.compile(f"[{_TOKEN_CHARS}]{{20,}}")
_PIECE_SPLIT = re.compile(r"[\-./:+]")  # a URL's path segments are pieces of their own
_HEX = re.compile(r"^[0-9a-fA-F]{32,}$")


def _char_class(ch: str) -> int:
    if ch.isdigit():
        return 0
    if ch.isupper():
        return 1
    if ch.islower():
        return 2
    return 3


def _looks_random(piece: str, *, in_url: bool = False) -> bool:
    """A long piece that switches between digits, upper and lower case like generated tokens
    (``in_url``: a URL's path segment, where mixed case alone will do: a webhook's secret)."""
    if len(piece) < 20:
        return False
    digits = sum(ch.isdigit() for ch in piece)
    letters = sum(ch.isalpha() for ch in piece)
    if _HEX.match(piece):
        return digits > 0 and letters > 0
    mixed_case = any(ch.isupper() for ch in piece) and any(ch.islower() for ch in piece)
    needed = 0 if in_url and mixed_case else 1 if mixed_case else 3
    if letters < 3 or digits < needed:  # "mCoDIbwgvcxq8euWHNlschw4"
        return False
    classes = [_char_class(ch) for ch in piece]
    switches = sum(1 for left, right in itertools.pairwise(classes) if left != right)
    return switches / (len(piece) - 1) >= (0.2 if in_url else 0.3)


def _mask_random_runs(text: str) -> str:
    """Mask runs whose dot- or dash-separated pieces look random (UUIDs and timestamps pass)."""

    def replace(match: re.Match[str]) -> str:
        run = match.group(0)
        in_url = "://" in text[max(match.start() - 12, 0) : match.end()]
        pieces = _PIECE_SPLIT.split(run)
        return MASK if any(_looks_random(p, in_url=in_url) for p in pieces) else run

    return _RUN.sub(replace, text)


def screen_text(text: str) -> str:
    """Return ``text`` with every credential-looking span replaced by ``[masked]``."""
    for pattern in _PATTERNS:
        text = pattern.sub(MASK, text)
    return _mask_random_runs(text)


def looks_sensitive(text: str) -> bool:
    """True when :func:`screen_text` would change ``text``."""
    return screen_text(text) != text
