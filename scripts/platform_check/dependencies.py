"""What the dependencies do on Apple platforms, read from their sources at the versions
that resolve, and where the package's own sources must account for it.

Each rule names a use in Sources/ that is safe only where a decision was made (a marker
in the same file), and the dependency's behaviour that makes it so. These are the
defects that compiled everywhere and crashed on Network.framework at run time.
"""
import collections
import re

from . import platforms as P
from .findings import Finding

Rule = collections.namedtuple("Rule", "label use decided_by exempt reason")

RULES = [
    Rule("FileRegion write", re.compile(r"\.fileRegion\s*\("), re.compile(r"\bNetworkStack\b"), (),
         "swift-nio-transport-services 1.28.0 StateManagedNWConnectionChannel.write0 unwraps every write "
         "as a ByteBuffer and stops the process on a FileRegion; decide by NetworkStack (the event loop's family)"),
    Rule("HTTPClient made", re.compile(r"\bHTTPClient\s*\(|\bHTTPClient\.shared\b"), re.compile(r"\bNetworkStack\.unsupportedConfiguration\b"), (),
         "async-http-client 1.37.0 NIOTransportServices/TLSConfiguration.swift:149-183 stops the process on a client "
         "certificate, private key, key log callback or .noHostnameVerification on Network.framework"),
    Rule("default event loop group", re.compile(r"\bHTTPClient\.defaultEventLoopGroup\b"), None, ("NetworkStack.swift",),
         "async-http-client 1.37.0 HTTPClient.swift:1250: NIOTSEventLoopGroup on every Apple OS; "
         "choose with NetworkStack.preferredGroup"),
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
    found = []
    for rule in RULES:
        if rule.exempt and source.path.endswith(rule.exempt):
            continue
        if rule.decided_by is not None and rule.decided_by.search(source.code):
            continue
        for number, line in enumerate(source.code_lines, 1):
            apple = source.reach[number] & set(P.APPLE)
            if apple and rule.use.search(line):
                found.append(Finding(source.path, number, tuple(P.platform_list(apple)), "dependency",
                                     f"{rule.label} -- {rule.reason}", source.lines[number - 1].strip()))
    return found
