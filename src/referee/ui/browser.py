"""A real browser for the dashboard's tests and screenshots: the system's Chromium, driven by
Playwright.

Playwright's own browser downloads are never used (``playwright install`` fetches builds from
outside the package registries); Debian's ``chromium`` package, which ``scripts/bootstrap.sh``
installs, is launched by path instead. Playwright is a development dependency, imported only
here.

>>> with browser() as b:                                               # doctest: +SKIP
...     page = b.new_page(); page.goto(url); page.screenshot(path="runs.png")
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["LAUNCH_ARGS", "browser", "chromium_path", "screenshots"]

#: No sandbox: the tests run as root, where Chromium refuses its own sandbox; the rest keep a
#: headless run from reaching the network behind the page's back (updates, sync, metrics).
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--disable-sync",
    "--no-first-run",
    "--metrics-recording-only",
]


def chromium_path() -> str | None:
    """The system Chromium (``$REFEREE_CHROMIUM`` first), or None when there is none."""
    for name in (os.environ.get("REFEREE_CHROMIUM"), "chromium", "chromium-browser"):
        if name and (found := shutil.which(name)):
            return found
    return None


@contextmanager
def browser(executable: str | None = None) -> Iterator[Any]:
    """A headless Chromium (a Playwright ``Browser``), closed after the block."""
    from playwright.sync_api import sync_playwright

    path = executable or chromium_path()
    if path is None:
        raise FileNotFoundError(
            "no chromium on PATH: install Debian's package (apt-get install chromium; "
            "scripts/bootstrap.sh does it) or set REFEREE_CHROMIUM to a Chromium binary"
        )
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, headless=True, args=LAUNCH_ARGS)
        try:
            yield b
        finally:
            b.close()


def screenshots(
    base_url: str,
    pages: Mapping[str, str],
    out_dir: str | os.PathLike[str],
    *,
    width: int = 1280,
    height: int = 900,
    full_page: bool = True,
) -> list[Path]:
    """Save ``<out_dir>/<name>.png`` of each page (name -> path under ``base_url``)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with browser() as b:
        page = b.new_page(viewport={"width": width, "height": height})
        for name, path in pages.items():
            page.goto(base_url + path, wait_until="load")
            target = out / f"{name}.png"
            page.screenshot(path=str(target), full_page=full_page)
            written.append(target)
    return written
