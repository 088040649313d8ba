"""Headless Chromium for the report tests: find it (installing Debian's `chromium` when
root), load a page, and check that every <img> loaded (the reports' ``data-images-loaded``
/ ``data-images-total`` attributes on <body>, set on the load event) and that a screenshot
is a real page, not a blank one."""

import os
import re
import shutil
import subprocess
import tempfile

import pytest


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        r = subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], capture_output=True, env=env)
            r = subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], capture_output=True, text=True, env=env)
        if r.returncode == 0:
            return shutil.which("chromium")
        pytest.skip(f"chromium is not installed and apt-get install failed: {r.stderr.strip().splitlines()[-1:]}")
    pytest.skip("chromium is not installed and cannot be installed here (not root or no apt-get)")


def browse(exe, *args):
    with tempfile.TemporaryDirectory() as ud:
        return subprocess.run(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={ud}", *args],
            capture_output=True, text=True, timeout=120)


def check_page(page, shot, min_images=1, height=1800):
    """Render ``page`` in headless Chromium: every image loaded (at least ``min_images``),
    the screenshot ``shot`` written and not blank. Returns the DOM as Chromium saw it."""
    exe = chromium()
    url = page.resolve().as_uri()
    dom = browse(exe, "--virtual-time-budget=10000", "--dump-dom", url)
    body = re.search(r"<body[^>]*>", dom.stdout)
    assert body, dom.stderr[-2000:]
    total = re.search(r'data-images-total="(\d+)"', body.group(0))
    loaded = re.search(r'data-images-loaded="(\d+)"', body.group(0))
    assert total and loaded, body.group(0)
    assert int(total.group(1)) >= min_images and loaded.group(1) == total.group(1), body.group(0)

    r = browse(exe, f"--window-size=1280,{height}", "--hide-scrollbars", f"--screenshot={shot}", url)
    assert shot.exists(), r.stderr[-2000:]
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(shot)
    assert img.shape[0] >= height - 10 and img.shape[1] >= 1200
    rgb = img[..., :3].reshape(-1, 3)
    colors = np.unique((rgb * 255).astype(np.uint8), axis=0)
    assert len(colors) > 200, len(colors)  # text, tables and plotted figures, not a blank page
    assert rgb.std() > 0.05
    return dom.stdout
