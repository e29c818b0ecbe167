"""Real headless Chromium (Debian's, driven by Playwright) for the browser tests.

Playwright's own browser download is never used: ``scripts/install-system-deps.sh`` installs
/usr/bin/chromium. Screenshots go to a temporary folder, or to ``--screenshots-dir`` (``make
screenshots`` passes docs/screenshots), so a test run never rewrites tracked files.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from playwright.async_api import Browser, Locator, Page, Route, ViewportSize, async_playwright
from playwright.async_api import expect as expect

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LAPTOP: ViewportSize = {"width": 1280, "height": 860}
PHONE: ViewportSize = {"width": 390, "height": 844}


def require_chromium() -> None:
    if not CHROMIUM.exists():
        raise RuntimeError(
            "Chromium is missing: run scripts/install-system-deps.sh (make test does)"
        )


@asynccontextmanager
async def launched_chromium() -> AsyncIterator[Browser]:
    require_chromium()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield browser
        finally:
            await browser.close()


async def shot(page: Page, folder: Path, name: str) -> Path:
    """A full-page screenshot as ``folder/name.png`` (the folder exists: see the fixture)."""
    path = folder / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    return path


async def reload_until_visible(page: Page, locator: Locator, within: float = 15.0) -> None:
    """Deliveries happen in the background: reload the page until ``locator`` shows up."""
    deadline = time.monotonic() + within
    while True:
        try:
            await expect(locator.first).to_be_visible(timeout=500)
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            await page.reload()


async def block_other_origins(page: Page, origin: str) -> list[str]:
    """Abort every request that is not to ``origin`` (as if offline); returns those URLs."""
    blocked: list[str] = []

    async def handle(route: Route) -> None:
        url = route.request.url
        if url.startswith((origin + "/", "data:", "blob:")) or url == origin:
            await route.continue_()
        else:
            blocked.append(url)
            await route.abort("internetdisconnected")

    await page.route("**/*", handle)
    return blocked


# Elements wider than the viewport that the page does not let you scroll to, sideways.
_CLIPPED = """() => {
  const width = window.innerWidth;
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.right <= width + 1) continue;
    let scroller = el.parentElement, scrolls = false;
    while (scroller && scroller !== document.body) {
      const style = getComputedStyle(scroller);
      if (["auto", "scroll"].includes(style.overflowX)
          && scroller.getBoundingClientRect().right <= width + 1) { scrolls = true; break; }
      scroller = scroller.parentElement;
    }
    if (!scrolls) out.push(el.tagName.toLowerCase() + (el.className ? "." + el.className : ""));
  }
  return out;
}"""

# Boxes that scroll sideways without showing it (the shadow cue is a background gradient); code
# blocks excepted, where a line cut mid-word shows it.
_HIDDEN_SCROLL = """() => [...document.querySelectorAll("body *")]
  .filter(el => ["auto", "scroll"].includes(getComputedStyle(el).overflowX)
    && el.scrollWidth > el.clientWidth + 1 && el.tagName !== "PRE"
    && !getComputedStyle(el).backgroundImage.includes("gradient"))
  .map(el => el.tagName.toLowerCase() + "." + el.className)"""


# Controls (buttons, fields) not wholly in sight: past the window's edge, or scrolled out of a
# box that scrolls sideways (a wide table's action column off to the right).
_CONTROLS_OUT_OF_SIGHT = """() => {
  const out = [];
  for (const el of document.querySelectorAll(
      "button, .button, input:not([type=hidden]), select, textarea")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || el.closest(".visually-hidden, .skip")) continue;
    let left = 0, right = window.innerWidth;
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (["auto", "scroll", "hidden"].includes(getComputedStyle(up).overflowX)) {
        const frame = up.getBoundingClientRect();
        left = Math.max(left, frame.left);
        right = Math.min(right, frame.right);
      }
    }
    if (box.left < left - 1 || box.right > right + 1) {
      out.push(el.tagName.toLowerCase() + " " + (el.textContent.trim() || el.name || el.id));
    }
  }
  return out;
}"""


async def assert_fits_width(page: Page) -> None:
    """Nothing sticks out sideways: the page does not scroll horizontally, whatever is wider
    than the screen sits in a container that scrolls, and shows that it does; and every button
    and field is in sight without scrolling anything sideways."""
    page_width = await page.evaluate("document.scrollingElement.scrollWidth")
    inner = await page.evaluate("window.innerWidth")
    clipped = await page.evaluate(_CLIPPED)
    where = f"{page.url} at {inner} px"
    assert page_width <= inner, f"{where} scrolls sideways ({page_width} px): {clipped[:8]}"
    assert clipped == [], f"{where} cuts off {clipped[:8]}"
    hidden = await page.evaluate(_HIDDEN_SCROLL)
    assert hidden == [], f"{where} scrolls with no sign of it: {hidden}"
    out_of_sight = await page.evaluate(_CONTROLS_OUT_OF_SIGHT)
    assert out_of_sight == [], f"{where} has controls out of sight: {out_of_sight}"


async def assert_fits_both_widths(page: Page, url: str, folder: Path, name: str) -> None:
    """The page at ``url`` fits a laptop and a phone, in ``page`` (its viewport is restored);
    a full-page screenshot of each as ``folder/name-desktop.png`` and ``-phone.png``."""
    before = page.viewport_size
    try:
        for size, label in ((LAPTOP, "desktop"), (PHONE, "phone")):
            await page.set_viewport_size(size)
            await page.goto(url)
            await expect(page.locator("main")).to_be_visible()
            await assert_fits_width(page)
            await shot(page, folder, f"{name}-{label}")
    finally:
        if before is not None:
            await page.set_viewport_size(before)


async def sign_up(page: Page, email: str, password: str) -> None:
    """Create an account through the dashboard's sign-up form; ``page`` ends on the overview."""
    await page.goto("/dashboard/signup")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password", exact=True).fill(password)
    await page.get_by_label("Password again").fill(password)
    await page.get_by_role("button", name="Create account").click()
    await expect(page.get_by_text("Welcome to hookline")).to_be_visible()
