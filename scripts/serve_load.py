#!/usr/bin/env python3
"""Load test of `formpost serve` (Python 3 standard library only); scripts/serve-load runs it.

With `--reference COMMAND`, every row runs against that receiver too, in the same run,
right after `formpost serve`'s: any server that stores multipart uploads sent to
`POST /upload` and answers formpost's receipts (COMMAND's `{port}` and `{dir}` are
replaced by a free port and the storage directory), e.g. the package's own
upload-receiver-app or a Go net/http receiver.

Two rows, each against a fresh server (so its peak RSS belongs to that row):
  large  200 uploads of one file part each, sizes seeded-random over 1-32 MiB
  small  2,000 forms of 10 text fields and one 4 KiB file part
sent from 16 client threads, each on one persistent HTTP/1.1 connection. Every body is
built here (random boundary, Content-Length); file contents are slices of one random
buffer made once, so the client spends its time sending. Every receipt is checked (size
and SHA-256 of the file, the fields), then the storage directory: exactly one stored file
per upload, named as its receipt's storedAs, with the SHA-256 that was sent (the
receiver's own state directories, `.tus` and `.resumable`, are not uploads).

One JSON line per row on stdout; details of anything wrong on stderr; exit status 1 if
anything did not match.
"""

import argparse
import concurrent.futures
import hashlib
import http.client
import json
import os
import random
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

MIB = 1 << 20


class Upload:
    """One request: its fields, its file part (a slice of the shared buffer), its body."""

    def __init__(self, index, fields, offset, size, filename):
        self.index = index
        self.fields = fields
        self.offset = offset
        self.size = size
        self.filename = filename
        self.sha256 = None
        self.receipt = None
        self.error = None
        self.latency = None
        self.body_length = 0


def build_body(upload, pool):
    """The multipart body as three pieces (head, file bytes, tail) and its content type."""
    boundary = "formpost-load-" + secrets.token_hex(16)
    head = bytearray()
    for name, value in upload.fields:
        head += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n").encode()
        head += value.encode() + b"\r\n"
    head += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{upload.filename}\"\r\n"
             "Content-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    data = pool[upload.offset:upload.offset + upload.size]
    return (bytes(head), data, tail), f"multipart/form-data; boundary={boundary}"


def free_port():
    """A TCP port of 127.0.0.1 nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`formpost serve --port 0` on a directory of its own (or, with a `reference` command,
    that command on a free port); its log goes to a file."""

    def __init__(self, binary, directory, log_path, pid_path, reference=None):
        self.log_path = log_path
        self.pid_path = pid_path
        self.log = open(log_path, "wb")
        if reference:
            os.makedirs(directory, exist_ok=True)
            self.port = free_port()
            command = shlex.split(reference.replace("{port}", str(self.port)).replace("{dir}", directory))
        else:
            command = [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--dir", directory]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        with open(pid_path, "w") as f:
            f.write(f"{self.process.pid}\n")
        try:
            if reference:
                self._wait_for_listener()
            else:
                self.port = self._wait_for_port()
        except BaseException:
            self.stop()
            raise

    def _wait_for_listener(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the reference exited with status {self.process.returncode}: "
                                       + open(self.log_path, errors="replace").read())
                time.sleep(0.02)
        raise RuntimeError(f"the reference did not listen on port {self.port} within 60 s")

    def _wait_for_port(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                found = re.search(rb"receiving on http://[^:/]+:(\d+)/", f.read())
            if found:
                return int(found.group(1))
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with status {self.process.returncode}: "
                                   + open(self.log_path, errors="replace").read())
            time.sleep(0.02)
        raise RuntimeError("the server did not say which port it listens on within 60 s")

    def peak_rss_mib(self):
        """VmHWM, the most memory the process has held resident; None once it has exited."""
        try:
            with open(f"/proc/{self.process.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except FileNotFoundError:
            pass
        return None

    def cpu_seconds(self):
        """User and system CPU time so far; None once the process has exited."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        os.remove(self.pid_path)
        self.log.close()

    def log_problems(self):
        """Log lines above info level (swift-log: `<time> <level> <label>: …`)."""
        with open(self.log_path, errors="replace") as f:
            return [line.rstrip("\n") for line in f
                    if re.match(r"\S+ (warning|error|critical) ", line) or "Fatal error" in line]


class Client(threading.Thread):
    """Sends uploads taken from a shared iterator on one persistent connection."""

    def __init__(self, port, uploads, lock, pool, retries):
        super().__init__(daemon=True)
        self.port = port
        self.uploads = uploads
        self.lock = lock
        self.pool = pool
        self.retries = retries
        self.connection = None

    def connect(self):
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)

    def run(self):
        while True:
            with self.lock:
                upload = next(self.uploads, None)
            if upload is None:
                break
            self.send(upload)
        if self.connection:
            self.connection.close()

    def send(self, upload):
        (head, data, tail), content_type = build_body(upload, self.pool)
        length = upload.body_length = len(head) + len(data) + len(tail)
        for attempt in range(3):
            if self.connection is None:
                self.connect()
            reused = self.connection.sock is not None
            started = time.perf_counter()
            try:
                c = self.connection
                c.putrequest("POST", "/upload", skip_accept_encoding=True)
                c.putheader("Content-Type", content_type)
                c.putheader("Content-Length", str(length))
                c.endheaders(head)
                c.send(data)
                c.send(tail)
                response = c.getresponse()
                body = response.read()
                upload.latency = time.perf_counter() - started
                if response.status != 200:
                    upload.error = f"HTTP {response.status}: {body[:300]!r}"
                    return
                upload.receipt = json.loads(body)
                if response.will_close:
                    c.close()
                return
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as error:
                # The server closed a kept-alive connection: try again on a new one (the
                # directory check shows if the lost attempt was stored all the same).
                self.connection.close()
                self.connection = None
                if not reused:
                    upload.error = f"{type(error).__name__}: {error}"
                    return
                with self.lock:
                    self.retries.append((upload.index, f"{type(error).__name__}: {error}"))
            except Exception as error:
                self.connection.close()
                self.connection = None
                upload.error = f"{type(error).__name__}: {error}"
                return
        upload.error = "the connection was closed three times"


def percentile(sorted_values, fraction):
    """Nearest-rank percentile."""
    if not sorted_values:
        return None
    rank = max(1, min(len(sorted_values), int(-(-fraction * len(sorted_values) // 1))))
    return sorted_values[rank - 1]


def sha256_of_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(4 * MIB):
            digest.update(chunk)
    return digest.hexdigest()


def check(uploads, directory, problems):
    """Checks every receipt against what was sent and the directory against the receipts;
    returns how many uploads matched in full, how many files the directory holds, and how
    many receipts name a stored file another receipt names too."""
    receipt_ok = set()
    stored = {}  # storedAs -> the uploads whose receipts name it
    for upload in uploads:
        if upload.error:
            problems.append(f"upload {upload.index}: {upload.error}")
            continue
        receipt = upload.receipt
        if not isinstance(receipt, dict) or not isinstance(receipt.get("files", []), list):
            problems.append(f"upload {upload.index}: the receipt is not of the expected shape: {receipt!r:.200}")
            continue
        files = receipt.get("files", [])
        for f in files:
            stored.setdefault(f.get("storedAs"), []).append(upload)
        sent_fields = [{"name": n, "value": v} for n, v in upload.fields]
        if receipt.get("fields") != sent_fields:
            problems.append(f"upload {upload.index}: fields {receipt.get('fields')!r:.200} instead of {sent_fields!r:.200}")
        elif len(files) != 1:
            problems.append(f"upload {upload.index}: {len(files)} files in the receipt")
        elif (files[0].get("name"), files[0].get("filename"), files[0].get("size"), files[0].get("sha256")) != (
                "file", upload.filename, upload.size, upload.sha256):
            problems.append(f"upload {upload.index}: receipt {files[0]!r} for {upload.filename} of {upload.size} bytes, sha256 {upload.sha256}")
        else:
            receipt_ok.add(upload.index)
    duplicates = sum(len(v) - 1 for v in stored.values())
    if duplicates:
        problems.append(f"{duplicates} receipts name a storedAs another receipt names too")
    names = {n for n in os.listdir(directory) if not (n in (".tus", ".resumable") and os.path.isdir(os.path.join(directory, n)))}
    unexpected = names - set(stored)
    if unexpected:
        problems.append(f"{len(unexpected)} files in {directory} that no receipt names, e.g. {sorted(unexpected)[:3]}")
    missing = set(stored) - names
    if missing:
        problems.append(f"{len(missing)} files named by receipts missing from {directory}, e.g. {sorted(missing)[:3]}")
    present = sorted(set(stored) & names)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as hashing:
        on_disk = dict(zip(present, hashing.map(lambda n: sha256_of_file(os.path.join(directory, n)), present)))
    matching = 0
    for name, owners in stored.items():
        if name not in on_disk:
            continue
        if on_disk[name] != owners[0].sha256:
            problems.append(f"{name}: stored with sha256 {on_disk[name]}, sent {owners[0].sha256} (upload {owners[0].index})")
        elif len(owners) == 1 and owners[0].index in receipt_ok:
            matching += 1
    return matching, len(names), duplicates


def run_row(workload, uploads, clients, binary, work, pool, reference=None):
    for upload in uploads:
        upload.latency = upload.error = upload.receipt = None
    name = "reference" if reference else "formpost"
    directory = os.path.join(work, f"{workload}-{name}-files")
    server = Server(binary, directory, os.path.join(work, f"{workload}-{name}-server.log"), os.path.join(work, "server.pid"), reference)
    try:
        lock = threading.Lock()
        retries = []
        iterator = iter(uploads)
        threads = [Client(server.port, iterator, lock, pool, retries) for _ in range(clients)]
        server_cpu = server.cpu_seconds()
        client_cpu = time.process_time()
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - started
        client_cpu = time.process_time() - client_cpu
        server_cpu_after = server.cpu_seconds()
        server_cpu = server_cpu_after - server_cpu if server_cpu_after is not None else None
        peak = server.peak_rss_mib()
        exited = server.process.poll()
    finally:
        server.stop()
    problems = [f"the server logged: {line}" for line in server.log_problems()]
    if exited is not None:
        problems.append(f"the server exited during the run, status {exited}")
    matching, stored_files, duplicates = check(uploads, directory, problems)
    latencies = sorted(u.latency for u in uploads if u.latency is not None)
    total = sum(u.body_length for u in uploads)
    line = {
        "workload": workload,
        "server": name,
        "uploads": len(uploads),
        "concurrency": clients,
        "total_bytes": total,
        "file_bytes": sum(u.size for u in uploads),
        "matching": matching,
        "stored_files": stored_files,
        "duplicate_stored_as": duplicates,
        "retries": len(retries),
        "seconds": round(seconds, 3),
        "mb_per_s": round(total / seconds / 1e6, 1),
        "requests_per_s": round(len(uploads) / seconds, 1),
        "latency_p50_ms": round(percentile(latencies, 0.50) * 1000, 1) if latencies else None,
        "latency_p99_ms": round(percentile(latencies, 0.99) * 1000, 1) if latencies else None,
        "server_peak_rss_mib": round(peak, 1) if peak is not None else None,
        "server_cpu_s": round(server_cpu, 2) if server_cpu is not None else None,
        "client_cpu_s": round(client_cpu, 2),
    }
    print(json.dumps(line), flush=True)
    for index, error in retries[:10]:
        print(f"serve-load: {workload}: upload {index} sent again after: {error}", file=sys.stderr)
    for problem in problems[:20]:
        print(f"serve-load: {workload}: {problem}", file=sys.stderr)
    if len(problems) > 20:
        print(f"serve-load: {workload}: … and {len(problems) - 20} more", file=sys.stderr)
    shutil.rmtree(directory, ignore_errors=True)
    return not problems and matching == len(uploads)


def stop_on_signal(number, frame):
    """Ends the run (its server is stopped on the way out); further signals are ignored so
    that the stopping is not itself interrupted."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise SystemExit(128 + number)


def main():
    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGINT, stop_on_signal)
    parser = argparse.ArgumentParser(description="Measures `formpost serve` under load.")
    parser.add_argument("--binary", required=True, help="the formpost executable")
    parser.add_argument("--work", required=True, help="a directory for stored files and server logs")
    parser.add_argument("--large", type=int, default=200, help="uploads of 1-32 MiB (default 200; 0 skips the row)")
    parser.add_argument("--small", type=int, default=2000, help="forms of 10 fields + a 4 KiB file (default 2000; 0 skips)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients, each on one connection (default 16)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sizes and offsets (default 1)")
    parser.add_argument("--reference", help="a receiver to run each row against too: a command with {port} and {dir}")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    pool_size = 64 * MIB
    pool = memoryview(os.urandom(pool_size))

    large = []
    for i in range(args.large):
        size = rng.randint(1 * MIB, 32 * MIB)
        large.append(Upload(i, [], rng.randrange(0, pool_size - size + 1), size, f"large-{i:05d}.bin"))
    small = []
    for i in range(args.small):
        fields = [(f"field{j}", f"form {i} field {j} \u2713 {rng.getrandbits(64):016x}") for j in range(10)]
        small.append(Upload(i, fields, rng.randrange(0, pool_size - 4096 + 1), 4096, f"small-{i:05d}.bin"))

    needed = sum(u.size for u in large) + sum(u.size for u in small) * 2 + 256 * MIB
    free = shutil.disk_usage(args.work).free
    if free < needed:
        sys.exit(f"serve-load: {args.work} has {free / MIB:.0f} MiB free, the run needs about {needed / MIB:.0f} MiB")

    # What each upload's file is expected to hash to, before any timing.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as hashing:
        digests = hashing.map(lambda u: hashlib.sha256(pool[u.offset:u.offset + u.size]).hexdigest(), large + small)
        for upload, digest in zip(large + small, digests):
            upload.sha256 = digest

    ok = True
    for workload, uploads in (("large", large), ("small", small)):
        if not uploads:
            continue
        ok &= run_row(workload, uploads, args.clients, args.binary, args.work, pool)
        if args.reference:
            ok &= run_row(workload, uploads, args.clients, args.binary, args.work, pool, args.reference)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
