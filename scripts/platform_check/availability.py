"""The spans of a Swift file that `@available(...)` and `#available(...)` excuse.

- `@available(...)` excuses the declaration it annotates: from the attribute to the
  closing brace of that declaration's body (or to the end of a declaration with none);
- `if #available(...) { ... }` and `while #available(...) { ... }` excuse their block;
- `guard #available(...) else { ... }` excuses the rest of the enclosing block.
A span maps platforms to the version it guarantees, or to UNAVAILABLE (never compiled for
use there, as `@available(tvOS, unavailable)` or `@available(*, unavailable)`).
Everything runs on the blanked `code` view, so braces in strings and comments don't count.
"""
import re

from . import platforms as P

UNAVAILABLE = (float("inf"),) * 3
_PLATFORM_NAMES = {"macOS": "macOS", "OSX": "macOS", "iOS": "iOS", "tvOS": "tvOS",
                   "watchOS": "watchOS", "visionOS": "visionOS", "xrOS": "visionOS"}
_ATTRIBUTE = re.compile(r"@available\s*\(")
_CHECK = re.compile(r"#available\s*\(")
_DECLARATION = re.compile(r"\b(?:func|var|let|struct|class|enum|protocol|extension|actor|init|subscript"
                          r"|typealias|case|deinit|macro|associatedtype)\b")
_CONTINUATION = ("{", "->", "where", "throws", "rethrows", "async", ".", ",", ":", "=", "&", "|", "?", ")", "]")


def parse_arguments(text):
    """{platform: version or UNAVAILABLE} from the inside of @available(...)/#available(...)."""
    items = [item.strip() for item in text.split(",")]
    guaranteed = {}
    if items and items[0] == "*" and "unavailable" in items[1:]:
        return {platform: UNAVAILABLE for platform in P.APPLE}
    named = None
    for item in items:
        words = item.split()
        base = re.sub(r"ApplicationExtension$", "", words[0]) if words else ""
        if base in _PLATFORM_NAMES and len(words) == 2:
            guaranteed[_PLATFORM_NAMES[base]] = P.version(words[1])
        elif base in _PLATFORM_NAMES and len(words) == 1:
            named = _PLATFORM_NAMES[base]
        elif named and item == "unavailable":
            guaranteed[named] = UNAVAILABLE
        elif named and re.match(r"introduced\s*:", item):
            guaranteed[named] = P.version(item.split(":", 1)[1])
    return guaranteed


def _close(code, start, opener, closer):
    """The offset just past the bracket closing the one at `start`, or the end."""
    depth = 0
    for index in range(start, len(code)):
        if code[index] == opener:
            depth += 1
        elif code[index] == closer:
            depth -= 1
            if depth == 0:
                return index + 1
    return len(code)


def _next_brace(code, start):
    """The first `{` from `start` outside parentheses and brackets, or None."""
    depth = 0
    for index in range(start, len(code)):
        char = code[index]
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "{" and depth == 0:
            return index
    return None


def _declaration_end(code, start):
    """The end of the declaration that begins at `start` (after its attribute)."""
    depth = 0
    for index in range(start, len(code)):
        char = code[index]
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "{" and depth == 0:
            return _close(code, index, "{", "}")
        elif char == "\n" and depth == 0 and _DECLARATION.search(code, start, index):
            following = code[index:].lstrip()
            if not following.startswith(_CONTINUATION):
                return index
    return len(code)


def _enclosing_block_end(code, offset):
    """The end of the innermost `{ }` block holding `offset`, or the end of the file."""
    depth = 0
    for index in range(offset, len(code)):
        if code[index] == "{":
            depth += 1
        elif code[index] == "}":
            if depth == 0:
                return index
            depth -= 1
    return len(code)


def excusing_spans(code):
    """[(start, end, {platform: version})] for every @available and #available in `code`."""
    spans = []
    for match in _ATTRIBUTE.finditer(code):
        arguments_end = _close(code, match.end() - 1, "(", ")")
        guaranteed = parse_arguments(code[match.end():arguments_end - 1])
        spans.append((match.start(), _declaration_end(code, arguments_end), guaranteed))
    for match in _CHECK.finditer(code):
        arguments_end = _close(code, match.end() - 1, "(", ")")
        guaranteed = parse_arguments(code[match.end():arguments_end - 1])
        line_start = code.rfind("\n", 0, match.start()) + 1
        keywords = re.findall(r"\b(if|guard|while)\b", code[line_start:match.start()])
        if keywords and keywords[-1] == "guard":
            else_block = _next_brace(code, arguments_end)
            if else_block is not None:
                after_else = _close(code, else_block, "{", "}")
                spans.append((after_else, _enclosing_block_end(code, after_else), guaranteed))
        else:
            block = _next_brace(code, arguments_end)
            if block is not None:
                spans.append((block, _close(code, block, "{", "}"), guaranteed))
    return spans


def excused(spans, offset, platform, needed):
    """Whether some span holding `offset` guarantees `needed` on `platform`."""
    return any(start <= offset < end and guaranteed.get(platform, (0, 0, 0)) >= needed
               for start, end, guaranteed in spans)
