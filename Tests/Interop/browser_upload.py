#!/usr/bin/env python3
"""Uploads files through `formpost serve`'s page in headless Chromium (Selenium), and checks
every receipt against the files it made.

usage: browser_upload.py URL WORK_DIR SCREENSHOT MAX_FILE_SIZE

The page sends each file as a resumable upload when the server takes them, else the whole
form in one XMLHttpRequest: the checks are the same either way.

Makes files in WORK_DIR whose names hold quotes, %, emoji, spaces and markup, with random
content (one over 1 MiB, one empty), and then:
1. the page's form (its script): chosen through the file input, one more file dropped
   on the drop zone (a file made in the page, its name with CR LF and quotes), a non-ASCII
   title; waits for the receipt table and checks it (filename, size, SHA-256 of each, the
   cells' text and the raw JSON the page keeps), that the progress bar reached its end, and
   each file's element (`data-state="done"`, its `data-sha256`, its progress bar's
   `aria-valuenow`); saves a screenshot to SCREENSHOT;
2. a file over MAX_FILE_SIZE through the same form: the page must show the 413 and its message;
3. the plain form, submitted by the browser itself: checks the JSON Chromium then shows.
Prints {"browser", "made", "xhr", "plain"} as JSON (made: the files each receipt must list,
in order); exits 1, saying what differs, when a check fails.
Chromium and chromedriver are Debian's (found on PATH); Selenium Manager is never used.
"""
import base64
import hashlib
import json
import os
import shutil
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

URL, WORK_DIR, SCREENSHOT, MAX_FILE_SIZE = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

# Name -> size. Linux filenames cannot hold "/" or NUL; CR and LF come with the dropped file.
FILES = [
    ('my "quoted" file.txt', 3_001),
    ("100% done.bin", 1_572_871),
    ("emoji 🎉 photo.png", 204_800),
    ("<img src=x onerror=alert(1)> & back\\slash.txt", 0),
    ("ça va, naïve Ünïcödé.csv", 77),
]
DROPPED_NAME = 'dropped "line one"\r\nline two ✓.txt'
DROPPED_SIZE = 1_000
TITLE = "Grüße aus Köln — Καλημέρα “quoted” & <b>not bold</b>"
PLAIN_TITLE = "plain form: façade ✓ 100%"

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def describe(name, data):
    return {"filename": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def make_files():
    made, paths = [], []
    for name, size in FILES:
        data = os.urandom(size)
        path = os.path.join(WORK_DIR, name)
        with open(path, "wb") as handle:
            handle.write(data)
        made.append(describe(name, data))
        paths.append(path)
    return made, paths


def check_receipt(label, receipt, made, title):
    check(receipt.get("fields") == [{"name": "title", "value": title}], f"{label}: fields {receipt.get('fields')!r}, expected title={title!r}")
    files = receipt.get("files", [])
    check(len(files) == len(made), f"{label}: {len(files)} files in the receipt, {len(made)} sent")
    for got, expected in zip(files, made):
        check(got.get("name") == "files", f"{label}: part name {got.get('name')!r}")
        for key in ("filename", "size", "sha256"):
            check(got.get(key) == expected[key], f"{label}: {key} {got.get(key)!r}, expected {expected[key]!r} (file {expected['filename']!r})")


def start_browser():
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not chromedriver:
        sys.exit(f"browser_upload.py: chromium ({chromium}) and chromedriver ({chromedriver}) are needed: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,900",
                     "--force-device-scale-factor=1", "--hide-scrollbars", "--lang=en-US", "--no-first-run"):
        options.add_argument(argument)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")   # Chromium's sandbox refuses to run as root
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))


def wait_for_state(driver, states, seconds=30):
    WebDriverWait(driver, seconds).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-state") in states)
    return driver.find_element(By.TAG_NAME, "body").get_attribute("data-state")


def upload_with_page(driver, paths, made):
    """Sends the files (plus one dropped) through the page's own form; returns the receipt."""
    driver.get(URL)
    check(driver.title == "FormPost upload", f"page title {driver.title!r}")
    title = driver.find_element(By.ID, "title")
    title.send_keys(TITLE)
    check(title.get_attribute("value") == TITLE, f"the title field holds {title.get_attribute('value')!r}")
    driver.find_element(By.ID, "files").send_keys("\n".join(paths))
    dropped = os.urandom(DROPPED_SIZE)
    # A drop as the browser dispatches it, with a file made in the page.
    driver.execute_script("""
        const bytes = Uint8Array.from(atob(arguments[1]), (c) => c.charCodeAt(0));
        const transfer = new DataTransfer();
        transfer.items.add(new File([bytes], arguments[0], {type: "text/plain"}));
        const zone = document.getElementById("drop-zone");
        for (const type of ["dragenter", "dragover", "drop"]) {
            zone.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: transfer}));
        }
    """, DROPPED_NAME, base64.b64encode(dropped).decode())
    made = made + [describe(DROPPED_NAME, dropped)]
    listed = [item.find_element(By.TAG_NAME, "span").get_attribute("textContent") for item in driver.find_elements(By.CSS_SELECTOR, "#file-list li")]
    check(listed == [entry["filename"] for entry in made], f"the page lists the chosen files as {listed!r}")
    driver.find_element(By.ID, "submit").click()
    state = wait_for_state(driver, ("done", "failed"))
    if state != "done":
        failures.append(f"the page's upload failed: {driver.find_element(By.ID, 'error').text!r}")
        return made, None
    receipt = json.loads(driver.find_element(By.ID, "receipt-json").get_attribute("textContent"))
    check_receipt("page", receipt, made, TITLE)
    rows = driver.find_elements(By.CSS_SELECTOR, "#receipt-files tbody tr")
    cells = [[cell.get_attribute("textContent") for cell in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    sizes = [int(row.get_attribute("data-bytes")) for row in rows]
    check([[c[0], c[1], c[3]] for c in cells] == [["files", m["filename"], m["sha256"]] for m in made], f"the receipt table reads {cells!r}")
    check(sizes == [m["size"] for m in made], f"the receipt table's sizes are {sizes!r}")
    field_cells = [cell.get_attribute("textContent") for cell in driver.find_elements(By.CSS_SELECTOR, "#receipt-fields tbody td")]
    check(field_cells == ["title", TITLE], f"the fields table reads {field_cells!r}")
    check(not driver.find_elements(By.CSS_SELECTOR, "#receipt img, #receipt b"), "markup from the receipt became elements")
    progress = driver.find_element(By.ID, "progress")
    value, maximum = float(progress.get_attribute("value")), float(progress.get_attribute("max"))
    check(maximum >= sum(m["size"] for m in made) and value == maximum, f"the progress bar ended at {value} of {maximum}")
    elements = driver.execute_script("""return Array.from(document.querySelectorAll('#file-list li[data-file-name]'), (li) =>
        [li.dataset.fileName, li.dataset.state, li.dataset.sha256, Number(li.querySelector('[role=progressbar]').getAttribute('aria-valuenow'))])""")
    check(elements == [[m["filename"], "done", m["sha256"], m["size"]] for m in made], f"the files' elements read {elements!r}")
    check(driver.find_element(By.ID, "error").get_attribute("hidden") is not None, "an error is shown after a successful upload")
    errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    check(not errors, f"the console shows errors (a Content-Security-Policy violation?): {errors!r}")
    # The screenshot: the page down to the end of the receipt.
    bottom, chrome = driver.execute_script("return [document.getElementById('receipt').getBoundingClientRect().bottom + window.scrollY,"
                                           " window.outerHeight - window.innerHeight]")
    driver.set_window_size(1100, int(bottom) + 24 + chrome)
    driver.save_screenshot(SCREENSHOT)
    return made, receipt


def refused_upload(driver):
    """A file over the server's limit: the page shows the 413 and the server's message."""
    path = os.path.join(WORK_DIR, "too large.bin")
    with open(path, "wb") as handle:
        handle.write(os.urandom(MAX_FILE_SIZE + 1))
    driver.get(URL)
    driver.find_element(By.ID, "files").send_keys(path)
    driver.find_element(By.ID, "submit").click()
    state = wait_for_state(driver, ("done", "failed"))
    error = driver.find_element(By.ID, "error")
    check(state == "failed" and error.is_displayed(), f"a file over the limit ended in state {state!r}")
    check("HTTP 413" in error.text and "maxFileSize" in error.text, f"the error shown for a file over the limit: {error.text!r}")
    check(not driver.find_element(By.ID, "receipt").is_displayed(), "a receipt is shown for a refused upload")
    state = driver.execute_script("const li = document.querySelector('#file-list li[data-file-name]'); return li && li.dataset.state")
    check(state == "failed", f"the refused file's element is in state {state!r}")


def upload_with_plain_form(driver, paths, made):
    """Sends the files through the form without script; returns the JSON Chromium shows."""
    driver.get(URL)
    driver.find_element(By.ID, "plain-title").send_keys(PLAIN_TITLE)
    driver.find_element(By.ID, "plain-files").send_keys("\n".join(paths))
    driver.find_element(By.ID, "plain-submit").click()
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "return document.readyState === 'complete' && !document.getElementById('plain-form')"))
    shown = driver.execute_script("const pre = document.querySelector('pre'); return pre ? pre.textContent : document.body.innerText")
    try:
        receipt = json.loads(shown)
    except ValueError:
        failures.append(f"Chromium shows no JSON after the plain form: {shown[:300]!r}")
        return None
    check_receipt("plain form", receipt, made, PLAIN_TITLE)
    return receipt


def main():
    started = time.monotonic()
    made, paths = make_files()
    driver = start_browser()
    try:
        browser = driver.capabilities.get("browserVersion", "?")
        with_drop, xhr = upload_with_page(driver, paths, made)
        refused_upload(driver)
        plain = upload_with_plain_form(driver, paths, made)
    finally:
        driver.quit()
    json.dump({"browser": browser, "seconds": round(time.monotonic() - started, 1),
               "made": {"xhr": with_drop, "plain": made}, "xhr": xhr, "plain": plain}, sys.stdout, ensure_ascii=False)
    if failures:
        sys.stderr.write("browser_upload.py: " + "\n".join(failures) + "\n")
        sys.exit(1)


main()
