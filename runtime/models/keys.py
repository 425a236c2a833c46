"""Where an `openai` endpoint is and which key it takes: what the spec parser and the backends share.

`specs.py` (which names a backend and imports it only when loaded) and the backends that reach OpenAI's
API (`openai.py`, `embedders.py`) both read these, so they live below both and neither imports the
other for them.
"""

from __future__ import annotations

import os

__all__ = ["KEY_VARIABLES", "OPENAI_URL", "key_from_env"]

OPENAI_URL = "https://api.openai.com/v1"
KEY_VARIABLES = ("LOCI_API_KEY", "OPENAI_API_KEY")


def key_from_env() -> str | None:
    """The API key for an `openai` endpoint: the first of `KEY_VARIABLES` that is set."""
    return next((os.environ[name] for name in KEY_VARIABLES if os.environ.get(name)), None)
