"""What the checks look for: symbols that exist on some platforms only, and APIs newer
than some platforms' oldest versions.

Modules (`import Glibc`, `Glibc.read`, `import FoundationNetworking`, `import Network`...)
are not listed here: platforms.SYSTEM_MODULES says where each module exists.

Every pattern runs on one line with comments and string contents blanked (source.py),
except those with `view="strings"`, which also see inside string literals.
"""
import collections
import re

from . import platforms as P

Symbol = collections.namedtuple("Symbol", "label pattern reason absent_on languages view")
Newer = collections.namedtuple("Newer", "label pattern first")

_NOT_MEMBER = r"(?<![\w.$])"


def _name(name):
    """An identifier used as itself (not a member `.name`, not part of a longer name)."""
    return _NOT_MEMBER + re.escape(name) + r"\b"


def _prefix(prefix):
    return _NOT_MEMBER + re.escape(prefix) + r"\w*"


def _call(name):
    return _NOT_MEMBER + re.escape(name) + r"\s*\("


def _field(name):
    return r"(?:\.|->)\s*" + re.escape(name) + r"\b"


def _table(absent_on, rows):
    """Symbols from `rows` (label, pattern, reason[, languages[, view]])."""
    return [Symbol(row[0], re.compile(row[1]), row[2], frozenset(absent_on),
                   row[3] if len(row) > 3 else ("swift", "c"), row[4] if len(row) > 4 else "code")
            for row in rows]


SWIFT = ("swift",)

# Absent on every Apple platform.
LINUX_ONLY_SYMBOLS = _table(P.APPLE, [
    ("sendfile", _name("sendfile"), "Linux's sendfile(2); Darwin's takes six arguments and sends to sockets only"),
    ("preadv2", _name("preadv2"), "Linux-only system call (Darwin: preadv, no flags)"),
    ("pwritev2", _name("pwritev2"), "Linux-only system call (Darwin: pwritev, no flags)"),
    ("RWF_NOWAIT", _name("RWF_NOWAIT"), "preadv2/pwritev2 flag, Linux only"),
    ("copy_file_range", _name("copy_file_range"), "Linux-only system call (Darwin: fcopyfile)"),
    ("MSG_NOSIGNAL", _name("MSG_NOSIGNAL"), "Linux-only send flag (Darwin: the SO_NOSIGPIPE socket option)"),
    ("SOCK_STREAM.rawValue", r"\bSOCK_(?:STREAM|DGRAM|RAW|SEQPACKET)\s*\.\s*rawValue\b",
     "Glibc imports SOCK_* as an enum; on Darwin it is an Int32 without rawValue", SWIFT),
    ("st_mtim", _field("st_mtim"), "Linux stat field (Darwin: st_mtimespec)"),
    ("st_atim", _field("st_atim"), "Linux stat field (Darwin: st_atimespec)"),
    ("st_ctim", _field("st_ctim"), "Linux stat field (Darwin: st_ctimespec)"),
    ("SOCK_CLOEXEC", _NOT_MEMBER + r"SOCK_(?:CLOEXEC|NONBLOCK)\b", "Linux-only socket type flags (Darwin: fcntl)"),
    ("O_TMPFILE", _name("O_TMPFILE"), "Linux-only open(2) flag"),
    ("O_DIRECT", _name("O_DIRECT"), "Linux-only open(2) flag (Darwin: fcntl F_NOCACHE)"),
    ("mount(", _call("mount"), "Linux's mount(2) takes five arguments, Darwin's four"),
    ("umount2", _name("umount2"), "Linux-only (Darwin: unmount(2))"),
    ("MNT_DETACH", _name("MNT_DETACH"), "Linux-only umount2 flag"),
    ("environ", _name("environ"), "not imported on Darwin (use ProcessInfo, or _NSGetEnviron().pointee)", SWIFT),
    ("epoll_", _prefix("epoll_"), "Linux-only (Darwin: kqueue)"),
    ("eventfd", _prefix("eventfd"), "Linux-only"),
    ("inotify_", _prefix("inotify_"), "Linux-only (Darwin: FSEvents, kqueue)"),
    ("memfd_create", _name("memfd_create"), "Linux-only"),
    ("fallocate", _name("fallocate"), "Linux-only (Darwin: fcntl F_PREALLOCATE)"),
    ("posix_fadvise", _name("posix_fadvise"), "not on Darwin (fcntl F_RDADVISE, F_NOCACHE)"),
    ("splice(", _call("splice"), "Linux-only system call"),
    ("prctl", _name("prctl"), "Linux-only"),
    ("pipe2", _name("pipe2"), "Linux-only (Darwin: pipe, then fcntl)"),
    ("accept4", _name("accept4"), "Linux-only (Darwin: accept, then fcntl)"),
    ("dup3", _name("dup3"), "Linux-only (Darwin: dup2, then fcntl)"),
    ("fdatasync", _name("fdatasync"), "not declared by Darwin's headers (fsync, or fcntl F_FULLFSYNC)"),
    ("get_nprocs", _prefix("get_nprocs"), "glibc-only (Darwin: sysconf(_SC_NPROCESSORS_ONLN))"),
    ("sigtimedwait", _name("sigtimedwait"), "not on Darwin"),
    ("malloc_usable_size", _name("malloc_usable_size"), "glibc-only (Darwin: malloc_size)"),
    ("timerfd_", _prefix("timerfd_"), "Linux-only (Darwin: kqueue timers)"),
    ("signalfd", _name("signalfd"), "Linux-only (Darwin: kqueue EVFILT_SIGNAL)"),
    ("sched_getaffinity", _name("sched_getaffinity"), "Linux-only"),
    ("/sys/", r"/sys/", "sysfs is Linux-only: this compiles, but the path does not exist on Darwin at run time",
     ("swift", "c"), "strings"),
    ("/proc/", r"/proc/", "procfs is Linux-only: this compiles, but the path does not exist on Darwin at run time",
     ("swift", "c"), "strings"),
    ("posix_spawn_file_actions_t()", r"\bposix_spawn_file_actions_t\s*\(\s*\)",
     "on Darwin the type is an optional pointer with no init(): declare `posix_spawn_file_actions_t?` there", SWIFT),
    ("posix_spawnattr_t()", r"\bposix_spawnattr_t\s*\(\s*\)",
     "on Darwin the type is an optional pointer with no init(): declare `posix_spawnattr_t?` there", SWIFT),
])

# Absent on Linux.
DARWIN_ONLY_SYMBOLS = _table((P.LINUX,), [
    ("NW* (Network.framework)", r"\bNW[A-Z][A-Za-z]*\b", "Network.framework exists on Apple platforms only", SWIFT),
    ("NIOTS* (NIOTransportServices)", _prefix("NIOTS"), "NIOTransportServices runs on Network.framework: Apple platforms only", SWIFT),
    ("URLSessionConfiguration.background", r"\bURLSessionConfiguration\s*\.\s*background\b|\.background\s*\(\s*withIdentifier\s*:",
     "FoundationNetworking marks background sessions unavailable", SWIFT),
    ("SOCK_STREAM as Int32", r"\bSOCK_(?:STREAM|DGRAM|RAW|SEQPACKET)\b(?!\s*\.\s*rawValue)",
     "Glibc imports SOCK_* as an enum: Linux needs Int32(SOCK_STREAM.rawValue)", SWIFT),
    ("st_mtimespec", _field("st_mtimespec"), "Darwin stat field (Linux: st_mtim)"),
    ("st_atimespec", _field("st_atimespec"), "Darwin stat field (Linux: st_atim)"),
    ("st_ctimespec", _field("st_ctimespec"), "Darwin stat field (Linux: st_ctim)"),
    ("st_birthtimespec", _field("st_birthtimespec"), "Darwin-only stat field"),
    ("kqueue", _name("kqueue"), "BSD kqueue (Linux: epoll)"),
    ("kevent", _prefix("kevent"), "BSD kqueue (Linux: epoll)"),
    ("F_NOCACHE", _name("F_NOCACHE"), "Darwin-only fcntl (Linux: O_DIRECT, posix_fadvise)"),
    ("F_FULLFSYNC", _name("F_FULLFSYNC"), "Darwin-only fcntl"),
    ("SO_NOSIGPIPE", _name("SO_NOSIGPIPE"), "Darwin-only socket option (Linux: MSG_NOSIGNAL)"),
    ("_NSGetEnviron", _name("_NSGetEnviron"), "Darwin-only (Linux: environ)"),
    ("os_unfair_lock", _prefix("os_unfair_lock"), "Darwin-only lock"),
    ("OSAllocatedUnfairLock", _name("OSAllocatedUnfairLock"), "Darwin-only lock (use Synchronization.Mutex)", SWIFT),
    ("mach_", _prefix("mach_"), "Mach API, Darwin only"),
    ("autoreleasepool", _name("autoreleasepool"), "Objective-C runtime, Darwin only", SWIFT),
    ("Sec* (Security.framework)", _NOT_MEMBER + r"Sec(?:Trust|Certificate|Identity|Key|Policy)\w*",
     "Security.framework exists on Apple platforms only", SWIFT),
])

# Present on macOS and Linux but not on every Apple platform.
PARTIAL_APPLE_SYMBOLS = (
    _table(P.IOS_FAMILY, [
        ("XMLDocument", _NOT_MEMBER + r"XML(?:Document|Element|Node|DTD|DTDNode)\b",
         "Foundation's XML tree exists on macOS (FoundationXML on Linux) only", SWIFT),
        ("homeDirectoryForCurrentUser", r"\bhomeDirectoryForCurrentUser\b",
         "macOS-only FileManager property (elsewhere: URL.homeDirectory, NSHomeDirectory())", SWIFT),
        ("Process", _name("Process"), "Foundation.Process exists on macOS and Linux only", SWIFT),
        ("posix_spawn_file_actions_addchdir_np", _NOT_MEMBER + r"posix_spawn_file_actions_addf?chdir_np\b",
         "spawn.h marks it macOS-only"),
    ])
    # The entry points of process creation: every posix_spawn_file_actions_* and
    # posix_spawnattr_* call is unavailable too, but needs one of these first.
    + _table(("tvOS", "watchOS"), [
        ("posix_spawn", _call("posix_spawn"), "spawn.h marks it unavailable on tvOS and watchOS"),
        ("posix_spawn_file_actions_init", _name("posix_spawn_file_actions_init"),
         "spawn.h marks the posix_spawn_file_actions_* family unavailable on tvOS and watchOS"),
        ("posix_spawnattr_init", _name("posix_spawnattr_init"),
         "spawn.h marks the posix_spawnattr_* family unavailable on tvOS and watchOS"),
        ("fork", _call("fork"), "unistd.h marks it prohibited on tvOS and watchOS"),
    ])
)

ABSENT_SYMBOLS = LINUX_ONLY_SYMBOLS + DARWIN_ONLY_SYMBOLS + PARTIAL_APPLE_SYMBOLS


def category(symbol):
    """The finding category a symbol table entry reports under."""
    if symbol in LINUX_ONLY_SYMBOLS:
        return "linux-only"
    return "darwin-only" if symbol in DARWIN_ONLY_SYMBOLS else "partial-apple"


# Headers that exist on one side only, for `#include` in C.
LINUX_ONLY_HEADERS = re.compile(
    r"<(?:linux/[^>]*|sys/(?:epoll|eventfd|inotify|sendfile|prctl|vfs|sysinfo|signalfd|timerfd|fsuid|sysmacros)\.h"
    r"|mntent\.h|malloc\.h|features\.h|endian\.h)>")
DARWIN_ONLY_HEADERS = re.compile(
    r"<(?:mach/[^>]*|mach-o/[^>]*|libkern/[^>]*|TargetConditionals\.h|sys/event\.h|copyfile\.h|crt_externs\.h"
    r"|malloc/malloc\.h|os/lock\.h|CoreFoundation/[^>]*)>")


def _first(macOS, iOS, tvOS, watchOS, visionOS):
    return {"macOS": P.version(macOS), "iOS": P.version(iOS), "tvOS": P.version(tvOS),
            "watchOS": P.version(watchOS), "visionOS": P.version(visionOS)}


SWIFT_6_RUNTIME = _first(15, 18, 18, 11, 2)      # Swift 6.0's standard library and Synchronization
SWIFT_5_7_RUNTIME = _first(13, 16, 16, 9, 1)     # Swift 5.7's: Duration, Clock, Regex

# APIs newer than some platform's oldest version, with the first version having them.
NEWER_APIS = [Newer(label, re.compile(pattern), first) for label, pattern, first in [
    ("Mutex", r"\bMutex\b", SWIFT_6_RUNTIME),
    ("Atomic", r"\bAtomic\s*[<(]|\bAtomicLazyReference\b", SWIFT_6_RUNTIME),
    ("String(validating:)", r"\bString\s*\(\s*validating\s*:", SWIFT_6_RUNTIME),
    ("TaskExecutor", r"\b\w*TaskExecutor\w*\b|\bexecutorPreference\s*:", SWIFT_6_RUNTIME),
    ("Duration", r"\bDuration\b", SWIFT_5_7_RUNTIME),
    ("Clock", r"\b(?:Continuous|Suspending)?Clock\b", SWIFT_5_7_RUNTIME),
    ("Task.sleep(for:)", r"\bsleep\s*\(\s*(?:for|until)\s*:", SWIFT_5_7_RUNTIME),
    ("Regex", r"\bRegex\b", SWIFT_5_7_RUNTIME),
    ("URL(filePath:) and friends", r"\bURL\s*\(\s*filePath\s*:|\.appending\s*\(\s*(?:path|component|components)\s*:"
     r"|\bURL\s*\.\s*(?:temporaryDirectory|homeDirectory|currentDirectory|documentsDirectory)\b"
     r"|\.path\s*\(\s*percentEncoded\s*:", SWIFT_5_7_RUNTIME),
]]
# Regex literals (`#/.../#`, `/.../`), found by the lexer rather than by a pattern.
REGEX_LITERAL = Newer("regex literal", None, SWIFT_5_7_RUNTIME)
