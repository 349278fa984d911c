#!/usr/bin/env python3
"""Measures, in headless Chromium, how fast `formpost serve`'s page uploads one large file
resumably, against the same file sent as one multipart XMLHttpRequest POST.

usage: browser_speed.py FORMPOST WORK_DIR [--size MiB] [--runs N] [--chunk MiB ...] [--raw]

Starts `FORMPOST serve` on a free port (storing in WORK_DIR/uploads, emptied after each
run; its log, with each request's duration, in WORK_DIR/serve.log), makes a file of --size MiB (1024 unless told) of random bytes in WORK_DIR, and uploads
it over loopback, unthrottled, --runs times (3 unless told) each way, alternating:
- page: chosen through the page's file input and sent by its script (the time from the
  click on its button to its `data-state="done"`): the file in appends of 16 to 64 MiB
  (about 2 s each), slices of the File;
- with --chunk, once per size given, the page's script altered to send appends of that
  size (DevTools lets the altered script past the page's Content-Security-Policy);
- xhr: the same file in a FormData (the form's title and the file) sent by one
  XMLHttpRequest POST from the same page, timed in the page;
- with --raw, raw: the same File as a resumable upload that is no form (created empty, then
  one PATCH of the File with `Upload-Complete: ?1`), timed in the page.
Prints each run's seconds and the medians as JSON, with the throughput in MB/s.
"""
import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

parser = argparse.ArgumentParser()
parser.add_argument("formpost")
parser.add_argument("work")
parser.add_argument("--size", type=int, default=1024, help="MiB")
parser.add_argument("--runs", type=int, default=3)
parser.add_argument("--chunk", type=int, nargs="*", default=[], help="MiB per PATCH, replacing the page's own")
parser.add_argument("--raw", action="store_true", help="also the File as a resumable upload that is no form")
arguments = parser.parse_args()
MiB = 1 << 20


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"):
        options.add_argument(argument)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")
    return webdriver.Chrome(options=options, service=Service(executable_path=shutil.which("chromedriver")))


def empty(directory):
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            os.remove(path)


def load(driver, url, chunk):
    if chunk:
        driver.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
    driver.get(url)
    if chunk:
        page = urllib.request.urlopen(url).read().decode()
        altered, low = re.subn(r"const MIN_APPEND = [^;]+;", f"const MIN_APPEND = {chunk * MiB};", page)
        altered, high = re.subn(r"const MAX_APPEND = [^;]+;", f"const MAX_APPEND = {chunk * MiB};", altered)
        if low != 1 or high != 1:
            sys.exit("browser_speed.py: the page's script has no `const MIN_APPEND = …;` or `const MAX_APPEND = …;` to alter")
        driver.execute_script("document.open(); document.write(arguments[0]); document.close();", altered)


def page_run(driver, url, path, chunk):
    load(driver, url, chunk)
    driver.find_element(By.ID, "files").send_keys(path)
    started = time.monotonic()
    driver.find_element(By.ID, "submit").click()
    # The page's state, or None once the browser has left it (its script did not run: the
    # browser sent the form itself).
    state = "return document.getElementById('upload-form') ? document.body.dataset.state : null"
    WebDriverWait(driver, 3600, poll_frequency=0.02).until(lambda d: d.execute_script(state) in ("done", "failed", None))
    seconds = time.monotonic() - started
    if driver.execute_script(state) is None:
        sys.exit("browser_speed.py: the page's script did not send the file: the browser sent the form itself")
    if driver.find_element(By.TAG_NAME, "body").get_attribute("data-state") != "done":
        sys.exit("browser_speed.py: the page's upload failed: " + driver.find_element(By.ID, "error").text)
    return seconds


def xhr_run(driver, url, path):
    load(driver, url, None)
    driver.find_element(By.ID, "files").send_keys(path)
    driver.set_script_timeout(3600)
    outcome = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const xhr = new XMLHttpRequest();
        xhr.open("POST", location.pathname);
        xhr.setRequestHeader("Accept", "application/json");
        const data = new FormData();
        data.append("title", "speed");
        data.append("files", document.getElementById("files").files[0]);
        const started = performance.now();
        xhr.onload = () => done({status: xhr.status, seconds: (performance.now() - started) / 1000});
        xhr.onerror = () => done({status: 0, seconds: 0});
        xhr.send(data);""")
    if outcome["status"] != 200:
        sys.exit(f"browser_speed.py: the multipart POST answered {outcome['status']}")
    return outcome["seconds"]


def raw_run(driver, url, path):
    load(driver, url, None)
    driver.find_element(By.ID, "files").send_keys(path)
    driver.set_script_timeout(3600)
    outcome = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const file = document.getElementById("files").files[0];
        const started = performance.now();
        const create = new XMLHttpRequest();
        create.open("POST", location.pathname);
        create.setRequestHeader("Upload-Complete", "?0");
        create.setRequestHeader("Upload-Length", String(file.size));
        create.setRequestHeader("Content-Type", "application/octet-stream");
        create.onerror = () => done({status: 0, seconds: 0});
        create.onload = () => {
            const xhr = new XMLHttpRequest();
            xhr.open("PATCH", create.getResponseHeader("Location"));
            xhr.setRequestHeader("Upload-Offset", "0");
            xhr.setRequestHeader("Upload-Complete", "?1");
            xhr.setRequestHeader("Content-Type", "application/partial-upload");
            xhr.onload = () => done({status: xhr.status, seconds: (performance.now() - started) / 1000});
            xhr.onerror = () => done({status: 0, seconds: 0});
            xhr.send(file);
        };
        create.send();""")
    if outcome["status"] != 200:
        sys.exit(f"browser_speed.py: the raw resumable upload answered {outcome['status']}")
    return outcome["seconds"]


def main():
    os.makedirs(arguments.work, exist_ok=True)
    storage = os.path.join(arguments.work, "uploads")
    path = os.path.join(arguments.work, "large.bin")
    size = arguments.size * MiB
    with open(path, "wb") as handle:
        for _ in range(arguments.size):
            handle.write(os.urandom(MiB))
    port = free_port()
    log = open(os.path.join(arguments.work, "serve.log"), "w")
    server = subprocess.Popen([arguments.formpost, "serve", "--port", str(port), "--dir", storage],
                              stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{port}/"
    for _ in range(600):
        try:
            urllib.request.urlopen(url).read()
            break
        except OSError:
            time.sleep(0.1)
    driver = start_browser()
    kinds = [("page", None)] + [(f"page, {chunk} MiB slices", chunk) for chunk in arguments.chunk]
    seconds = {kind: [] for kind, _ in kinds}
    seconds["xhr"] = []
    if arguments.raw:
        seconds["raw"] = []
    try:
        for _ in range(arguments.runs):
            for kind, chunk in kinds:
                seconds[kind].append(round(page_run(driver, url, path, chunk), 3))
                empty(storage)
            seconds["xhr"].append(round(xhr_run(driver, url, path), 3))
            empty(storage)
            if arguments.raw:
                seconds["raw"].append(round(raw_run(driver, url, path), 3))
                empty(storage)
    finally:
        driver.quit()
        server.terminate()
        server.wait()
        log.close()
        os.remove(path)
    medians = {kind: statistics.median(runs) for kind, runs in seconds.items()}
    json.dump({"size": size, "browser": "chromium", "seconds": seconds, "medians": medians,
               "MBps": {kind: round(size / median / 1e6) for kind, median in medians.items()},
               "ratioToXHR": {kind: round(medians["xhr"] / median, 2) for kind, median in medians.items()}}, sys.stdout, indent=1)
    print()


main()
