#!/usr/bin/env python3
"""Splits a profile's samples into groups of work, for the tables in Benchmarks/README.md
(standard library only):

    perf record -g -F 999 -p PID -o perf.data -- sleep 4   # over one round of the load
    perf script -i perf.data | python3 Benchmarks/perf_groups.py [CPU_SECONDS_PER_GIB]

Each sample goes to the first group, in the order below, that any frame of its stack names;
given the process's CPU seconds per GiB, each group's share is also printed in those."""
import re, sys, collections
rules = [
    ("SHA-256", r"sha256"),
    ("multipart parser (memmem, boundary search)", r"memmem|Multipart|BodyParser|PartParser|Delimiter"),
    ("fsync / fdatasync", r"fsync|fdatasync|sync_file_range"),
    ("file writes (write/pwrite into page cache, ext4)", r"ksys_write|ksys_pwrite|__x64_sys_pwrite|__x64_sys_write|vfs_write|ext4_buffered_write|__arm64_sys_write|__arm64_sys_pwrite"),
    ("socket reads (recv copy, TCP receive)", r"tcp_recvmsg|sock_read_iter|__sys_recvfrom|ksys_read|sys_read|readv|sys_recvmsg"),
    ("scheduling, futex, epoll", r"futex|schedule|epoll|pthread_cond|finish_task_switch"),
    ("page faults / mmap / allocator", r"page_fault|do_anonymous|malloc|free|mmap|munmap|madvise"),
    ("Swift ARC and runtime", r"swift_retain|swift_release|swift_|objc_"),
    ("NIO (channel pipeline, buffers)", r"NIO|ByteBuffer"),
    ("Hummingbird / FormPost", r"Hummingbird|FormPost|HTTPTypes"),
    ("writeback (kworker-like, in process)", r"writeback|wb_|mpage_|ext4_writepages"),
    ("network stack (softirq, loopback xmit)", r"softirq|dev_queue_xmit|tcp_|ip_|net_rx"),
]
compiled = [(n, re.compile(p)) for n, p in rules]
counts = collections.Counter()
total = 0
stack = []
def flush():
    global total
    if not stack: return
    total += 1
    for name, rx in compiled:
        if any(rx.search(frame) for frame in stack):
            counts[name] += 1
            return
    counts["other"] += 1
for line in sys.stdin:
    if not line.strip():
        flush(); stack = []
    elif line.startswith((" ", "\t")):
        parts = line.strip().split(None, 1)
        if len(parts) == 2: stack.append(parts[1])
    else:
        stack = []
flush()
cpu = float(sys.argv[1]) if len(sys.argv) > 1 else None
for name, n in counts.most_common():
    if n == 0: continue
    share = n / total
    print(f"{share*100:5.1f}%  " + (f"{share*cpu:5.2f} s/GiB  " if cpu else "") + name)
print(f"{total} samples")
