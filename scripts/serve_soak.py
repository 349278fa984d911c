#!/usr/bin/env python3
"""Soak test of `formpost serve` under faults (Python 3 standard library only);
scripts/serve-soak runs it, with the storage directory on a small tmpfs it mounted.

For --duration seconds, --clients workers each loop: make a file of random bytes (1 KiB
to 24 MiB, so each SHA-256 is its own), upload it with `formpost` in one of four ways —
a multipart form (`-F`), tus (`--resumable tus -T`), a resumable form of the IETF draft
(`--resumable ietf -F`) or a file of the draft (`--resumable ietf -T`) — through a proxy
that cuts connections, SIGKILL the client at a random moment in some runs, and run the
same command again until the server acknowledges the upload. Meanwhile a filler takes
all but a few KiB of the tmpfs for a few seconds at a time (ENOSPC), and once, half way,
`formpost serve` is killed with SIGKILL and started again on the same directory and port.
Then the faults stop and every upload still under way must finish (--drain seconds).

An upload is acknowledged by the receipt (200) that a run of `formpost` exiting 0 printed;
tus answers none, so its receipt is asked of the upload's URL (GET, straight to the
server), as is a draft upload's when formpost ended without it (the answer to its last
append was lost, and the one to ask it again too: the HEAD said complete). A multipart
answer that is not a receipt (507) is sent again; so is a draft upload whose kept answer
refuses the whole upload (formpost forgets the upload then: the next run starts anew).

The files acknowledged are checked and taken away as they come, as a consumer of the
directory would, so that the tmpfs holds uploads in progress and not the whole run's
results: every file that appears in the directory is hashed once, and removed once the
upload it belongs to is acknowledged. At the end:
  - every acknowledged upload: its receipt's storedAs appeared, with the size and SHA-256
    of the file sent, and the receipt says so too;
  - a tus or draft upload is stored exactly once (one name ever held its SHA-256); a
    multipart upload at least once and at most once per run of `formpost` — one whose
    answer was cut off is sent again, and may legitimately be stored twice (counted as
    multipart_stored_again);
  - no stored file whose bytes are not one of the files sent (an orphan or a torn copy);
  - no upload left unfinished once the faults stopped;
  - under DIR/.tus/ and DIR/.resumable/: no `.tmp`, no data without its `ID.json`, no
    other file; each state is of this run (within expiry), and is either complete (kept
    until expiry), or incomplete and belongs to an upload acknowledged through another
    resource (a creation whose client was killed before it kept the URL, say); a
    completion still pending for an upload acknowledged elsewhere would store it twice;
  - no `.partial-` file but those the killed server left (its successor removes them at
    a start once they are a minute old);
  - the server's peak RSS (VmHWM of each process, sampled) within --max-rss-mib, and no
    crash in its log.

One JSON line of figures on stdout; the problems found on stderr, exit status 1 if any.
"""

import argparse
import asyncio
import base64
import hashlib
import http.client
import json
import math
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time

KIB = 1 << 10
MIB = 1 << 20
PROTOCOLS = ("multipart", "tus", "ietf_form", "ietf_file")


def sha256_of_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(4 * MIB):
            digest.update(chunk)
    return digest.hexdigest()


def free_port():
    """A port nothing listens on now (the server is given it, to keep it across its restart)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CuttingProxy(threading.Thread):
    """A TCP proxy in front of the server. While faults are on, each connection is, at
    random: passed through (most), cut both ways once the client has sent a random number
    of bytes (in the middle of a request body, or a later request on it), or cut at the
    server's first answer byte (the request arrived, its answer is lost)."""

    def __init__(self, target_port, seed, cut_probability, drop_probability):
        super().__init__(daemon=True)
        self.target_port = target_port
        self.rng = random.Random(seed)
        self.cut_probability = cut_probability
        self.drop_probability = drop_probability
        self.faults = True
        self.connections = 0
        self.cuts = 0
        self.dropped_answers = 0
        self.refused = 0
        self.bytes_up = 0
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = None

    def run(self):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self.handle, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()
        server.close()

    def stop(self):
        self.loop.call_soon_threadsafe(self.loop.stop)

    def fate(self):
        """('pass',), ('cut', bytes) or ('drop',) for a new connection."""
        if not self.faults:
            return ("pass",)
        draw = self.rng.random()
        if draw < self.cut_probability:
            return ("cut", int(math.exp(self.rng.uniform(0, math.log(32 * MIB)))))
        if draw < self.cut_probability + self.drop_probability:
            return ("drop",)
        return ("pass",)

    async def handle(self, client_reader, client_writer):
        self.connections += 1
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            # The server is down (its restart): the client sees its connection reset.
            self.refused += 1
            client_writer.transport.abort()
            return
        fate = self.fate()
        # Set when both connections must end at once: a cut, or the client gone (killed).
        abort = asyncio.Event()

        async def upstream():
            sent = 0
            try:
                while data := await client_reader.read(65536):
                    if fate[0] == "cut" and sent + len(data) > fate[1]:
                        server_writer.write(data[:fate[1] - sent])
                        self.bytes_up += fate[1] - sent
                        self.cuts += 1
                        break
                    sent += len(data)
                    self.bytes_up += len(data)
                    server_writer.write(data)
                    await server_writer.drain()
            except (ConnectionError, OSError):
                pass
            abort.set()

        async def downstream():
            try:
                while data := await server_reader.read(65536):
                    if fate[0] == "drop":
                        self.dropped_answers += 1
                        abort.set()
                        return
                    client_writer.write(data)
                    await client_writer.drain()
            except (ConnectionError, OSError):
                abort.set()

        up = asyncio.ensure_future(upstream())
        down = asyncio.ensure_future(downstream())
        aborting = asyncio.ensure_future(abort.wait())
        await asyncio.wait({down, aborting}, return_when=asyncio.FIRST_COMPLETED)
        if abort.is_set():
            for writer in (server_writer, client_writer):
                writer.transport.abort()
        else:
            # The server closed (an idle connection, say): so does the client's.
            client_writer.close()
            server_writer.close()
        for task in (up, down, aborting):
            task.cancel()


class DiskFiller(threading.Thread):
    """Every few seconds, takes all the room left on the tmpfs but `room` bytes, holds it
    for a few seconds, then frees it: each such episode makes the server's writes fail
    with ENOSPC."""

    def __init__(self, mount, seed, room=64 * KIB):
        super().__init__(daemon=True)
        self.path = os.path.join(mount, "filler")
        self.rng = random.Random(seed)
        self.room = room
        self.stopping = threading.Event()
        self.episodes = 0
        self.error = None

    def run(self):
        try:
            while not self.stopping.wait(self.rng.uniform(4, 10)):
                self.fill()
                self.episodes += 1
                self.stopping.wait(self.rng.uniform(2, 5))
                os.remove(self.path)
        except OSError as error:
            self.error = f"the filler failed: {error}"
        finally:
            if os.path.exists(self.path):
                os.remove(self.path)

    def fill(self):
        block = b"\xa5" * MIB
        size = 0
        with open(self.path, "wb", buffering=0) as f:
            while True:
                try:
                    size += f.write(block)
                except OSError as error:
                    if error.errno != 28:  # ENOSPC
                        raise
                    break
            f.truncate(max(0, size - self.room))

    def stop(self):
        self.stopping.set()
        self.join()


class Server:
    """`formpost serve` on a fixed port and directory; started again after a SIGKILL.
    A thread samples each process's VmRSS and VmHWM."""

    def __init__(self, binary, directory, port, work):
        self.binary = binary
        self.directory = directory
        self.port = port
        self.work = work
        self.pid_path = os.path.join(work, "server.pid")
        self.process = None
        self.logs = []
        self.peak_hwm_kib = 0
        self.peak_rss_kib = 0
        self.exits = []  # (status, how) of every process that ended
        self.killed_at = None
        self.lock = threading.Lock()
        self.sampling = threading.Event()
        self.sampler = threading.Thread(target=self._sample, daemon=True)

    def start(self):
        log_path = os.path.join(self.work, f"server-{len(self.logs) + 1}.log")
        self.logs.append(log_path)
        log = open(log_path, "wb")
        # Every client reaches the server through the proxy, from one address, as behind a
        # reverse proxy; each creation whose answer is cut leaves an upload its client never
        # learns of (incomplete_superseded), idle for an hour. The default of 10 per address
        # is a limit for one client, which a run's lost answers reach; this is many clients.
        process = subprocess.Popen([self.binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--dir", self.directory,
                                    "--max-uploads-in-progress-per-client", "1000"],
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        with open(self.pid_path, "w") as f:
            f.write(f"{process.pid}\n")
        with self.lock:
            self.process = process
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(log_path, "rb") as f:
                if b"receiving on http://" in f.read():
                    break
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with status {process.returncode}: " + open(log_path, errors="replace").read())
            time.sleep(0.02)
        else:
            raise RuntimeError("the server did not start listening within 60 s")
        if not self.sampler.is_alive():
            self.sampler.start()

    def _read_status(self, process):
        try:
            with open(f"/proc/{process.pid}/status") as f:
                values = dict(line.split(":", 1) for line in f if ":" in line)
            return int(values["VmHWM"].split()[0]), int(values["VmRSS"].split()[0])
        except (FileNotFoundError, KeyError, ValueError, ProcessLookupError):
            return None

    def _sample(self):
        while not self.sampling.wait(0.2):
            self.sample()

    def sample(self):
        with self.lock:
            process = self.process
            if process is None or process.poll() is not None:
                return
            status = self._read_status(process)
            if status:
                self.peak_hwm_kib = max(self.peak_hwm_kib, status[0])
                self.peak_rss_kib = max(self.peak_rss_kib, status[1])

    def kill_and_restart(self, pause):
        """SIGKILL, then the same command again after `pause` seconds."""
        self.sample()
        with self.lock:
            process = self.process
            process.kill()
            process.wait()
            self.process = None
        self.exits.append((process.returncode, "killed"))
        self.killed_at = time.time()
        time.sleep(pause)
        self.start()

    def alive(self):
        with self.lock:
            return self.process is not None and self.process.poll() is None

    def stop(self):
        """SIGINT, as Ctrl-C; SIGKILL if it has not ended within 15 s."""
        self.sampling.set()
        with self.lock:
            process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            status = self._read_status(process)
            if status:
                self.peak_hwm_kib = max(self.peak_hwm_kib, status[0])
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                self.exits.append((process.returncode, "did not stop on SIGINT within 15 s"))
                return
            self.exits.append((process.returncode, "stopped"))
        else:
            self.exits.append((process.returncode, "exited by itself"))
        if os.path.exists(self.pid_path):
            os.remove(self.pid_path)

    def log_lines(self):
        for path in self.logs:
            with open(path, errors="replace") as f:
                yield from f


class Upload:
    """One file to upload, the runs of `formpost` it took, and what the server acknowledged."""

    def __init__(self, index, worker, protocol, size, chunk_size):
        self.index = index
        self.worker = worker
        self.protocol = protocol
        self.size = size
        self.chunk_size = chunk_size
        self.sha256 = None
        self.runs = 0
        self.kills = 0
        self.receipt = None  # the acknowledged file: {"storedAs", "sha256", "size", …}
        self.upload_url = None
        self.unfinished = None  # why it never got acknowledged

    @property
    def name(self):
        return f"U{self.index:05d}"


class Registry:
    """What every worker made and what the server acknowledged; shared by the threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.uploads = []
        self.by_sha = {}
        self.acknowledged_shas = set()
        self.problems = []

    def add(self, upload):
        with self.lock:
            self.uploads.append(upload)
            self.by_sha[upload.sha256] = upload

    def acknowledge(self, upload):
        with self.lock:
            self.acknowledged_shas.add(upload.sha256)

    def is_acknowledged(self, sha):
        with self.lock:
            return sha in self.acknowledged_shas

    def problem(self, text):
        with self.lock:
            self.problems.append(text)


class Collector(threading.Thread):
    """Hashes every file that appears in the storage directory (once: stored files never
    change) and removes those of acknowledged uploads, as a consumer of the directory would.
    `seen` keeps every name ever stored with its SHA-256 and size."""

    def __init__(self, directory, registry):
        super().__init__(daemon=True)
        self.directory = directory
        self.registry = registry
        self.seen = {}  # name -> (sha256, size, when first seen)
        self.removed = set()
        self.stored_again = []  # names that appeared again after they were removed
        self.vanished = set()  # names listed that were gone before they could be hashed
        self.stopping = threading.Event()
        self.lock = threading.Lock()

    def run(self):
        while not self.stopping.wait(0.3):
            self.sweep(remove=True)

    def stop(self):
        self.stopping.set()
        self.join()
        self.sweep(remove=False)

    def sweep(self, remove):
        with self.lock:
            for name in os.listdir(self.directory):
                if name.startswith("."):
                    continue
                path = os.path.join(self.directory, name)
                if name in self.removed:
                    if name not in self.stored_again:
                        self.stored_again.append(name)
                    continue
                if name not in self.seen:
                    try:
                        size = os.stat(path).st_size
                        self.seen[name] = (sha256_of_file(path), size, time.time())
                    except FileNotFoundError:
                        self.vanished.add(name)
                        continue
                if remove and self.registry.is_acknowledged(self.seen[name][0]):
                    try:
                        os.remove(path)
                        self.removed.add(name)
                    except FileNotFoundError:
                        self.vanished.add(name)


class Worker(threading.Thread):
    """Uploads files one after the other until the run's end, each until it is acknowledged."""

    def __init__(self, number, run):
        super().__init__(daemon=True)
        self.number = number
        self.run_ = run
        self.rng = random.Random(run.args.seed * 1009 + number)
        self.state_home = os.path.join(run.work, f"state-{number}")
        self.files = os.path.join(run.work, "files")
        self.process = None
        self.process_lock = threading.Lock()

    def run(self):
        try:
            while not self.run_.ending.is_set():
                self.upload_one()
        except Exception as error:  # a defect of this script: say so, do not hang the run
            self.run_.registry.problem(f"worker {self.number} failed: {type(error).__name__}: {error}")

    def make_upload(self):
        run = self.run_
        protocol = self.rng.choice(PROTOCOLS)
        if self.rng.random() < 0.7:
            size = int(math.exp(self.rng.uniform(math.log(KIB), math.log(24 * MIB))))
        else:
            size = self.rng.randint(4 * MIB, 24 * MIB)
        chunk = self.rng.choice(("1M", "4M", "64M"))
        upload = Upload(run.next_index(), self.number, protocol, size, chunk)
        path = os.path.join(self.files, upload.name + ".bin")
        data = self.rng.randbytes(size)
        with open(path, "wb") as f:
            f.write(data)
        upload.sha256 = hashlib.sha256(data).hexdigest()
        run.registry.add(upload)
        return upload, path

    def command(self, upload, path):
        run = self.run_
        base = f"http://127.0.0.1:{run.proxy.port}"
        body = os.path.join(run.work, f"body-{self.number}.json")
        common = ["--json", "-o", body]
        resumable = ["--retry", "10", "--retry-delay", "1", "--chunk-size", upload.chunk_size]
        if upload.protocol == "multipart":
            arguments = ["-F", f"note={upload.name}", "-F", f"file=@{path}", f"{base}/soak/{upload.name}"]
        elif upload.protocol == "tus":
            arguments = ["--resumable", "tus", *resumable, "-T", path, f"{base}/files"]
        elif upload.protocol == "ietf_form":
            arguments = ["--resumable", "ietf", *resumable, "-F", f"note={upload.name}", "-F", f"file=@{path}", f"{base}/soak/{upload.name}"]
        else:
            arguments = ["--resumable", "ietf", *resumable, "-T", path, f"{base}/soak/{upload.name}"]
        return [run.binary, *arguments, *common], body

    def upload_one(self):
        run = self.run_
        upload, path = self.make_upload()
        command, body_path = self.command(upload, path)
        environment = dict(os.environ, XDG_STATE_HOME=self.state_home)
        while upload.receipt is None:
            if run.drain_over.is_set():
                upload.unfinished = f"not acknowledged once the faults had stopped, after {upload.runs} runs"
                return
            if os.path.exists(body_path):
                os.remove(body_path)
            upload.runs += 1
            run.count("client_runs")
            with open(os.path.join(run.work, f"client-{self.number}.log"), "ab") as log:
                log.write(f"--- {upload.name} {upload.protocol} {upload.size} bytes, run {upload.runs}: {' '.join(command)}\n".encode())
                log.flush()
                process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, env=environment)
                with self.process_lock:
                    self.process = process
                killed = self.wait_or_kill(process, upload)
                stdout = process.stdout.read()
                process.stdout.close()
                with self.process_lock:
                    self.process = None
                log.write(stdout + f"--- exit {process.returncode}{' (killed)' if killed else ''}\n".encode())
            summary = self.summary(stdout)
            if killed and summary is None:
                continue
            if not killed and process.returncode == 2:
                run.registry.problem(f"{upload.name}: formpost refused its arguments (exit 2): {' '.join(command)}")
                upload.unfinished = "usage error"
                return
            if not killed and process.returncode != 0:
                # Cut, refused, out of retries: the same command resumes (multipart: sends again).
                time.sleep(0.3)
                continue
            if summary is None:
                run.registry.problem(f"{upload.name}: formpost exited 0 without a JSON summary: {stdout[:200]!r}")
                time.sleep(0.3)
                continue
            # A run killed once it had reported its result (while it exited) counts as done.
            self.settle(upload, summary, body_path)
            if upload.receipt is None:
                time.sleep(0.3)
        os.remove(path)

    def wait_or_kill(self, process, upload):
        """Waits for the client; in some runs (while faults are on, at most 3 per upload)
        SIGKILLs it at a random moment first. Whether it was killed."""
        run = self.run_
        kill_after = None
        if upload.kills < 3 and self.rng.random() < run.args.kill_probability:
            kill_after = self.rng.uniform(0.05, 2.0)
        started = time.monotonic()
        while True:
            try:
                process.wait(timeout=0.1)
                return False
            except subprocess.TimeoutExpired:
                pass
            elapsed = time.monotonic() - started
            if kill_after is not None and elapsed >= kill_after and not run.faults_over.is_set():
                process.kill()
                process.wait()
                if process.returncode != -signal.SIGKILL:
                    return False  # it had ended on its own meanwhile
                upload.kills += 1
                run.count("client_kills")
                return True
            if run.drain_over.is_set() or elapsed > 300:
                process.kill()
                process.wait()
                if elapsed > 300:
                    run.registry.problem(f"{upload.name}: a run of formpost took over 300 s and was killed")
                return True

    @staticmethod
    def summary(stdout):
        """The JSON summary line `--json` prints, or None (none, or cut short by a kill)."""
        try:
            summary = json.loads(stdout.decode().strip().splitlines()[-1])
        except (ValueError, IndexError, UnicodeDecodeError):
            return None
        return summary if isinstance(summary, dict) else None

    def settle(self, upload, summary, body_path):
        """Reads what the successful run got: the receipt (tus: asked of the upload's URL)."""
        run = self.run_
        status = summary.get("status")
        upload.upload_url = summary.get("upload_url")
        body = b""
        if os.path.exists(body_path):
            with open(body_path, "rb") as f:
                body = f.read()
        complete = (summary.get("response_headers") or {}).get("upload-complete") == "?1"
        if upload.protocol == "tus":
            if not (200 <= (status or 0) < 300) or not upload.upload_url:
                run.registry.problem(f"{upload.name}: formpost exited 0 from a tus upload with status {status}, URL {upload.upload_url}")
                return
            receipt = self.fetch_receipt(upload, "/files/", {"Tus-Resumable": "1.0.0"})
        elif upload.protocol != "multipart" and complete and not body and upload.upload_url:
            # The upload is complete, but the answer to its last append was lost and formpost
            # ended with the HEAD's instead: the server keeps the answer, GET gives it again.
            run.count("draft_answers_asked_again")
            receipt = self.fetch_receipt(upload, "/uploads/", {})
        else:
            if status != 200:
                # The multipart answer (507 while the disk is full, say), or the draft's
                # final answer to the whole upload: sent again from the start.
                run.count("multipart_refusals" if upload.protocol == "multipart" else "draft_final_refusals")
                return
            try:
                receipt = json.loads(body)
            except ValueError:
                run.registry.problem(f"{upload.name}: answered 200 without a JSON receipt: {body[:200]!r}")
                return
        if receipt is None:
            return
        files = receipt.get("files") or []
        if len(files) != 1:
            run.registry.problem(f"{upload.name}: the receipt names {len(files)} files: {receipt!r:.300}")
            upload.receipt = {"storedAs": None}
            return
        file = files[0]
        if (file.get("size"), file.get("sha256")) != (upload.size, upload.sha256):
            run.registry.problem(f"{upload.name} ({upload.protocol}): receipt {file!r} for {upload.size} bytes with SHA-256 {upload.sha256}")
        stored = os.path.join(run.directory, file.get("storedAs") or "-")
        # Checked now, before the collector may take it away.
        if not os.path.exists(stored) and file.get("storedAs") not in run.collector.seen:
            run.registry.problem(f"{upload.name} ({upload.protocol}): acknowledged as {file.get('storedAs')}, which is not in the directory")
        upload.receipt = file
        run.registry.acknowledge(upload)
        run.count(f"acknowledged_{upload.protocol}")

    def fetch_receipt(self, upload, base, headers):
        """GET of the upload's URL (under `base`), straight to the server (not through the
        proxy): the receipt of a complete upload (tus: `{"complete", "receipt"}`; the draft:
        the answer kept)."""
        run = self.run_
        path = base + upload.upload_url.rsplit("/", 1)[-1]
        deadline = time.monotonic() + 60
        asked_head = False
        while time.monotonic() < deadline:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", run.server.port, timeout=30)
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                answer = json.loads(response.read() or b"{}")
                connection.close()
            except (OSError, ValueError, http.client.HTTPException):
                time.sleep(0.5)
                continue
            if base != "/files/" and response.status == 200 and answer.get("files") is not None:
                return answer
            if base != "/files/" and response.status >= 400 and response.status not in (404, 410):
                # The answer kept is a refusal of the whole upload: sent again from the start.
                run.count("draft_final_refusals")
                return None
            if base == "/files/" and response.status == 200 and answer.get("complete"):
                return answer.get("receipt") or {}
            if base == "/files/" and response.status == 200 and not asked_head:
                # At its full offset, not yet stored: a HEAD completes it.
                asked_head = True
                try:
                    connection = http.client.HTTPConnection("127.0.0.1", run.server.port, timeout=30)
                    connection.request("HEAD", path, headers=headers)
                    connection.getresponse().read()
                    connection.close()
                except (OSError, http.client.HTTPException):
                    pass
                continue
            run.registry.problem(f"{upload.name}: formpost reported the upload {path} complete; GET answers {response.status} {answer!r:.300}")
            return None
        run.registry.problem(f"{upload.name}: no answer to GET {path} within 60 s")
        return None

    def kill_client(self):
        with self.process_lock:
            if self.process is not None and self.process.poll() is None:
                self.process.kill()


class SoakRun:
    """The whole run: the server, the proxy, the filler, the collector and the workers."""

    def __init__(self, args):
        self.args = args
        self.binary = args.binary
        self.work = args.work
        self.directory = os.path.join(args.mount, "store")
        os.makedirs(self.directory)
        os.makedirs(os.path.join(self.work, "files"))
        self.registry = Registry()
        self.counts = {}
        self.counts_lock = threading.Lock()
        self.index = 0
        self.ending = threading.Event()  # no new uploads
        self.faults_over = threading.Event()  # no cuts, kills or ENOSPC
        self.drain_over = threading.Event()  # uploads still unfinished are given up
        self.server = Server(self.binary, self.directory, free_port(), self.work)
        self.proxy = CuttingProxy(self.server.port, args.seed, args.cut_probability, args.drop_probability)
        self.filler = DiskFiller(args.mount, args.seed + 1)
        self.collector = Collector(self.directory, self.registry)
        self.workers = [Worker(n, self) for n in range(args.clients)]
        self.started = None
        self.restarted_at = None

    def next_index(self):
        with self.counts_lock:
            self.index += 1
            return self.index

    def count(self, key):
        with self.counts_lock:
            self.counts[key] = self.counts.get(key, 0) + 1

    def run(self):
        self.started = time.time()
        self.server.start()
        self.proxy.start()
        self.proxy.ready.wait()
        self.filler.start()
        self.collector.start()
        for worker in self.workers:
            worker.start()
        try:
            self.sleep_until(self.args.duration / 2)
            self.server.kill_and_restart(pause=random.Random(self.args.seed).uniform(0.2, 2.0))
            self.restarted_at = time.time()
            self.sleep_until(self.args.duration)
            self.ending.set()
            self.faults_over.set()
            self.proxy.faults = False
            self.filler.stop()
            drain_end = time.monotonic() + self.args.drain
            for worker in self.workers:
                worker.join(max(0, drain_end - time.monotonic()))
            self.drain_over.set()
            for worker in self.workers:
                worker.kill_client()
                worker.join()
        finally:
            self.ending.set()
            self.drain_over.set()
            for worker in self.workers:
                worker.kill_client()
            self.filler.stopping.set()
            self.server.sample()
            self.collector.stop()
            self.server_alive_at_end = self.server.alive()
            self.server.stop()
            self.proxy.stop()
        self.seconds = time.time() - self.started

    def sleep_until(self, offset):
        while time.time() < self.started + offset:
            time.sleep(0.2)
            if not self.server.alive():
                raise RuntimeError("the server exited by itself: " + "".join(list(self.server.log_lines())[-20:]))


def state_files(directory):
    """The files of a state directory grouped by upload id: {id: {suffix: path}}, and the
    names that fit no upload."""
    grouped, stray = {}, []
    for name in sorted(os.listdir(directory)):
        match = re.fullmatch(r"([0-9a-f]{32})\.(json|data|splices|part-\d+|json\.tmp)", name)
        if match:
            grouped.setdefault(match.group(1), {})[match.group(2)] = os.path.join(directory, name)
        else:
            stray.append(name)
    return grouped, stray


def owner_of(protocol, info, uploads_by_name):
    """The upload a state belongs to: tus by its filename, the draft by its target path."""
    if protocol == "tus":
        for item in (info.get("metadata") or "").split(","):
            key, _, value = item.strip().partition(" ")
            if key == "filename":
                name = base64.b64decode(value).decode(errors="replace").removesuffix(".bin")
                return uploads_by_name.get(name)
        return None
    return uploads_by_name.get((info.get("path") or "").rsplit("/", 1)[-1])


def check_states(run, problems, figures):
    """DIR/.tus/ and DIR/.resumable/: what is left of resumable uploads."""
    uploads_by_name = {u.name: u for u in run.registry.uploads}
    left = {"complete": 0, "incomplete_superseded": 0, "incomplete_other": 0, "completion_pending": 0, "complete_with_data": 0}
    expiry = 86400
    for protocol, state_name in (("tus", ".tus"), ("draft", ".resumable")):
        directory = os.path.join(run.directory, state_name)
        if not os.path.isdir(directory):
            continue
        grouped, stray = state_files(directory)
        for name in stray:
            problems.append(f"{state_name}/{name}: a file no upload explains")
        for upload_id, files in grouped.items():
            where = f"{state_name}/{upload_id}"
            if "json" not in files:
                problems.append(f"{where}: {', '.join(sorted(files))} without {upload_id}.json (expiry never removes it)")
                continue
            if "json.tmp" in files:
                problems.append(f"{where}.json.tmp: a state written aside and never renamed (nothing removes it)")
            try:
                with open(files["json"]) as f:
                    info = json.load(f)
            except ValueError as error:
                problems.append(f"{where}.json: unreadable: {error}")
                continue
            if info.get("created", 0) < run.started - 5 or info["created"] + expiry < time.time():
                problems.append(f"{where}: created at {info.get('created')}, not within this run's expiry")
            owner = owner_of(protocol, info, uploads_by_name)
            has_data = any(k != "json" and k != "json.tmp" for k in files)
            complete = info.get("file") is not None if protocol == "tus" else info.get("answer") is not None
            pending = info.get("completing") is not None or info.get("storingParts") is not None
            if complete and not pending:
                left["complete"] += 1
                if has_data:
                    left["complete_with_data"] += 1
            elif pending:
                left["completion_pending"] += 1
                if owner is None or owner.receipt is not None:
                    problems.append(f"{where}: a completion still pending ({info.get('completing') or info.get('storingParts')}) "
                                    f"for {owner.name + ', acknowledged elsewhere' if owner else 'no upload of this run'}: "
                                    "taking it up again would store the upload a second time")
            elif owner is not None and owner.receipt is not None and (owner.upload_url or "").rsplit("/", 1)[-1] != upload_id:
                left["incomplete_superseded"] += 1
            else:
                left["incomplete_other"] += 1
                problems.append(f"{where}: incomplete ({os.path.getsize(files['data']) if 'data' in files else 0} of {info.get('length')} bytes) "
                                f"for {owner.name if owner else 'no upload of this run'}{'' if owner is None or owner.receipt is None else ' (acknowledged through this very upload)'}")
    figures["states_left"] = left


def resources_by_stored_name(run):
    """Which upload resource stored each file, as its state says: {storedAs: ".tus/ID"}."""
    found = {}
    for state_name in (".tus", ".resumable"):
        directory = os.path.join(run.directory, state_name)
        for name in os.listdir(directory) if os.path.isdir(directory) else []:
            if not name.endswith(".json"):
                continue
            try:
                with open(os.path.join(directory, name)) as f:
                    info = json.load(f)
                answer = json.loads((info.get("answer") or {}).get("json") or "{}")
            except ValueError:
                continue
            names = [(info.get("file") or {}).get("storedAs"), (info.get("completing") or {}).get("storedAs")]
            names += [f.get("storedAs") for f in answer.get("files") or []] + (info.get("storingParts") or [])
            for stored in names:
                if stored:
                    found[stored] = f"{state_name}/{name.removesuffix('.json')}"
    return found


def check_stored(run, problems, figures):
    """Every name ever stored, by SHA-256, against the uploads and their receipts."""
    collector = run.collector
    resources = resources_by_stored_name(run)

    def stored_by(names):
        return ", ".join(f"{n} by {resources.get(n, 'an upload resource no state names')}" for n in names)
    by_sha = {}
    for name, (sha, size, _) in collector.seen.items():
        by_sha.setdefault(sha, []).append(name)
        if sha not in run.registry.by_sha:
            problems.append(f"stored file {name} ({size} bytes, SHA-256 {sha}) is none of the files sent: an orphan or a torn copy")
    stored_again = 0
    for upload in run.registry.uploads:
        names = by_sha.get(upload.sha256, [])
        if upload.receipt is None:
            if len(names) > 1 and upload.protocol != "multipart":
                problems.append(f"{upload.name} ({upload.protocol}, never acknowledged): stored {len(names)} times: {stored_by(names)}")
            continue
        stored_as = upload.receipt.get("storedAs")
        if stored_as not in collector.seen:
            problems.append(f"{upload.name} ({upload.protocol}): acknowledged as {stored_as}, never seen in the directory")
        elif collector.seen[stored_as][:2] != (upload.sha256, upload.size):
            sha, size, _ = collector.seen[stored_as]
            problems.append(f"{upload.name} ({upload.protocol}): {stored_as} holds {size} bytes with SHA-256 {sha}, "
                            f"sent {upload.size} with {upload.sha256}")
        if upload.protocol == "multipart":
            # Each run sends the form once: a run whose answer was lost may have stored it.
            stored_again += max(0, len(names) - 1)
            if len(names) > upload.runs:
                problems.append(f"{upload.name} (multipart): stored {len(names)} times from {upload.runs} runs: {names}")
        elif len(names) != 1:
            problems.append(f"{upload.name} ({upload.protocol}): stored {len(names)} times: {stored_by(names)}; acknowledged as "
                            f"{stored_as} ({upload.upload_url}) after {upload.runs} runs of formpost, {upload.kills} killed; "
                            f"see client-{upload.worker}.log")
    for name in collector.stored_again:
        problems.append(f"stored file {name} appeared again after its upload was acknowledged and the file taken away")
    figures["multipart_stored_again"] = stored_again
    figures["stored_files_seen"] = len(collector.seen)


def check_partials(run, problems, figures):
    """`.partial-` files: only those the killed server left may remain."""
    left_by_killed = 0
    for name in os.listdir(run.directory):
        if not name.startswith(".partial-"):
            continue
        modified = os.stat(os.path.join(run.directory, name)).st_mtime
        if run.server.killed_at is not None and modified <= run.server.killed_at + 0.5:
            left_by_killed += 1
        else:
            problems.append(f"{name}: a partial file the running server left (modified {modified - run.started:.1f} s into the run)")
    figures["partials_left_by_killed_server"] = left_by_killed


def main():
    parser = argparse.ArgumentParser(description="Soaks `formpost serve` under faults.")
    parser.add_argument("--binary", required=True, help="the formpost executable")
    parser.add_argument("--work", required=True, help="a directory for client files, logs and states")
    parser.add_argument("--mount", required=True, help="a small tmpfs, mounted, for the storage directory")
    parser.add_argument("--duration", type=float, default=300, help="seconds of uploads under faults (default 300)")
    parser.add_argument("--drain", type=float, default=120, help="seconds the uploads under way then have to finish (default 120)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent workers (default 4)")
    parser.add_argument("--seed", type=int, default=1, help="seed of sizes, protocols, cuts and kills (default 1)")
    parser.add_argument("--max-rss-mib", type=float, default=256, help="fail if the server's peak RSS exceeds it (default 256)")
    parser.add_argument("--cut-probability", type=float, default=0.2, help="share of connections cut mid-request (default 0.2)")
    parser.add_argument("--drop-probability", type=float, default=0.05, help="share of connections whose answer is lost (default 0.05)")
    parser.add_argument("--kill-probability", type=float, default=0.25, help="share of client runs killed with SIGKILL (default 0.25)")
    args = parser.parse_args()

    def stop_on_signal(number, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise SystemExit(128 + number)

    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGINT, stop_on_signal)

    run = SoakRun(args)
    run.run()
    registry = run.registry
    problems = list(registry.problems)
    figures = {}
    if run.filler.error:
        problems.append(run.filler.error)
    for status, how in run.server.exits:
        if how not in ("killed", "stopped"):
            problems.append(f"the server {how} (status {status})")
    if not run.server_alive_at_end:
        problems.append("the server was not running at the end of the run")
    crash_lines = [line.rstrip() for line in run.server.log_lines() if "Fatal error" in line or re.match(r"\S+ critical ", line)]
    problems += [f"the server logged: {line}" for line in crash_lines[:10]]
    other_errors = [line.rstrip() for line in run.server.log_lines()
                    if re.match(r"\S+ error ", line) and "No space left" not in line]
    answers_507 = sum(1 for line in run.server.log_lines()
                      if re.search(r"\] (?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) \S+ 507\b", line))
    check_stored(run, problems, figures)
    check_states(run, problems, figures)
    check_partials(run, problems, figures)
    peak_mib = run.server.peak_hwm_kib / 1024
    if peak_mib > args.max_rss_mib:
        problems.append(f"the server's peak RSS was {peak_mib:.1f} MiB, above --max-rss-mib {args.max_rss_mib:g}")
    for upload in registry.uploads:
        if upload.unfinished:
            problems.append(f"{upload.name} ({upload.protocol}, {upload.size} bytes): {upload.unfinished}; see client-{upload.worker}.log")

    uploads = registry.uploads
    acknowledged = [u for u in uploads if u.receipt is not None]
    line = {
        "duration_s": round(run.seconds, 1),
        "clients": args.clients,
        "seed": args.seed,
        "uploads": {p: sum(1 for u in uploads if u.protocol == p) for p in PROTOCOLS},
        "acknowledged": len(acknowledged),
        "acknowledged_bytes": sum(u.size for u in acknowledged),
        "proxied_bytes": run.proxy.bytes_up,
        "client_runs": run.counts.get("client_runs", 0),
        "client_kills": run.counts.get("client_kills", 0),
        "connections": run.proxy.connections,
        "cuts": run.proxy.cuts,
        "answers_lost": run.proxy.dropped_answers,
        "refused_while_down": run.proxy.refused,
        "server_kills": sum(1 for _, how in run.server.exits if how == "killed"),
        "enospc_episodes": run.filler.episodes,
        "answers_507": answers_507,
        "multipart_refusals": run.counts.get("multipart_refusals", 0),
        "draft_final_refusals": run.counts.get("draft_final_refusals", 0),
        "draft_answers_asked_again": run.counts.get("draft_answers_asked_again", 0),
        **figures,
        "server_errors_other_than_enospc": len(other_errors),
        "peak_rss_mib": round(peak_mib, 1),
        "problems": len(problems),
    }
    print(json.dumps(line), flush=True)
    for text in other_errors[:10]:
        print(f"serve-soak: note: the server logged: {text}", file=sys.stderr)
    for problem in problems[:40]:
        print(f"serve-soak: {problem}", file=sys.stderr)
    if len(problems) > 40:
        print(f"serve-soak: … and {len(problems) - 40} more", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
