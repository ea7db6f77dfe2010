"""Open a page in headless Chromium and report what a reader's browser would show.

Driven through the DevTools protocol over `--remote-debugging-pipe` (JSON messages ended
by NUL on file descriptors 3 and 4), so nothing but Debian's `chromium` is needed: every
uncaught exception, console error and browser log error, every request the page makes,
whether each image decoded (naturalWidth), and a screenshot.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import select
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--remote-debugging-pipe"]
#: a hang guard for a browser that stopped answering, not a measure of speed
HANG_S = 600
IMAGES = ("Promise.all([...document.images].map(img => img.decode().then(() => img.naturalWidth, () => 0)))")


@dataclass
class PageCheck:
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    image_widths: list[int] = field(default_factory=list)
    #: what `probe` (a JavaScript expression) evaluated to in the loaded page
    probed: object = None


class _Pipe:
    def __init__(self, profile: Path):
        commands_read, self.commands = os.pipe()
        self.replies, replies_write = os.pipe()

        def fds() -> None:
            # fresh copies first (a pipe end may itself be 3 or 4); dup2 onto the same number changes
            # nothing, so the inheritable flag is set explicitly
            ours = os.dup(commands_read), os.dup(replies_write)
            for target, fd in zip((3, 4), ours, strict=True):
                os.dup2(fd, target)
                os.set_inheritable(target, True)

        self.process = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                        preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        os.close(commands_read)
        os.close(replies_write)
        self.ids, self.buffer, self.events = itertools.count(1), b"", []

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        number = next(self.ids)
        message = {"id": number, "method": method, "params": params or {}, **({"sessionId": session} if session else {})}
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.receive()
            if reply.get("id") == number:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def receive(self) -> dict:
        while b"\0" not in self.buffer:
            ready, _, _ = select.select([self.replies], [], [], HANG_S)
            if not ready:
                raise TimeoutError(f"chromium sent nothing for {HANG_S} s")
            chunk = os.read(self.replies, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the DevTools pipe")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def close(self) -> None:
        try:
            self.call("Browser.close")
        finally:
            self.process.wait()
            os.close(self.commands)
            os.close(self.replies)


def check_page(page: Path, screenshot: Path, profile: Path, size=(1280, 2000), probe: str | None = None,
               full_page: bool = False) -> PageCheck:
    """Load `page` from disk, wait for its load event, decode its images, evaluate `probe` (a
    JavaScript expression whose value comes back as JSON), write a screenshot (`full_page`: the
    whole page at the window's width)."""
    pipe = _Pipe(profile)
    try:
        target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            pipe.call(f"{domain}.enable", None, session)
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": size[0], "height": size[1],
                                                         "deviceScaleFactor": 1, "mobile": False}, session)
        pipe.call("Page.navigate", {"url": page.resolve().as_uri()}, session)
        while not any(e.get("method") == "Page.loadEventFired" for e in pipe.events):
            pipe.events.append(pipe.receive())
        widths = pipe.call("Runtime.evaluate", {"expression": IMAGES, "awaitPromise": True, "returnByValue": True},
                           session)["result"]["value"]
        probed = None if probe is None else pipe.call("Runtime.evaluate", {
            "expression": probe, "awaitPromise": True, "returnByValue": True}, session)["result"].get("value")
        shot = pipe.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": full_page}, session)["data"]
        screenshot.write_bytes(base64.b64decode(shot))
    finally:
        pipe.close()
    check = _read(pipe.events, widths)
    check.probed = probed
    return check


def _read(events: list[dict], widths: list[int]) -> PageCheck:
    check = PageCheck(image_widths=list(widths))
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            check.errors.append(f"exception: {details.get('exception', {}).get('description') or details['text']}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            check.errors.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            check.errors.append(f"log: {params['entry'].get('text')}")
        elif method == "Network.requestWillBeSent":
            check.requests.append(params["request"]["url"])
    return check
