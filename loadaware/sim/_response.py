"""An answer of the simulated API: status code, body and headers, before it is written.

JSON bodies are encoded compactly, as kube-apiserver sends them; error bodies are
the metav1.Status of an `_status.ApiError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

ENCODE = json.JSONEncoder(separators=(",", ":")).encode
JSON = "application/json"
TEXT = "text/plain; charset=utf-8"


class Response:
    __slots__ = ("body", "code", "content_type", "headers")

    def __init__(
        self,
        code: int,
        body: bytes | dict[str, Any] | list[Any] | str,
        *,
        content_type: str = JSON,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.code = code
        if isinstance(body, dict | list):
            body = ENCODE(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.body = body
        self.content_type = content_type
        self.headers = dict(headers or {})
