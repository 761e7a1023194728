"""Model backends behind one protocol (``async generate(request) -> Response``).

Heavy dependencies (aiohttp, torch, transformers) are imported only by the backend
that needs them, so baselines and scoring start instantly.
"""

from perspecta.models.base import (
    Backend,
    BackendError,
    GenConfig,
    InputSettings,
    Request,
    Response,
)
from perspecta.models.factory import make_backend

__all__ = ["Backend", "BackendError", "GenConfig", "InputSettings", "Request", "Response", "make_backend"]
