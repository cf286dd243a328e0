"""An httpx MockTransport handler that answers with one body and remembers every request."""

from __future__ import annotations

import httpx


class Recorder:
    def __init__(self, body: bytes, status: int = 200,
                 content_type: str = "application/json") -> None:
        self.requests: list[httpx.Request] = []
        self.body = body
        self.status = status
        self.content_type = content_type

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(self.status, content=self.body,
                              headers={"content-type": self.content_type})
