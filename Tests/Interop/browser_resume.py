#!/usr/bin/env python3
"""Uploads files through `formpost serve`'s page in headless Chromium (Selenium) under a
fault, and checks that each file resumes: the receipt's SHA-256 is the file's, and the bytes
the browser sent stay close to the files' size.

usage: browser_resume.py WORK_DIR SCENARIO PAGE_PATH RECEIVER [ARGUMENT...]

Starts the receiver — the command RECEIVER ARGUMENT..., where `{port}` and `{dir}` stand for
a free port and WORK_DIR/uploads: `formpost serve --port {port} --dir {dir}`, or a Vapor
app — whose upload page answers at PAGE_PATH (and sends there), behind a proxy (standard
library) that counts the bytes the browser sends and can cut one connection; the browser's
upload is throttled by DevTools' network emulation. SCENARIO is one of:
- pause: the file is paused at 40 % (nothing is sent while it is) and resumed;
- offline: the network is taken offline at 40 % for 4 s: the file waits for it
  (`data-waiting-for="online"`), then goes on;
- killed: the receiver is killed (SIGKILL) at 40 % and started again on the same directory
  and port 2 s later: the file retries until it answers, and resumes;
- reload: the tab is reloaded at 50 % and the same file chosen again: it resumes from the
  server's offset (`data-resumed-from` > 0); a record past its expiry, left in localStorage
  before the reload, is forgotten;
- reload-buffered: the same through a proxy that holds each request's body until all of it
  has come (as nginx does by default) and a link of 8 MiB/s, with a file of 48 MiB reloaded
  once 24 MiB were sent: the append in flight never reaches the receiver, and the file
  resumes from the end of those acknowledged before it (at least 16 MiB, the page's smallest
  append of a file, about 2 s of sending at that pace), not from 0;
- three: three files at once; the proxy cuts the first connection that has carried 1.2 MiB:
  that file retries and resumes, the others go on;
- different: the tab is reloaded at 40 % and another file with the same name, size and
  modification time chosen: it is uploaded from zero, never completed onto the first one's upload.
In every scenario the page must remember no upload once done. Prints {"scenario", "made" (filename, size, sha256 of each file the receipt must list),
"receipt", "sent" (bytes the browser sent), "observed"} as JSON; exits 1, saying what
differs, when a check fails. Chromium and chromedriver are Debian's (found on PATH).
"""
import asyncio
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

WORK_DIR, SCENARIO, PAGE_PATH, RECEIVER = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
MiB = 1 << 20
# DevTools' upload throttle: a file of 12 MiB takes some 4 s, time enough to fault it midway.
# It is past the page's 8 MiB from which the file itself is sent in one append (what is left of
# it after a fault goes in slices); the three files of SCENARIO three are below it.
THROTTLE = 3 * MiB
SIZE = 12 * MiB
# reload-buffered: a file that takes several of the page's appends (at most 16 MiB each).
BUFFERED_THROTTLE, BUFFERED_SIZE, APPEND = 8 * MiB, 48 * MiB, 16 * MiB   # APPEND: the page's smallest
# Generous bounds: the tests run on a loaded machine of two cores.
WAIT = 180
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Proxy:
    """Forwards 127.0.0.1:port to the receiver's port, counting the bytes the browser sends;
    with cut_after, closes the first connection that carries more than that many bytes, and
    refuses new connections for 2 s after, as a network that dropped: Chromium re-sends on
    its own a request cut on a kept-alive connection, and that request, reaching the receiver,
    would be refused (409) only once its body was sent. With buffering, each request (its
    body by Content-Length) is forwarded only once all of it has come, as nginx's
    proxy_request_buffering does: a request cut before its end never reaches the receiver;
    `sent` then counts the bytes forwarded."""

    def __init__(self, target, cut_after=None, buffering=False):
        self.port, self.target, self.cut_after, self.sent, self.cuts = free_port(), target, cut_after, 0, 0
        self.buffering = buffering
        self.refusing_until = 0
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        threading.Thread(target=self.serve, args=(started,), daemon=True).start()
        started.wait()

    def serve(self, started):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self.connection, "127.0.0.1", self.port))
        started.set()
        self.loop.run_until_complete(server.serve_forever())

    async def connection(self, client_reader, client_writer):
        if time.monotonic() < self.refusing_until:
            client_writer.transport.abort()
            return
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            client_writer.close()   # the receiver is down: the browser sees the connection fail
            return
        cut = asyncio.Event()

        async def buffered():
            """Forwards each whole request; drops one whose client went away before its end."""
            pending, need = bytearray(), None
            while data := await client_reader.read(65536):
                pending += data
                while True:
                    if need is None:
                        end = pending.find(b"\r\n\r\n")
                        if end < 0:
                            break
                        length = 0
                        for line in bytes(pending[:end]).split(b"\r\n")[1:]:
                            name, _, value = line.partition(b":")
                            if name.strip().lower() == b"content-length":
                                length = int(value.strip())
                        need = end + 4 + length
                    if len(pending) < need:
                        break
                    message = bytes(pending[:need])
                    del pending[:need]
                    need = None
                    self.sent += len(message)
                    server_writer.write(message)
                    await server_writer.drain()

        async def upstream():
            carried = 0
            try:
                if self.buffering:
                    await buffered()
                    return
                while data := await client_reader.read(65536):
                    if self.cut_after is not None and self.cuts == 0 and carried + len(data) > self.cut_after:
                        self.cuts += 1
                        self.refusing_until = time.monotonic() + 2
                        cut.set()
                        return
                    carried += len(data)
                    self.sent += len(data)
                    server_writer.write(data)
                    await server_writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                if not cut.is_set():
                    try:
                        server_writer.write_eof()
                    except (OSError, RuntimeError):
                        pass

        async def downstream():
            try:
                while data := await server_reader.read(65536):
                    client_writer.write(data)
                    await client_writer.drain()
            except (ConnectionError, OSError):
                pass

        up, down, cutting = asyncio.ensure_future(upstream()), asyncio.ensure_future(downstream()), asyncio.ensure_future(cut.wait())
        await asyncio.wait([cutting, down], return_when=asyncio.FIRST_COMPLETED)
        cutting.cancel()
        if cut.is_set():
            up.cancel()
            down.cancel()
        else:
            await up
        for writer in (server_writer, client_writer):
            try:
                writer.transport.abort() if cut.is_set() else writer.close()
            except (OSError, RuntimeError):
                pass


class Receiver:
    """The receiver's command on a port of its own, storing in WORK_DIR/uploads."""

    def __init__(self):
        self.port, self.directory, self.process = free_port(), os.path.join(WORK_DIR, "uploads"), None
        os.makedirs(self.directory, exist_ok=True)
        self.start()

    def start(self):
        command = [argument.replace("{port}", str(self.port)).replace("{dir}", self.directory) for argument in RECEIVER]
        self.process = subprocess.Popen(command,
                                        stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK_DIR, "serve.log"), "a"))
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        sys.exit("browser_resume.py: %s did not listen within %d s" % (RECEIVER[0], WAIT))

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


def make_file(name, size):
    # Ending as a text file with CRLF lines does: bytes that may begin the form's closing
    # delimiter, which the server takes only once it sees what follows them.
    data = os.urandom(size - 2) + b"\r\n"
    path = os.path.join(WORK_DIR, name)
    with open(path, "wb") as handle:
        handle.write(data)
    return path, {"filename": name, "size": size, "sha256": hashlib.sha256(data).hexdigest()}


def start_browser():
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not chromedriver:
        sys.exit(f"browser_resume.py: chromium ({chromium}) and chromedriver ({chromedriver}) are needed: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,900", "--lang=en-US", "--no-first-run"):
        options.add_argument(argument)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")   # Chromium's sandbox refuses to run as root
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))


def network(driver, offline=False):
    """DevTools' network emulation: the upload throttled, or the network offline."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": offline, "latency": 5, "downloadThroughput": -1,
        "uploadThroughput": BUFFERED_THROTTLE if SCENARIO == "reload-buffered" else THROTTLE})


def items(driver):
    """Each file's element, as the page's contract describes it."""
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('#file-list li[data-file-name]'), (li) => ({
            name: li.dataset.fileName, state: li.dataset.state, offset: Number(li.dataset.offset),
            resumedFrom: Number(li.dataset.resumedFrom), retries: Number(li.dataset.retries || 0),
            waitingFor: li.dataset.waitingFor || null, sha256: li.dataset.sha256 || null,
            sent: Number(li.querySelector('[role=progressbar]').getAttribute('aria-valuenow')),
            note: li.querySelector('.note').textContent }));""")


def choose(driver, url, paths):
    driver.get(url)
    driver.find_element(By.ID, "files").send_keys("\n".join(paths))
    driver.find_element(By.ID, "submit").click()


def wait_until(driver, what, predicate, seconds=WAIT):
    """Waits for predicate(items) and returns the items; records a failure past the bound."""
    try:
        return WebDriverWait(driver, seconds, poll_frequency=0.05).until(lambda d: (lambda found: found if predicate(found) else False)(items(d)))
    except Exception:
        failures.append(f"{what}: not seen within {seconds} s; the files stand at {items(driver)!r}")
        return None


def past(fraction, size):
    return lambda found: bool(found) and found[0]["sent"] >= fraction * size


def finished(driver):
    """Waits for the page to end; returns its receipt."""
    try:
        WebDriverWait(driver, WAIT).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-state") in ("done", "failed"))
    except Exception:
        failures.append(f"the page did not end within {WAIT} s; the files stand at {items(driver)!r}")
        return None
    if driver.find_element(By.TAG_NAME, "body").get_attribute("data-state") != "done":
        failures.append(f"the page's upload failed: {driver.find_element(By.ID, 'error').text!r}")
    return json.loads(driver.find_element(By.ID, "receipt-json").get_attribute("textContent") or "null")


def main():
    receiver = Receiver()
    proxy = Proxy(receiver.port, cut_after=int(1.2 * MiB) if SCENARIO == "three" else None, buffering=SCENARIO == "reload-buffered")
    url = f"http://127.0.0.1:{proxy.port}{PAGE_PATH}"
    observed, before_reload, receipt, final = {}, 0, None, []
    driver = start_browser()
    try:
        network(driver)
        if SCENARIO == "three":
            made = [make_file(f"part {index}.bin", 2 * MiB) for index in (1, 2, 3)]
        else:
            made = [make_file("video.bin", BUFFERED_SIZE if SCENARIO == "reload-buffered" else SIZE)]
        paths, made = [path for path, _ in made], [entry for _, entry in made]
        size = made[0]["size"]
        choose(driver, url, paths)
        if SCENARIO == "pause":
            wait_until(driver, "40 % sent", past(0.4, size))
            driver.find_element(By.CSS_SELECTOR, "#file-list li button").click()
            wait_until(driver, "the file paused", lambda found: found[0]["state"] == "paused")
            time.sleep(1)
            before = proxy.sent
            time.sleep(1.5)
            observed["sentWhilePaused"] = proxy.sent - before
            check(observed["sentWhilePaused"] == 0, f"{observed['sentWhilePaused']} bytes were sent while the file was paused")
            driver.find_element(By.CSS_SELECTOR, "#file-list li button").click()
        elif SCENARIO == "offline":
            wait_until(driver, "40 % sent", past(0.4, size))
            network(driver, offline=True)
            waiting = wait_until(driver, "the file waiting for the network", lambda found: found[0]["waitingFor"] == "online" and found[0]["state"] == "waiting")
            observed["whileOffline"] = waiting
            time.sleep(4)
            after = items(driver)
            check(after[0]["state"] == "waiting" and after[0]["waitingFor"] == "online", f"after 4 s offline the file stands at {after!r}")
            observed["retriesWhileOffline"] = after[0]["retries"]
            network(driver, offline=False)
        elif SCENARIO == "killed":
            wait_until(driver, "40 % sent", past(0.4, size))
            receiver.kill()
            observed["retrying"] = wait_until(driver, "a retry counted down", lambda found: found[0]["state"] == "waiting" and found[0]["waitingFor"] == "retry")
            time.sleep(2)
            receiver.start()
        elif SCENARIO in ("reload", "reload-buffered", "different"):
            wait_until(driver, "40 % sent" if SCENARIO == "different" else "half sent", past(0.4 if SCENARIO == "different" else 0.5, size))
            time.sleep(0.5)
            # A record past its expiry, which the page forgets when it loads.
            driver.execute_script("""localStorage.setItem('formpost-upload ["expired"]',
                JSON.stringify({url: '/uploads/0123456789abcdef0123456789abcdef', expires: Date.now() - 1000}))""")
            driver.refresh()
            if SCENARIO == "different":
                first = os.stat(paths[0])
                _, made[0] = make_file("video.bin", size)
                os.utime(paths[0], ns=(first.st_atime_ns, first.st_mtime_ns))
            network(driver)
            before_reload = proxy.sent
            choose(driver, url, paths)
        elif SCENARIO == "three":
            # Under way: sending, or (the one cut) waiting to send again.
            busiest = wait_until(driver, "three files sent at once",
                                 lambda found: sum(item["state"] in ("uploading", "waiting") and item["sent"] > 0 for item in found) == 3)
            observed["atOnce"] = busiest
        receipt = finished(driver)
        final = items(driver)
        # Finished uploads are forgotten, and expired ones.
        observed["remembered"] = driver.execute_script("return Object.keys(localStorage).filter((key) => key.startsWith('formpost-upload '))")
        check(observed["remembered"] == [], f"the page still remembers {observed['remembered']!r}")
        observed["final"] = final
        errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        observed["consoleErrors"] = errors
    finally:
        driver.quit()
        receiver.stop()
    total = sum(entry["size"] for entry in made)
    if receipt:
        check([(f["filename"], f["size"], f["sha256"]) for f in receipt["files"]] == [(m["filename"], m["size"], m["sha256"]) for m in made],
              f"the receipt lists {receipt['files']!r}, the files made are {made!r}")
    check([item["sha256"] for item in final] == [m["sha256"] for m in made], f"the files' data-sha256 are {[item['sha256'] for item in final]!r}")
    # The bytes the browser sent: the files, the forms' framing and the requests' heads, and
    # what a fault cut short (at most what was on its way), never the files again from zero.
    # For the other file chosen after the reload: what was sent since.
    sent = proxy.sent - (before_reload if SCENARIO == "different" else 0)
    check(sent <= 1.1 * total + 256 * 1024, f"the browser sent {sent} bytes for {total} bytes of files")
    if SCENARIO == "reload":
        check(final[0]["resumedFrom"] > 0, f"the file chosen again after the reload began at {final[0]['resumedFrom']}, not where the server stood")
    if SCENARIO == "reload-buffered":
        check(final[0]["resumedFrom"] >= APPEND, f"the file chosen again after the reload began at {final[0]['resumedFrom']}, "
                                                 f"not at the end of the appends acknowledged before it (24 MiB were sent)")
    if SCENARIO == "different":
        check(final[0]["resumedFrom"] == 0, f"the other file was resumed from {final[0]['resumedFrom']} bytes of the first one's upload")
    if SCENARIO in ("killed", "three"):
        check(sum(item["retries"] for item in final) >= 1, "no file retried")
    if SCENARIO == "offline":
        check(observed.get("retriesWhileOffline", 0) <= 1, f"the file retried {observed.get('retriesWhileOffline')} times while offline")
    json.dump({"scenario": SCENARIO, "made": made, "receipt": receipt, "sent": sent, "observed": observed}, sys.stdout, ensure_ascii=False)
    if failures:
        sys.stderr.write("browser_resume.py: " + "\n".join(failures) + "\n")
        sys.exit(1)


main()
