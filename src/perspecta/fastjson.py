"""One JSON value from one line of a results log, as fast as this install allows.

Reading JSON was most of the time of scoring a million records (25.6 of 42 s with the
standard library). ``orjson`` parses such lines several times faster and returns the
same Python values; without it the standard library is used. orjson refuses the
``NaN``/``Infinity`` literals that Python's ``json.dumps`` writes for non-finite floats,
so a line it rejects is re-read by the standard library before it is called invalid.
The one difference left: orjson reads an integer beyond 64 bits as a float (no field
of a scored record holds one).
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - depends on the install
    orjson = None  # type: ignore[assignment]

#: Raised for a line that is not JSON, whichever parser read it.
JSONDecodeError = json.JSONDecodeError


def loads(raw: bytes | str) -> Any:
    """Parse one JSON document (a line, with or without its newline)."""
    if orjson is not None:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # NaN/Infinity, or really invalid: let the standard library decide
    return json.loads(raw)
