"""A minimal Chrome DevTools Protocol client for browser tests: headless Chromium, over the
`websockets` library the project already installs (through Prefect).

Why not Playwright: it would add a dependency whose wheel carries a Node driver and expects
browsers it downloads itself; this needs only Debian's `chromium` and works offline.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

__all__ = ["Browser", "Page", "find_chromium"]

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--remote-debugging-port=0")


def find_chromium() -> str | None:
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which(
        "chromium-browser")


@dataclass
class Browser:
    """Chromium started with a fresh profile in `profile`; use as a context manager."""
    profile: Path
    binary: str | None = None
    timeout: float = 30.0
    events: list[dict[str, Any]] = field(default_factory=list)
    _proc: subprocess.Popen[bytes] | None = None
    _ws: ClientConnection | None = None
    _next_id: int = 0

    def __enter__(self) -> Browser:
        binary = self.binary or find_chromium()
        if binary is None:
            raise FileNotFoundError("chromium is not installed")
        self.profile.mkdir(parents=True, exist_ok=True)
        log = (self.profile / "chromium.log").open("wb")
        self._proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={self.profile}",
                                       "about:blank"], stdout=log, stderr=log)
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError(f"chromium did not start (see {self.profile}/chromium.log)")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        self._ws = connect(f"ws://127.0.0.1:{port}{path}", max_size=None,
                           open_timeout=self.timeout)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._ws is not None:
            self._ws.close()
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def _recv(self, timeout: float) -> dict[str, Any]:
        assert self._ws is not None
        return json.loads(self._ws.recv(timeout=timeout))

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        """Send one command and return its result; events that arrive meanwhile are kept."""
        assert self._ws is not None
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method,
                                   "params": params or {}}
        if session:
            message["sessionId"] = session
        self._ws.send(json.dumps(message))
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._recv(max(0.01, deadline - time.monotonic()))
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str, after: int = 0) -> dict[str, Any]:
        """The first event `method` of `session` at index >= after (waiting if need be)."""
        deadline = time.monotonic() + self.timeout
        while True:
            for event in self.events[after:]:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            self.events.append(self._recv(max(0.01, deadline - time.monotonic())))

    def new_page(self) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target,
                                                      "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.send(f"{domain}.enable")
        return page


@dataclass
class Page:
    browser: Browser
    session: str

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def goto(self, url: str) -> None:
        mark = len(self.browser.events)
        self.send("Page.navigate", {"url": url})
        self.browser.wait_for("Page.loadEventFired", self.session, mark)

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def viewport(self, width: int, height: int, *, mobile: bool = False) -> None:
        self.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})

    def color_scheme(self, scheme: str) -> None:
        self.send("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": scheme}]})

    def screenshot(self, path: Path, *, full_page: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params |= {"captureBeyondViewport": True, "clip": {
                "x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}}
        data = self.send("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions, failed or non-local requests seen so far."""
        found = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(f"exception: {params['exceptionDetails'].get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(f"console.error: {params.get('args')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(f"log: {params['entry'].get('text')} {params['entry'].get('url')}")
            elif method == "Network.loadingFailed":
                found.append(f"request failed: {params.get('errorText')}")
            elif method == "Network.requestWillBeSent":
                url = params["request"]["url"]
                if not url.startswith(("file:", "data:")):
                    found.append(f"network request: {url}")
        return found
