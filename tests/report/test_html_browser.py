"""The HTML report in a real headless browser (Debian's chromium driven by Playwright for Python): at 1280 and
390 px wide the root cause and its first fix are on screen without scrolling, the screenshots show them, every
evidence anchor resolves to an element, nothing is fetched from anywhere, and nothing overflows sideways.

Needs `apt-get install chromium` and `pip install playwright` (the test extra); `playwright install` is not
used: the browser is the system's. .ci/run installs chromium when it is missing."""

import os
import struct
import zlib
from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.report.html import render
from gpusleuth.sources import example_names, open_source

CHROMIUM = os.environ.get("GPUSLEUTH_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]
VIEWPORTS = {"desktop": (1280, 800), "phone": (390, 844)}
SUMMARY = ("#verdict", "#first-root-cause", "#first-fix")

if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
    pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium; .ci/run does it)",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed (pip install playwright)")


def png_pixels(data: bytes) -> tuple[int, int, list[bytes], int]:
    """(width, height, rows, bytes per pixel) of an 8-bit RGB/RGBA PNG, as chromium writes them."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def colours_in(shot, box) -> set[tuple[int, int, int]]:
    width, height, rows, bpp = shot
    out = set()
    for y in range(int(box["y"]), min(height, int(box["y"] + box["height"]))):
        row = rows[y]
        for x in range(int(box["x"]), min(width, int(box["x"] + box["width"]))):
            out.add(tuple(row[x * bpp:x * bpp + 3]))
    return out


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    files = {}
    for name in example_names():
        src = open_source(f"example:{name}")
        path = out / f"{name}.html"
        path.write_text(render(diagnose(src), documents=src.documents), encoding="utf-8")
        files[name] = path
    return files


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("name", example_names())
def test_the_report_in_a_browser(browser, pages, name, viewport, tmp_path):
    width, height = VIEWPORTS[viewport]
    url = pages[name].as_uri()
    context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
    left: list[str] = []

    def only_the_page(route):
        if route.request.url.split("#")[0] == url:
            route.continue_()
        else:
            left.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_page)
    page = context.new_page()
    page.goto(url, wait_until="load")
    try:
        # the root cause and its first fix, whole, in the first screen: no scrolling needed
        boxes = {}
        for sel in SUMMARY:
            box = page.locator(sel).bounding_box()
            assert box is not None, f"{sel} is not rendered"
            assert box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= width + 0.5, (sel, box)
            assert box["y"] + box["height"] <= height, f"{sel} needs scrolling at {width}x{height}: {box}"
            boxes[sel] = box
        assert page.evaluate("document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
        # every in-page link resolves to an element
        dangling = page.evaluate("""() => [...document.querySelectorAll('a[href^="#"]')]
            .map(a => a.getAttribute('href').slice(1)).filter(id => !document.getElementById(id))""")
        assert page.evaluate("""document.querySelectorAll('a[href^="#ev-"]').length""") > 0
        assert dangling == []
        # the screenshot shows it: the verdict badge in its colour, text (not an empty box) where the fix is
        png = page.screenshot(full_page=False)
        keep = os.environ.get("GPUSLEUTH_SCREENSHOTS")
        (Path(keep) if keep else tmp_path).mkdir(parents=True, exist_ok=True)
        (Path(keep) if keep else tmp_path).joinpath(f"{name}-{width}.png").write_bytes(png)
        shot = png_pixels(png)
        assert shot[:2] == (width, height)
        badge = colours_in(shot, boxes["#verdict"])
        assert any(r > 150 and g < 80 and b < 80 for r, g, b in badge) or any(g > 80 and r < 60 for r, g, b in badge)
        fix = colours_in(shot, boxes["#first-fix"])
        assert len(fix) > 10 and any(sum(c) < 200 for c in fix), "the first fix's text is drawn"
    finally:
        context.close()
    assert left == [], f"requests left the page: {left}"


def test_a_request_leaving_the_page_would_be_caught(browser, tmp_path):
    """The routing above sees requests: a page that fetches an image is caught (so a clean run means something)."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><img src="https://example.invalid/x.png">', encoding="utf-8")
    context = browser.new_context()
    seen = []
    context.route("**/*", lambda route: (seen.append(route.request.url), route.abort())
                  if route.request.url != bad.as_uri() else route.continue_())
    page = context.new_page()
    page.goto(bad.as_uri(), wait_until="load")
    context.close()
    assert seen == ["https://example.invalid/x.png"]



def test_printed_the_navigation_goes_and_the_summary_stays(browser, pages):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(pages["peermem-race"].as_uri(), wait_until="load")
        assert page.locator("nav").is_visible()
        page.emulate_media(media="print")
        assert not page.locator("nav").is_visible()
        assert page.locator("#first-fix").is_visible() and page.locator("#evidence").is_visible()
        assert page.pdf(format="A4")[:4] == b"%PDF"
    finally:
        page.close()
