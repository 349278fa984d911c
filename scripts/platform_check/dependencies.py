"""What the dependencies do on Apple platforms, read from their sources at the versions
that resolve, and where the package's own sources must account for it.

Each rule names a use in Sources/ that is safe only where a decision was made (a marker
in the same file), and the dependency's behaviour that makes it so. These are the
defects that compiled everywhere and crashed on Network.framework at run time.

`FileRegion` writes are held to a type rather than a word (`file_region_findings`): every
`FileRegion` is made inside `NetworkStack.PlaintextSocketConnection`, whose initialisers are
all private to NetworkStack.swift, so only NetworkStack decides which connection gets one
and the compiler holds every writer of a `FileRegion` to having been given that value.
"""
import collections
import re

from . import platforms as P
from .findings import Finding

# `platforms`: where the use matters; `within`: the directory it matters in (all of Sources/ when empty).
Rule = collections.namedtuple("Rule", "label use decided_by exempt reason platforms within", defaults=(P.APPLE, ""))

RULES = [
    # A client made on NIOPosix's own group (a server's hooks) never reaches Network.framework.
    Rule("HTTPClient made", re.compile(r"\bHTTPClient\s*\((?!\s*eventLoopGroup:\s*MultiThreadedEventLoopGroup\.singleton\b)|\bHTTPClient\.shared\b"),
         re.compile(r"\bNetworkStack\.unsupportedConfiguration\b"), (),
         "async-http-client 1.37.0 NIOTransportServices/TLSConfiguration.swift:149-183 stops the process on a client "
         "certificate, private key, key log callback or .noHostnameVerification on Network.framework"),
    Rule("default event loop group", re.compile(r"\bHTTPClient\.defaultEventLoopGroup\b"), None, ("NetworkStack.swift",),
         "async-http-client 1.37.0 HTTPClient.swift:1250: NIOTSEventLoopGroup on every Apple OS; "
         "choose with NetworkStack.preferredGroup"),
    Rule("default transport on watchOS", re.compile(r"\bAsyncHTTPClientTransport\.shared\b"), None, (),
         "Apple TN3135: ordinary watchOS apps get no Network.framework or BSD-socket networking, "
         "which AsyncHTTPClient uses there; the default is FormPostURLSession's URLSessionTransport",
         ("watchOS",)),
    Rule("client without a transport on watchOS", re.compile(r"\bFormPostClient\s*\(\s*\)"), None, (),
         "FormPost has no default transport on watchOS (Apple TN3135); FormPostURLSession's FormPostClient() has",
         ("watchOS",), "Sources/FormPost/"),
    Rule("InputStream subclass", re.compile(r"\b(?:class|actor)\s+\w+\s*:\s*(?:Foundation\.)?InputStream\b"), None, (),
         "Darwin's URLSession schedules a body stream on its run loop and waits for its events: a subclass must "
         "implement scheduling, the delegate and properties; use Stream.getBoundStreams there"),
    Rule("body stream read back", re.compile(r"\boriginalRequest\s*\??\s*\.\s*httpBodyStream\b"), None, (),
         "Apple's uploadTask(withStreamedRequest:) reads the stream given by needNewBodyStream, "
         "never originalRequest.httpBodyStream: keep the body's failure with the task"),
]


def findings(source):
    """The rules `source` (a Swift file under Sources/) breaks on Apple platforms."""
    if source.language != "swift" or not source.path.startswith("Sources/"):
        return []
    found = file_region_findings(source)
    for rule in RULES:
        if rule.exempt and source.path.endswith(rule.exempt) or not source.path.startswith(rule.within):
            continue
        if rule.decided_by is not None and rule.decided_by.search(source.code):
            continue
        for number, line in enumerate(source.code_lines, 1):
            reached = source.reach[number] & set(rule.platforms)
            if reached and rule.use.search(line):
                found.append(Finding(source.path, number, tuple(P.platform_list(reached)), "dependency",
                                     f"{rule.label} -- {rule.reason}", source.lines[number - 1].strip()))
    return found


GATE = "PlaintextSocketConnection"
GATE_FILE = "Sources/FormPost/Transport/NetworkStack.swift"
FILE_REGION = re.compile(r"\bFileRegion\s*\(|\.fileRegion\s*\(")
FILE_REGION_REASON = (
    "NIOSSL's handler (TLS) and swift-nio-transport-services 1.28.0 StateManagedNWConnectionChannel.write0 "
    "(Network.framework) take ByteBuffers only and stop the process on a FileRegion; only a plaintext "
    "connection on NIOPosix's sockets takes one, and only NetworkStack knows which connection a request's "
    "body goes on")
_GATE_DECLARATION = re.compile(r"\b(?:struct|class|enum|actor)\s+" + GATE + r"\b")
_INIT = re.compile(r"(?<![.\w])init\s*[?!]?\s*[(<]")


def _body(code, start):
    """(open, close): the offsets of the braces of the declaration body after `start`."""
    opening = code.find("{", start)
    if opening < 0:
        return None
    depth = 0
    for index in range(opening, len(code)):
        if code[index] == "{":
            depth += 1
        elif code[index] == "}":
            depth -= 1
            if depth == 0:
                return opening, index
    return opening, len(code)


def file_region_findings(source):
    """Every `FileRegion` made outside the body of the gate type (`GATE`, declared in
    `GATE_FILE`), and a gate that code elsewhere could make a value of: an initialiser that
    is not private or fileprivate, or none declared (a struct's memberwise one is internal)."""
    found = []

    def finding(offset, message):
        number = source.line_of(offset)
        platforms = tuple(P.platform_list(source.reach[number])) or tuple(P.ALL)
        found.append(Finding(source.path, number, platforms, "dependency", f"{message} -- {FILE_REGION_REASON}",
                             source.lines[number - 1].strip()))

    gates = []
    for declaration in _GATE_DECLARATION.finditer(source.code):
        body = _body(source.code, declaration.end())
        if body is None:
            continue
        if source.path != GATE_FILE:
            finding(declaration.start(), f"{GATE} declared outside {GATE_FILE}")
            continue
        gates.append(body)
        inits = list(_INIT.finditer(source.code, body[0], body[1]))
        if not inits:
            finding(declaration.start(), f"{GATE} declares no initialiser (a struct's memberwise one is internal)")
        for init in inits:
            # The modifiers: what precedes `init` since the last brace, semicolon or line end.
            start = max(source.code.rfind(c, body[0], init.start()) for c in "{};\n") + 1
            if not re.search(r"\b(?:private|fileprivate)\b", source.code[start:init.start()]):
                finding(init.start(), f"{GATE} initialiser that code outside {GATE_FILE} can call")
    for use in FILE_REGION.finditer(source.code):
        if not any(open_ < use.start() < close for open_, close in gates):
            finding(use.start(), f"FileRegion made outside {GATE}")
    return found
