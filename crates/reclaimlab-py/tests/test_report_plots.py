"""Plots (reclaimlab.plot, `reclaimlab plot`) and the HTML report, rendered in headless
Chromium: every plot is there, decoded, and not blank."""

import base64
import io
import json
import os
import re
import shutil
import subprocess

import pytest

import reclaimlab
import reclaimlab.plot as rplot


def _chromium() -> str:
    """Debian's chromium; installed with apt-get when missing (as root), as .ci/run does."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        path = shutil.which("chromium")
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("chromium is missing and could not be installed (apt-get install chromium)")
    pytest.skip("chromium is not installed (apt-get install chromium)")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    d = tmp_path_factory.mktemp("results")
    cmp = d / "cmp.json"
    reclaimlab.cli("compare", "memcg-limit", "--scale", "0.25", "--policies",
                   "classic,mglru:7.2", "--seeds", "3", "--no-store", "--sample-ms", "50",
                   "--save", str(cmp))
    trace = d / "z.trace"
    reclaimlab.cli("trace", "zipf", "--scale", "0.125", "-o", str(trace))
    mrc = d / "mrc.json"
    mrc.write_text(reclaimlab.cli("mrc", "--trace", str(trace), "--json", "--points", "8"))
    return {"cmp": cmp, "mrc": mrc, "dir": d}


def _gray_stats(im):
    """(share of pixels darker than near-white, variance of the gray levels) of an image."""
    px = im.convert("L").tobytes()
    nonwhite = sum(1 for p in px if p < 240) / len(px)
    mean = sum(px) / len(px)
    var = sum((p - mean) ** 2 for p in px) / len(px)
    return nonwhite, var


def _png_stats(data: bytes):
    from PIL import Image
    im = Image.open(io.BytesIO(data))
    return (im.size, *_gray_stats(im))


def test_each_plot_function_draws_something(results, tmp_path):
    runs = json.loads(results["cmp"].read_text())
    mglru = runs[1][0]
    ts = reclaimlab.timeseries_frame(mglru)
    table = reclaimlab.compare_table("memcg-limit", scale=0.25, policies="classic,mglru:7.2",
                                     seeds=3, store=False)
    axes = {
        "timeseries": rplot.timeseries(ts),
        "generations": rplot.generations(ts),
        "latency": rplot.latency_cdf(runs),
        "compare": rplot.compare_bars(table, "hit_ratio"),
        "mrc": rplot.mrc(results["mrc"]),
    }
    assert len(axes["timeseries"].lines) >= 1
    assert len(axes["latency"].lines) == 2
    assert len(axes["compare"].patches) == 2
    assert len(axes["mrc"].lines) == 1
    assert len(axes["generations"].collections) >= 2
    for name, ax in axes.items():
        out = tmp_path / f"{name}.png"
        rplot.save(ax, out)
        size, nonwhite, var = _png_stats(out.read_bytes())
        assert size[0] > 300 and nonwhite > 0.01 and var > 100, (name, size, nonwhite, var)
    with pytest.raises(ValueError, match="no MGLRU generation sizes"):
        rplot.generations(reclaimlab.timeseries_frame(runs[0][0]))


def test_the_plot_command_writes_pictures_and_refuses_what_it_cannot_draw(results, tmp_path):
    for kind, inp in [("compare", results["cmp"]), ("latency", results["cmp"]),
                      ("mrc", results["mrc"])]:
        out = tmp_path / f"{kind}.png"
        reclaimlab.cli("plot", kind, str(inp), "-o", str(out))
        _, nonwhite, var = _png_stats(out.read_bytes())
        assert nonwhite > 0.01 and var > 100, kind
    with pytest.raises(reclaimlab.ReclaimlabError, match="--columns has no effect"):
        reclaimlab.cli("plot", "mrc", str(results["mrc"]), "-o", str(tmp_path / "x.png"),
                       "--columns", "a")


def _run_chromium(chromium, args, timeout=120):
    return subprocess.run(
        [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--disable-extensions", "--no-first-run", "--mute-audio", "--window-size=1280,4000",
         *args], capture_output=True, timeout=timeout)


def test_the_report_renders_in_chromium_with_every_plot(results, tmp_path):
    chromium = _chromium()
    html = tmp_path / "report.html"
    reclaimlab.report([results["cmp"], results["mrc"]], html, title="test report")
    text = html.read_text()
    # Self-contained: no address outside the file.
    assert not re.search(r"(src|href)=\"(https?:)?//", text)
    assert reclaimlab.model_version() in text
    assert "vs first (95%)" in text and "hit_ratio" in text
    n_imgs = text.count('<img class="plot"')
    # compare bars (4 metrics), latency CDF, 2 time series (1 per policy... up to 4 runs),
    # generations of the MGLRU runs, the MRC.
    assert n_imgs >= 8, n_imgs
    dom = _run_chromium(chromium, ["--virtual-time-budget=5000", "--dump-dom",
                                   html.as_uri()])
    assert dom.returncode == 0, dom.stderr.decode()[-2000:]
    dom = dom.stdout.decode()
    naturals = re.findall(r'data-natural="(\d+)x(\d+)"', dom)
    rects = [tuple(map(int, r.split(","))) for r in re.findall(r'data-rect="([\d,.-]+)"', dom)]
    assert len(naturals) == n_imgs and len(rects) == n_imgs, (len(naturals), n_imgs)
    assert all(int(w) > 0 and int(h) > 0 for w, h in naturals), naturals
    height = int(re.search(r'data-height="(\d+)"', dom).group(1))
    shot = tmp_path / "shot.png"
    r = _run_chromium(chromium, [f"--window-size=1280,{height}", f"--screenshot={shot}",
                                 html.as_uri()])
    assert shot.exists(), r.stderr.decode()[-2000:]
    from PIL import Image
    im = Image.open(shot).convert("L")
    assert im.size[1] >= max(y + h for _, y, _, h in rects) - 2
    for (x, y, w, h) in rects:
        assert w > 100 and h > 100, (x, y, w, h)
        nonwhite, var = _gray_stats(im.crop((x, y, x + w, y + h)))
        # A drawn plot: axes, lines, bars and text, not a blank or broken image.
        assert nonwhite > 0.02 and var > 200, ((x, y, w, h), nonwhite, var)
    # A blank region (the page's right margin) fails the same check: the check can fail.
    assert _gray_stats(im.crop((1240, 0, 1280, 200)))[0] == 0
