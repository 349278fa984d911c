"""A finding and how it is printed."""
import collections

from . import platforms as P

Finding = collections.namedtuple("Finding", "path line platforms category message code")

CATEGORIES = ("manifest", "directive", "import", "qualified", "linux-only", "darwin-only",
              "partial-apple", "declared-only", "availability", "dependency")


def format_finding(finding):
    """`path:line: [platforms] category: message: code`."""
    code = finding.code if len(finding.code) <= 140 else finding.code[:139] + "…"
    platforms = ", ".join(P.platform_list(finding.platforms))
    return f"{finding.path}:{finding.line}: [{platforms}] {finding.category}: {finding.message}: {code}"


def summary(findings):
    """"N finding(s): 3 manifest, 12 linux-only, ..."."""
    counts = collections.Counter(f.category for f in findings)
    parts = [f"{counts[c]} {c}" for c in CATEGORIES if counts[c]]
    return f"check-platforms: {len(findings)} finding(s): " + ", ".join(parts)
