#!/usr/bin/env python3
"""The HTML report in a real browser (headless Chromium from Debian).

1. A real sweep on two fixture models (one trial made to fail by fault injection) -> results.db.
2. `infertune report` -> report.html: it must hold a row for every trial of the store, and the store's bytes
   must not change (reports only read).
3. Chromium loads the page with the network disabled: a screenshot that is not blank, no console message at
   all (the page logs nothing; any error, failed request or CSP violation would show here), and the page's own
   #selftest (sort every sortable table both ways, filter) reports ok.
4. The same for a store grown to 1,000 trials: generating and loading the report stays fast (times printed).

Usage: browser_check.py INFERTUNE FIXTURE_MODELS_DIR WORK_DIR. Exit 77 (ctest: skipped) without Chromium.
"""
import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(77)


def check(condition, message):
    if not condition:
        print(f"FAIL: {message}")
        sys.exit(1)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run(command, env=None, timeout=600):
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    return result.returncode, result.stdout, result.stderr


def chromium(browser, work, *args):
    """Chromium, headless, with no network (an unreachable proxy) and its own profile folder."""
    profile = os.path.join(work, "chromium-profile")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>", f"--user-data-dir={profile}",
               "--enable-logging=stderr", "--v=0", *args]
    return run(command, timeout=180)


def check_screenshot(path):
    """Not blank: many colours, and a good share of the page is not background."""
    try:
        from PIL import Image
    except ImportError:
        skip("the Python package pillow is not installed (scripts/setup installs it)")
    with Image.open(path) as image:
        rgb = image.convert("RGB")
        width, height = rgb.size
        small = rgb.resize((width // 4, height // 4))
    data = small.tobytes()
    pixels = [data[i:i + 3] for i in range(0, len(data), 3)]
    background = {b"\xff\xff\xff", bytes((246, 247, 249))}  # white and the page's background
    colours = len(set(pixels))
    share = sum(1 for p in pixels if p not in background) / len(pixels)
    print(f"screenshot {path}: {width}x{height}, {colours} colours, {share:.1%} of the page inked")
    check(colours >= 20, f"screenshot has {colours} colours: blank or unstyled")
    check(share >= 0.05, f"screenshot is {share:.1%} inked: blank")


def check_in_browser(browser, work, html, label):
    url = "file://" + os.path.abspath(html)
    shot = os.path.join(work, f"{label}.png")
    start = time.monotonic()
    code, out, err = chromium(browser, work, f"--screenshot={shot}", "--window-size=1400,2400",
                              "--hide-scrollbars", url)
    seconds = time.monotonic() - start
    check(code == 0 and os.path.exists(shot), f"chromium could not screenshot {html}: {err[-2000:]}")
    console = [line for line in err.splitlines() if ":CONSOLE" in line]
    check(not console, "the page logged to the console:\n" + "\n".join(console[:20]))
    check_screenshot(shot)
    code, dom, err = chromium(browser, work, "--dump-dom", url + "#selftest")
    check(code == 0, f"chromium --dump-dom failed: {err[-2000:]}")
    console = [line for line in err.splitlines() if ":CONSOLE" in line]
    check(not console, "the self-test logged to the console:\n" + "\n".join(console[:20]))
    match = re.search(r'<body[^>]*data-selftest="([^"]*)"', dom)
    check(match is not None, "the page's self-test did not run (no data-selftest on <body>)")
    check(match.group(1) == "ok", f"the page's self-test says: {match.group(1)}")
    print(f"{label}: loaded, screenshot and self-test ok ({seconds:.1f} s for the screenshot run)")


def trial_ids_in_table(html):
    """Trial ids of the rows of the 'trials' table (the second cell of each row)."""
    table = html[html.index('<table id="trials"'):]
    table = table[:table.index("</table>")]
    return [int(m) for m in re.findall(r'<tr><td>[^<]*</td><td class="n" data-v="(\d+)">', table)]


def report(infertune, db, html):
    start = time.monotonic()
    code, out, err = run([infertune, "report", "--db", db, "-o", html])
    seconds = time.monotonic() - start
    check(code == 0, f"infertune report failed ({code}): {err}")
    with open(html, encoding="utf-8") as f:
        text = f.read()
    print(f"report {html}: {len(text) / 1024:.0f} KiB in {seconds:.2f} s")
    return text


def store_trial_ids(db):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        latest = con.execute("SELECT max(id) FROM sweeps").fetchone()[0]
        return sorted(r[0] for r in con.execute("SELECT id FROM trials WHERE sweep_id = ?", (latest,)))


def grow_store(db, target):
    """Copies of the sweep's trials (new config hashes, with their samples and metrics) up to `target`."""
    with sqlite3.connect(db) as con:
        sweep = con.execute("SELECT max(id) FROM sweeps").fetchone()[0]
        originals = con.execute("SELECT id FROM trials WHERE sweep_id = ?", (sweep,)).fetchall()
        count, copy = len(originals), 0
        while count < target:
            for (trial,) in originals:
                if count >= target:
                    break
                copy += 1
                con.execute(
                    "INSERT INTO trials (sweep_id, config_hash, config, model_id, status, reason, "
                    "predicted_peak_rss_bytes, peak_rss_bytes, started_at, finished_at, duration_s) "
                    "SELECT sweep_id, config_hash || '-copy' || ?, json_set(config, '$.threads', ? % 8 + 1), model_id, "
                    "status, reason, predicted_peak_rss_bytes, peak_rss_bytes, started_at, finished_at, duration_s "
                    "FROM trials WHERE id = ?", (copy, copy, trial))
                new_id = con.execute("SELECT last_insert_rowid()").fetchone()[0]
                scale = 1 + (copy % 17) / 40
                con.execute("INSERT INTO samples (trial_id, metric, repetition, value, is_warmup) "
                            "SELECT ?, metric, repetition, value * ?, is_warmup FROM samples WHERE trial_id = ?",
                            (new_id, scale, trial))
                con.execute("INSERT INTO metrics SELECT ?, metric, n, mean * ?, stddev, median * ?, p50 * ?, p95 * ?, "
                            "p99 * ?, ci95_half_width FROM metrics WHERE trial_id = ?",
                            (new_id, scale, scale, scale, scale, scale, trial))
                count += 1


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    infertune, models, work = sys.argv[1:]
    browser = find_chromium()
    if browser is None:
        skip("Chromium is not installed (scripts/setup installs Debian's chromium)")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    db = os.path.join(work, "results.db")
    env = dict(os.environ, INFERTUNE_SWEEP_FAULT="exit3@1", XDG_CACHE_HOME=os.path.join(work, "cache"))
    sweep = [infertune, "sweep", "--db", db, "-m", os.path.join(models, "fixture-llama-Q4_0.gguf"),
             "-m", os.path.join(models, "fixture-llama-Q8_0.gguf"), "-t", "1,2", "-ub", "8,32", "-b", "32",
             "-p", "16", "-n", "8", "--batched", "1,2:16,8", "--min-reps", "2", "--max-reps", "3", "--no-warmup"]
    code, out, err = run(sweep, env=env)
    check(code == 0, f"the sweep failed ({code}):\n{err[-3000:]}")

    with open(db, "rb") as f:
        before = hashlib.sha256(f.read()).hexdigest()
    html_path = os.path.join(work, "report.html")
    html = report(infertune, db, html_path)
    with open(db, "rb") as f:
        check(hashlib.sha256(f.read()).hexdigest() == before, "infertune report changed the store")
    ids = store_trial_ids(db)
    check(len(ids) >= 10, f"the sweep recorded only {len(ids)} trials")
    check(sorted(trial_ids_in_table(html)) == ids, "the trials table does not hold exactly the store's trials")
    check("exit status 3" in html or "exit3" in html or "status 3" in html,
          "the injected failure's reason is not in the report")
    check_in_browser(browser, work, html_path, "report")

    big_db = os.path.join(work, "big.db")
    shutil.copy(db, big_db)
    grow_store(big_db, 1000)
    big_path = os.path.join(work, "big.html")
    big = report(infertune, big_db, big_path)
    check(len(trial_ids_in_table(big)) == 1000, "the 1,000-trial report does not show 1,000 trials")
    check_in_browser(browser, work, big_path, "big")
    print("browser check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
