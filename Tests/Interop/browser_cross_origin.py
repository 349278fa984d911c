#!/usr/bin/env python3
"""Uploads from a page of another origin to a receiver, in headless Chromium (Selenium).

usage: browser_cross_origin.py RECEIVER_BASE APP_PORT OTHER_PORT

Serves one page on http://127.0.0.1:APP_PORT (an origin the receiver lists) and the same
page on http://127.0.0.1:OTHER_PORT (one it does not). The page, from either, sends to
RECEIVER_BASE with fetch:
- multipart: a FormData with a field and a 5-byte file, POST /upload; reads the receipt;
- tus: POST /files (Tus-Resumable, Upload-Length 5), then PATCH its Location with the 5
  bytes at offset 0; reads Location and Upload-Offset, which only exposed fields let it read;
- draft: POST /upload with Upload-Complete ?1 and the 5 bytes (a creation that completes).
Each step records {status, location, offset, body} or {error} when the browser refused
(a TypeError: no Access-Control-Allow-Origin). Prints {"app": [...], "other": [...]} as JSON.
Written from the tus 1.0 protocol and the draft, not from a client library.
Chromium and chromedriver are Debian's (found on PATH).
"""
import http.server
import json
import os
import shutil
import sys
import threading

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

RECEIVER, APP_PORT, OTHER_PORT = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

PAGE = """<!doctype html><meta charset="utf-8"><title>app</title><script>
const receiver = RECEIVER;
const bytes = () => new Blob(["hello"], { type: "application/octet-stream" });
async function step(run) {
  try { return await run(); } catch (error) { return { error: String(error) }; }
}
async function answer(response) {
  return { status: response.status, location: response.headers.get("Location"),
           offset: response.headers.get("Upload-Offset"), body: await response.text() };
}
async function uploads() {
  const results = [];
  results.push(await step(async () => {
    const form = new FormData();
    form.append("title", "from another origin");
    form.append("file", bytes(), "hello.txt");
    return answer(await fetch(receiver + "/upload", { method: "POST", body: form }));
  }));
  results.push(await step(async () => {
    const created = await answer(await fetch(receiver + "/files", { method: "POST",
      headers: { "Tus-Resumable": "1.0.0", "Upload-Length": "5" } }));
    if (!created.location) return { created };
    const url = new URL(created.location, receiver).href;
    const appended = await answer(await fetch(url, { method: "PATCH", body: bytes(),
      headers: { "Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream" } }));
    return { created, appended };
  }));
  results.push(await step(async () => answer(await fetch(receiver + "/upload", { method: "POST", body: bytes(),
    headers: { "Upload-Complete": "?1", "Upload-Draft-Interop-Version": "6" } }))));
  return results;
}
uploads().then((results) => { window.results = results; });
</script>""".replace("RECEIVER", json.dumps(RECEIVER))


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve(port):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_browser():
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not chromedriver:
        sys.exit(f"browser_cross_origin.py: chromium ({chromium}) and chromedriver ({chromedriver}) are needed: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"):
        options.add_argument(argument)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")   # Chromium's sandbox refuses to run as root
    return webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))


servers = [serve(APP_PORT), serve(OTHER_PORT)]
browser = start_browser()
try:
    outcome = {}
    for name, port in (("app", APP_PORT), ("other", OTHER_PORT)):
        browser.get(f"http://127.0.0.1:{port}/app.html")
        WebDriverWait(browser, 60).until(lambda driver: driver.execute_script("return window.results !== undefined"))
        outcome[name] = browser.execute_script("return window.results")
    print(json.dumps(outcome))
finally:
    browser.quit()
    for server in servers:
        server.shutdown()
