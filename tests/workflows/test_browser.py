"""The SVG opens in a real browser: headless Chromium renders a non-blank picture."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from wf_builders import dify_file

from ragspine.workflows import preview

CHROMIUM = Path("/usr/bin/chromium")


def screenshot(page: Path, target: Path, profile: Path) -> None:
    """Headless Chromium screenshot of ``page`` with networking and updates off."""
    subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--window-size=1200,700",
            f"--screenshot={target}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed at /usr/bin/chromium")
def test_svg_renders_non_blank_in_headless_chromium(tmp_path: Path) -> None:
    from PIL import Image

    svg = tmp_path / "branching.svg"
    svg.write_text(preview(dify_file("dify_conditional_branching.yml")).to_svg(), "utf-8")
    png = tmp_path / "branching.png"
    screenshot(svg, png, tmp_path / "profile")
    with Image.open(png) as image:
        pixels = image.convert("RGB")
        colours = pixels.getcolors(maxcolors=1_000_000) or []
        non_white = sum(count for count, rgb in colours if rgb != (255, 255, 255))
    assert len(colours) > 20
    assert non_white > 0.02 * pixels.width * pixels.height
