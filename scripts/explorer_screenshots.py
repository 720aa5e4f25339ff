"""Screenshots of the Pack explorer for docs/explorer.md (issue 44).

    .venv/bin/python scripts/explorer_screenshots.py [OUT_DIR]

Seeds a small Pack in a temporary root, starts ``wolfie api`` on it with a token, and
drives Debian's headless Chromium (``/usr/bin/chromium``) through Playwright over the
Packs, Memories, Memory and Ask pages, saving one PNG each (default: docs/explorer/).
Nothing is downloaded: Playwright drives the system browser.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from packs import Pack
from tests.support.chromium import CHROMIUM, CHROMIUM_FLAGS

REPO = Path(__file__).resolve().parents[1]
QUESTION = "how do I rotate the signing keys"
TOKEN = "screenshots"
ARGS = ("--pack", "ops", "--port", "0", "--root")
MEMORIES = [
    (QUESTION, "run `keys rotate --all`, then restart the signer"),
    ("how to rotate the api token", "wolfie token rotate; update the agents' env"),
    ("where are the deploy logs", "in /var/log/deploy on the bastion"),
    ("how do I restart the worker", "systemctl restart worker"),
    ("which port does the cache use", "6379, TLS on 6380"),
    ("who approves a production deploy", "the on-call lead, in #deploys"),
]


def seed(root: Path) -> None:
    with Pack.open("ops", root) as pack:
        for intent, response in MEMORIES:
            pack.remember(intent, response)
        for rating in (1.0, 1.0, -0.5):
            episode = pack.recall(QUESTION)
            pack.feedback(episode.episode_id or "", rating)
        old = pack.search("which port does the cache use").ids[0]
        pack.revise(old, response="6379 (plain), 6380 (TLS)", source="ui")


def serve(root: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "WOLFIE_API_TOKEN": TOKEN, "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "wolfie.cli", "api", *ARGS, str(root)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    for line in proc.stderr or ():
        found = re.search(r" at (http://\S+) ", line)
        if found:
            return proc, found.group(1)
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise SystemExit("wolfie api did not start")


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        seed(root)
        proc, url = serve(root)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
                context = browser.new_context(
                    base_url=url,
                    extra_http_headers={"Authorization": f"Bearer {TOKEN}"},
                    viewport={"width": 1280, "height": 800},
                )
                page = context.new_page()
                page.goto("/ui/")
                page.screenshot(path=out / "packs.png", full_page=True)
                page.goto("/ui/p/ops/memories?sort=utility")
                page.screenshot(path=out / "memories.png", full_page=True)
                page.get_by_role("link", name=QUESTION).click()
                page.screenshot(path=out / "memory.png", full_page=True)
                page.goto(f"/ui/p/ops/ask?q={QUESTION.replace(' ', '+')}")
                page.screenshot(path=out / "ask.png", full_page=True)
                page.set_viewport_size({"width": 390, "height": 844})
                page.goto("/ui/p/ops/memories")
                page.screenshot(path=out / "memories-phone.png", full_page=True)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"Screenshots in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "explorer")
