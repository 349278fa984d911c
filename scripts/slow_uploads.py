#!/usr/bin/env python3
"""Many slow uploads at once, and a fast one beside them (standard library only).

    python3 scripts/slow_uploads.py --binary FORMPOST [--slow 1000] [--rate 1024] [--seconds 30] [--fast-mib 64]

Starts `FORMPOST serve` on a free port (its connection limits raised past --slow), then:
1. sends one --fast-mib form with `curl -F` alone, and times it;
2. opens --slow connections, each a form upload whose file part's bytes come at --rate
   bytes a second (every second a write), and keeps them sending for --seconds;
3. once all are open and sending, sends the same fast form again beside them, and times it;
4. closes the slow connections unfinished (the receiver removes their partial files).
The server's resident set is sampled every 0.2 s. Prints one JSON line: the slow
connections open, the server's idle and peak RSS, the peak above idle per slow connection,
and the fast upload's MB/s alone and beside the slow ones. Fails when the fast upload is
not answered 200 either time, or a slow connection could not be opened."""
import argparse
import asyncio
import json
import os
import socket
import subprocess
import tempfile
import time

BOUNDARY = "slowuploadboundary"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


async def wait_listening(port):
    for _ in range(600):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


async def fast_upload(path, port):
    """The seconds `curl -F` takes to have its answer; its status must be 200."""
    start = time.monotonic()
    process = await asyncio.create_subprocess_exec("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-F", f"file=@{path}",
                                                   f"http://127.0.0.1:{port}/", stdout=subprocess.PIPE)
    status = (await process.communicate())[0].decode()
    seconds = time.monotonic() - start
    if status != "200":
        raise SystemExit(f"the fast upload was answered {status}")
    return seconds


async def slow_upload(port, rate, seconds, opened, stop):
    """One form whose file's bytes come `rate` a second, until `stop` is set."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.bin\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    length = len(head) + rate * (seconds + 60)
    writer.write((f"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                  f"Content-Length: {length}\r\n\r\n").encode() + head)
    await writer.drain()
    opened.append(1)
    chunk = b"s" * rate
    while not stop.is_set():
        writer.write(chunk)
        await writer.drain()
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except asyncio.TimeoutError:
            pass
    writer.transport.abort()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--slow", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=1024)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--fast-mib", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        fast = os.path.join(work, "fast.bin")
        with open(fast, "wb") as handle:
            handle.write(os.urandom(args.fast_mib << 20))
        port = free_port()
        limit = str(args.slow + 64)
        server = subprocess.Popen([args.binary, "serve", "--port", str(port), "--dir", os.path.join(work, "stored"), "--no-page",
                                   "--max-connections", limit, "--max-connections-per-address", limit, "--idle-timeout", str(args.seconds + 60)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            await wait_listening(port)
            await asyncio.sleep(0.5)
            idle = status_kib(server.pid, "VmRSS:")
            alone = await fast_upload(fast, port)
            with open(f"/proc/{server.pid}/clear_refs", "w") as clear:
                clear.write("5")
            peak = [status_kib(server.pid, "VmRSS:")]
            stop = asyncio.Event()

            async def sample():
                while not stop.is_set():
                    peak.append(status_kib(server.pid, "VmHWM:"))
                    await asyncio.sleep(0.2)

            sampler = asyncio.create_task(sample())
            opened = []
            slow = []
            for index in range(args.slow):
                slow.append(asyncio.create_task(slow_upload(port, args.rate, args.seconds, opened, stop)))
                if index % 50 == 49:
                    await asyncio.sleep(0.05)
            started = time.monotonic()
            while len(opened) < args.slow and time.monotonic() - started < 30:
                await asyncio.sleep(0.1)
            if len(opened) < args.slow:
                raise SystemExit(f"only {len(opened)} of {args.slow} slow connections opened")
            await asyncio.sleep(2)
            beside = await fast_upload(fast, port)
            left = args.seconds - (time.monotonic() - started)
            if left > 0:
                await asyncio.sleep(left)
            stop.set()
            await asyncio.gather(*slow, return_exceptions=True)
            await sampler
            peak_kib = max(peak + [status_kib(server.pid, "VmHWM:")])
            mib = 1024.0
            print(json.dumps({
                "workload": "slow-uploads", "slow": args.slow, "rate_bytes_per_second": args.rate, "seconds": args.seconds,
                "idle_rss_mib": round(idle / mib, 1), "peak_rss_mib": round(peak_kib / mib, 1),
                "kib_per_slow_connection": round((peak_kib - idle) / args.slow, 1),
                "fast_mib": args.fast_mib, "fast_alone_mbps": round((args.fast_mib << 20) / alone / 1e6, 1),
                "fast_beside_mbps": round((args.fast_mib << 20) / beside / 1e6, 1),
            }, sort_keys=True))
        finally:
            server.kill()
            server.wait()


asyncio.run(main())
