"""The documentation site: it builds in strict mode, its env pages say what the code says,
and a reader's browser shows the pages whole.

The site is built once per module into a scratch folder (``mkdocs build --strict``: a broken
link, a missing reference or an unknown page fails the build). The browser test serves that
build on 127.0.0.1 from inside the test and opens the index and one env page in headless
Chromium (Debian's ``chromium``), driven over its DevTools protocol with
``websocket-client``; every host but 127.0.0.1 is unresolvable for it, so the test also
proves the site loads nothing from outside itself. Needs the ``docs`` extra
(``pip install -e ".[docs]"``); ``.ci/run`` installs it and Chromium, so CI never skips.
"""

from __future__ import annotations

import functools
import html
import http.server
import json
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import gymnasium as gym
import pytest
from paths import ROOT

import meeting_gym
from meeting_gym.core.registry import ENVS, task_class

pytest.importorskip("mkdocs", reason='needs the docs extra: pip install -e ".[docs]"')
pytest.importorskip("material", reason='needs the docs extra: pip install -e ".[docs]"')
pytest.importorskip("mkdocstrings_handlers.python", reason="needs the docs extra")

HEADINGS = [
    "Description",
    "Action Space",
    "Observation Space",
    "Rewards",
    "Starting State",
    "Episode End",
    "Information",
    "Arguments",
    "Registered Configurations",
    "References",
    "Version History",
]
PAGES = {
    "MeetingSlot-v1": "envs/meeting-slot",
    "MeetingSlot-Raw-v1": "envs/meeting-slot-raw",
    "CalendarMath-v1": "envs/calendar-math",
    "CronSchedule-v1": "envs/cron-schedule",
    "CronSchedule-Tools-v1": "envs/cron-schedule-tools",
    "TimetablePlanner-v1": "envs/timetable-planner",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def _text(page: Path) -> str:
    """The page's visible text, tags dropped and entities decoded (good enough to search)."""
    body = re.sub(r"<script.*?</script>|<style.*?</style>", "", page.read_text(), flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def _h2(page: Path) -> list[str]:
    found = re.findall(r"<h2 id=\"[^\"]*\">(.*?)<a class=\"headerlink\"", page.read_text())
    return [html.unescape(re.sub(r"<[^>]+>", "", h)).strip() for h in found]


def _family(env_id: str) -> str:
    return env_id.rsplit("-v", 1)[0]


def test_every_env_id_has_a_page():
    """One page per env, named by its current (v1) id; each of its versions is registered."""
    assert {_family(e) for e in PAGES} == {_family(e) for e in ENVS}, "an env without a page"
    assert set(PAGES) <= set(ENVS)


@pytest.mark.parametrize("env_id", list(PAGES))
def test_env_page_lists_every_version_and_its_eval_addressing(site: Path, env_id: str):
    text = _text(site / PAGES[env_id] / "index.html")
    for other in ENVS:
        if _family(other) == _family(env_id):
            assert other in text, other
    assert "one draw of its own, constant time" in text
    assert "walks the items before it" in text


@pytest.mark.parametrize("env_id", list(PAGES))
def test_env_page_has_gymnasiums_headings_in_order(site: Path, env_id: str):
    page = site / PAGES[env_id] / "index.html"
    assert _h2(page) == HEADINGS
    assert f"<title>{env_id} - meeting_gym</title>" in page.read_text()


@pytest.mark.parametrize("env_id", list(PAGES))
def test_env_page_shows_what_the_code_says(site: Path, env_id: str):
    """Spaces, rubric terms, difficulties, settings and registered ids, as the code has them."""
    text = _text(site / PAGES[env_id] / "index.html")
    task = task_class(env_id)
    env = gym.make(env_id)
    assert str(env.action_space) in text
    spaces = getattr(env.observation_space, "spaces", {"": env.observation_space})
    for key, space in spaces.items():
        assert f"{key}{space}" in text.replace(" ", "") or str(space) in text
    for term in meeting_gym.make_task(env_id).rubric.terms:
        assert term.name in text
    for level in task.difficulties:
        assert repr(level) in text
    for setting in task.settings:
        assert setting.help in text
    for option in task.reset_options:
        assert option in text
    assert env_id in text and f'gym.make("{env_id}"' in text


@pytest.mark.parametrize("env_id", list(PAGES))
def test_env_page_has_its_picture_made_by_the_build(site: Path, env_id: str):
    page = (site / PAGES[env_id] / "index.html").read_text()
    if "rgb_array" in gym.make(env_id).metadata["render_modes"]:
        png = site / "assets" / "envs" / f"{env_id}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"assets/envs/{env_id}.png" in page
    else:
        assert "The <code>ansi</code> rendering" in page and "[question]" in html.unescape(page)


def test_api_reference_lists_every_public_name(site: Path):
    text = _text(site / "api" / "index.html")
    for name in meeting_gym.__all__:
        assert name in text
    for name in (
        "evaluate",
        "summarize",
        "load_split",
        "environment_factory",
        "ppo_config",
        "export_episodes",
        "episode_tokens",
        "model_summary",
    ):
        assert name in text


# ---------------------------------------------------------------- what a reader sees


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--remote-debugging-port=0",
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the test reports failures itself
        pass


class _Tab:
    """One Chromium tab over the DevTools protocol: navigate, wait for load, evaluate."""

    def __init__(self, url: str) -> None:
        import websocket

        self.ws = websocket.create_connection(url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.errors: list[str] = []
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                return message.get("result", {})
            self._event(message)

    def _event(self, message: dict) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(" ".join(str(a.get("value", a)) for a in params["args"]))
        elif method == "Runtime.exceptionThrown":
            self.errors.append(params["exceptionDetails"].get("text", "exception"))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(f"{params['entry'].get('text')} {params['entry'].get('url', '')}")
        self.last = method

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        self.last = None
        while self.last != "Page.loadEventFired":
            assert time.monotonic() < deadline, f"{url} did not load"
            self._event(json.loads(self.ws.recv()))
        time.sleep(0.5)  # late console errors (scripts run after load)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"]["value"]


SEEN = """JSON.stringify({
  title: document.title,
  headings: [...document.querySelectorAll("article h1, article h2")].map(
    h => h.innerText.replace("\u00b6", "").trim()),
  images: [...document.querySelectorAll("article img")].map(
    i => ({src: i.getAttribute("src"), complete: i.complete, width: i.naturalWidth})),
})"""


@pytest.fixture(scope="module")
def browser(site: Path, tmp_path_factory):
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    profile = tmp_path_factory.mktemp("chromium-profile")
    process = subprocess.Popen(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            assert process.poll() is None, "chromium exited"
            assert time.monotonic() < deadline, "chromium did not open its DevTools port"
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as reply:
            target = next(t for t in json.load(reply) if t["type"] == "page")
        tab = _Tab(target["webSocketDebuggerUrl"])
        yield tab, f"http://127.0.0.1:{server.server_address[1]}"
        tab.ws.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
        server.shutdown()
        server.server_close()


def test_a_reader_sees_the_index(browser):
    tab, base = browser
    tab.open(base + "/")
    seen = json.loads(tab.evaluate(SEEN))
    assert seen["title"] == "meeting_gym"
    assert seen["headings"][:3] == ["meeting_gym", "Install", "Where to start"]
    assert tab.errors == []


def test_a_reader_sees_an_env_page_with_its_picture(browser):
    tab, base = browser
    tab.open(base + "/envs/meeting-slot/")
    seen = json.loads(tab.evaluate(SEEN))
    assert seen["title"] == "MeetingSlot-v1 - meeting_gym"
    assert seen["headings"] == ["MeetingSlot-v1", *HEADINGS]
    (picture,) = [i for i in seen["images"] if "assets/envs/MeetingSlot-v1.png" in i["src"]]
    assert picture["complete"] and picture["width"] > 0, picture
    assert tab.errors == []


def test_the_rules_the_docs_cite_are_their_own_pages():
    """Users have no ../shared: no page sends them to RULES.md or the reference folder."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for outside in ("RULES.md", "shared/reference", "../shared"):
            assert outside not in text, f"{page.relative_to(ROOT)} cites {outside}"
    for env_id, page in PAGES.items():
        source = (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
        assert "](../rules/" in source, f"{env_id}'s page links no rules page"
