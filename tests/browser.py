"""A real headless browser for tests that open reports: Debian's chromium, driven by
Playwright through ``executable_path`` (``playwright install`` downloads a browser of its
own; the project's setup, scripts/deps.sh, installs chromium from apt instead).

Load as a plugin (``pytest_plugins = ["browser"]``) to get the ``page`` fixture: a fresh
profile each test, and every dialog, console message and page error recorded on it.
Without chromium or Playwright the test is skipped, saying so, except under CI=true,
where it fails: CI must not pass by skipping the browser.
"""

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("SISELECT_CHROMIUM", "/usr/bin/chromium"))
# As root chromium needs --no-sandbox; the rest keeps it from reaching the network.
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@dataclass
class Seen:
    """What a page did besides rendering."""

    dialogs: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _missing() -> str | None:
    if not CHROMIUM.exists() or not os.access(CHROMIUM, os.X_OK):
        return f"no browser at {CHROMIUM} (apt-get install chromium; scripts/deps.sh does)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing (pip install -e '.[test]')"
    return None


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture
def page(tmp_path: Path) -> Any:
    """A Playwright page in a fresh chromium profile; ``page.seen`` records dialogs
    (dismissed), console messages and uncaught errors."""
    missing = _missing()
    if missing:
        if _in_ci():
            pytest.fail(f"CI=true but the browser test cannot run: {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True,
            # The fresh --user-data-dir: Playwright passes ``profile`` as that flag itself
            # (and refuses it among ``args``).
            args=ARGS, viewport={"width": 1280, "height": 900},
        )
        try:
            tab = context.pages[0] if context.pages else context.new_page()
            seen = Seen()

            def on_dialog(dialog: Any) -> None:
                seen.dialogs.append(f"{dialog.type}: {dialog.message}")
                dialog.dismiss()

            tab.on("dialog", on_dialog)
            tab.on("console", lambda message: seen.console.append(message.text))
            tab.on("pageerror", lambda error: seen.errors.append(str(error)))
            tab.seen = seen
            yield tab
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)
