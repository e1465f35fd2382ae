"""The HTML reports in a real headless browser: Debian's chromium, driven over the DevTools
protocol on a pipe (--remote-debugging-pipe: JSON messages ended by a NUL byte on fds 3 and 4),
so nothing beyond the browser and the standard library is needed.

Each page must load, show its charts (every <img> decoded, SVG, with a size), run no script
(the page has none, and a <script> inside a test message must show as text) and log no console
error. Where no browser is installed the tests skip, saying why, except under CI (CI=true),
where scripts/install-deps --browser installs chromium and a missing one fails.
HTML_REPORT_SCREENSHOTS=DIR keeps a full-page PNG of each page there, to look at.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
from pathlib import Path

from grader.tests import html_samples

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def find_browser() -> str | None:
    named = os.environ.get("CHROMIUM")
    if named:
        return named
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


class Browser:
    """One headless chromium, one tab, spoken to over the DevTools pipe."""

    def __init__(self, binary: str, profile: str):
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def fds():   # chromium reads commands on fd 3 and writes replies and events on fd 4
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=fds, close_fds=False)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next_id = 0
        self.messages = queue.Queue()
        self.events = []
        threading.Thread(target=self._read, daemon=True).start()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable", session=True)

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_chrome, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self.messages.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                self.messages.put(json.loads(raw))

    def _next(self, deadline: float) -> dict:
        try:
            msg = self.messages.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            raise TimeoutError("the browser did not answer in time") from None
        if msg is None:
            raise RuntimeError("the browser closed its DevTools pipe (it exited?)")
        if "method" in msg:
            self.events.append(msg)
        return msg

    def call(self, method: str, params: dict | None = None, session: bool = False,
             timeout: float = 60.0) -> dict:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._next(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def wait_event(self, method: str, since: int, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for e in self.events[since:]:
                if e["method"] == method and e.get("sessionId") == self.session:
                    return e
            self._next(deadline)

    def load(self, url: str) -> None:
        since = len(self.events)
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_event("Page.loadEventFired", since)

    def evaluate(self, expression: str):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True}, session=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluating in the page failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, path: Path) -> None:
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1150, "height": min(height, 16000), "deviceScaleFactor": 1,
                   "mobile": False}, session=True)
        import base64
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def errors(self) -> list:
        """Console errors, uncaught exceptions and error log entries (a blocked script, a
        refused load, a broken image) seen so far."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error",
                                                                                 "assert"):
                out.append("console." + p["type"] + ": " + " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif e["method"] == "Runtime.exceptionThrown":
                out.append("exception: " + str(p.get("exceptionDetails", {}).get("text")))
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: " + str(p["entry"].get("text")))
        return out

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)


# What the tests read from a loaded page.
PROBE = """JSON.stringify({
  title: document.title,
  images: document.images.length,
  svgImages: [...document.images].filter(i => i.src.startsWith('data:image/svg+xml;')).length,
  decoded: [...document.images].filter(i => i.complete && i.naturalWidth > 0).length,
  maps: document.querySelectorAll('img.map').length,
  charts: document.querySelectorAll('img.chart').length,
  shown: [...document.images].filter(i => i.getBoundingClientRect().width > 100).length,
  scripts: document.scripts.length,
  pwned: typeof window.pwned,
  tables: document.querySelectorAll('table').length,
  text: document.body.innerText,
})"""


@unittest.skipUnless(HAVE_MPL or IN_CI, "matplotlib is not installed (scripts/install-deps)")
class HeadlessBrowser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        binary = find_browser()
        if binary is None:
            if IN_CI:
                raise AssertionError("CI: no chromium found; scripts/install-deps --browser "
                                     "installs it")
            raise unittest.SkipTest("no headless browser installed (chromium): "
                                    "scripts/install-deps --browser, or apt-get install chromium")
        from grader import html_report
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.pages = {
            "submission": html_report.submission_page(html_samples.submission()),
            "no-ceilings": html_report.submission_page(html_samples.submission(ceilings=False)),
            "class": html_report.class_page(html_samples.batch(25)),
            # A control that must fail the checks: one console error, one script.
            "control": "<!DOCTYPE html><html><head><title>c</title></head><body><p>x</p>"
                       "<script>console.error('planted error')</script></body></html>",
        }
        for name, text in cls.pages.items():
            (d / f"{name}.html").write_text(text, encoding="utf-8")
        cls.browser = Browser(binary, str(d / "profile"))
        cls.shots = os.environ.get("HTML_REPORT_SCREENSHOTS")

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls.tmp.cleanup()

    def open_page(self, name: str) -> tuple:
        """(what the probe read, the errors logged while loading it)."""
        before = len(self.browser.errors())
        self.browser.load((Path(self.tmp.name) / f"{name}.html").as_uri())
        info = json.loads(self.browser.evaluate(PROBE))
        time.sleep(0.3)   # late console messages
        self.browser.evaluate("1")
        if self.shots:
            Path(self.shots).mkdir(parents=True, exist_ok=True)
            self.browser.screenshot(Path(self.shots) / f"{name}.png")
        return info, self.browser.errors()[before:]

    def check_rendered(self, info: dict, errors: list, charts: int, maps: int) -> None:
        self.assertEqual(errors, [])
        self.assertEqual(info["scripts"], 0)
        self.assertEqual(info["pwned"], "undefined")
        self.assertEqual((info["charts"], info["maps"]), (charts, maps))
        self.assertEqual(info["images"], charts + maps)
        self.assertEqual(info["svgImages"], info["images"])
        self.assertEqual(info["decoded"], info["images"], "an SVG chart did not decode")
        self.assertEqual(info["shown"], info["images"], "a chart is drawn less than 100 px wide")

    def test_submission_page(self):
        info, errors = self.open_page("submission")
        self.check_rendered(info, errors, charts=3, maps=3)
        self.assertTrue(info["title"].startswith("Grade 141.00 / 300"), info["title"])
        self.assertGreaterEqual(info["tables"], 4)
        # the planted scripts and markup are shown as text, not run
        self.assertIn("<script>document.title='pwned';window.pwned=1</script>", info["text"])
        self.assertIn('Hidden.<img src=x onerror="window.pwned=2">', info["text"])
        self.assertIn("What went wrong", info["text"])

    def test_submission_page_without_ceilings(self):
        info, errors = self.open_page("no-ceilings")
        self.check_rendered(info, errors, charts=3, maps=3)
        self.assertIn("No ceilings drawn", info["text"])

    def test_class_page(self):
        info, errors = self.open_page("class")
        self.check_rendered(info, errors, charts=5, maps=0)
        self.assertIn("Hidden tests that fail most often", info["text"])
        self.assertIn("25 submission(s)", info["text"])

    def test_the_checks_can_fail(self):
        info, errors = self.open_page("control")
        self.assertEqual(info["scripts"], 1)
        self.assertTrue(any("planted error" in e for e in errors), errors)


if __name__ == "__main__":
    unittest.main()
