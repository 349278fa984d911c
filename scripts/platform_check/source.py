"""One source file as the checks see it: comments and string contents blanked (offsets and
line breaks kept), and the platforms on which each line is compiled.

Two views of the text, both as long as the original:
- `code`: comments, string literal contents and regex literal contents are spaces; the
  code inside string interpolations `\\(...)` stays;
- `strings`: only comments are spaces (for paths such as `/proc/` inside literals).
"""
import bisect
import re

from . import conditions as C

_STRING_OPEN = re.compile(r'(#*)("""|")')
_SINGLE_LINE_STRING_OPEN = re.compile(r'#*"')
_EXTENDED_REGEX_OPEN = re.compile(r"(#+)/")
# Before a bare `/regex/` literal: the start of an expression, not an operand.
_BEFORE_BARE_REGEX = re.compile(r"(?:^|[(\[{,=:;!&|?]|\breturn|\bcase|\btry|\bawait)\s*$")


def _blank(chars, start, end):
    for index in range(start, min(end, len(chars))):
        if chars[index] != "\n":
            chars[index] = " "


def _comment_end(text, start, nested):
    """The end of the /* comment at `start` (Swift nests them, C does not)."""
    depth, index = 0, start
    while index < len(text):
        if text.startswith("/*", index) and (nested or depth == 0):
            depth, index = depth + 1, index + 2
        elif text.startswith("*/", index):
            depth, index = depth - 1, index + 2
            if depth == 0:
                return index
        else:
            index += 1
    return len(text)


def _bare_regex_end(text, start, code):
    """The end of a bare `/.../` regex literal at `start`, or None if it is an operator."""
    if start + 1 >= len(text) or text[start + 1] in " \t\n/*=":
        return None
    line_start = text.rfind("\n", 0, start) + 1
    if not _BEFORE_BARE_REGEX.search("".join(code[line_start:start])):
        return None
    index = start + 1
    while index < len(text) and text[index] != "\n":
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == "/":
            return index + 1 if text[index - 1] not in " \t" else None
        index += 1
    return None


def blank_swift(text):
    """(code, strings, regex literal offsets) for Swift source `text`."""
    code, strings, regexes = list(text), list(text), []
    # Frames: None is code, an int is code inside an interpolation (its open parentheses),
    # a tuple (hashes, multiline) is a string literal.
    stack, index, length = [None], 0, len(text)
    while index < length:
        top, char = stack[-1], text[index]
        if isinstance(top, tuple):
            hashes, multiline = top
            closer = ('"""' if multiline else '"') + "#" * hashes
            if text.startswith(closer, index):
                stack.pop()
                index += len(closer)
            elif char == "\\" and text.startswith("#" * hashes, index + 1):
                after = index + 1 + hashes
                if text.startswith("(", after):
                    _blank(code, index, after)
                    stack.append(0)
                    index = after + 1
                else:
                    _blank(code, index, after + 1)
                    index = after + 1
            elif char == "\n" and not multiline:
                stack.pop()
            else:
                _blank(code, index, index + 1)
                index += 1
            continue
        if text.startswith("//", index):
            end = text.find("\n", index)
            end = length if end < 0 else end
            _blank(code, index, end)
            _blank(strings, index, end)
            index = end
            continue
        if text.startswith("/*", index):
            end = _comment_end(text, index, nested=True)
            _blank(code, index, end)
            _blank(strings, index, end)
            index = end
            continue
        opener = _STRING_OPEN.match(text, index) if char in '#"' else None
        if opener:
            multiline = opener.group(2) == '"""' and text[opener.end():].split("\n", 1)[0].strip() == ""
            if not multiline:
                opener = _SINGLE_LINE_STRING_OPEN.match(text, index)
            stack.append((len(opener.group(0)) - (3 if multiline else 1), multiline))
            index = opener.end()
            continue
        regex = _EXTENDED_REGEX_OPEN.match(text, index) if char == "#" else None
        end = None
        if regex:
            closer = text.find("/" + regex.group(1), regex.end())
            end = length if closer < 0 else closer + 1 + len(regex.group(1))
            _blank(code, regex.end(), end - len(regex.group(0)))
        elif char == "/":
            end = _bare_regex_end(text, index, code)
            if end:
                _blank(code, index + 1, end - 1)
        if end:
            regexes.append(index)
            index = end
            continue
        if top is not None and char == "(":
            stack[-1] += 1
        elif top is not None and char == ")":
            if top == 0:
                stack.pop()
            else:
                stack[-1] -= 1
        index += 1
    return "".join(code), "".join(strings), regexes


def blank_c(text):
    """(code, strings) for C source `text`: comments, string and character literals."""
    code, strings, index, length = list(text), list(text), 0, len(text)
    while index < length:
        char = text[index]
        if text.startswith("//", index) or text.startswith("/*", index):
            end = text.find("\n", index) if text[index + 1] == "/" else _comment_end(text, index, nested=False)
            end = length if end < 0 else end
            _blank(code, index, end)
            _blank(strings, index, end)
            index = end
        elif char in "\"'":
            end = index + 1
            while end < length and text[end] not in (char, "\n"):
                end += 2 if text[end] == "\\" else 1
            _blank(code, index + 1, end)
            index = end + 1
        else:
            index += 1
    return "".join(code), "".join(strings)


_SWIFT_DIRECTIVE = re.compile(r"^\s*#(if|elseif|else|endif|error|warning)\b(.*)$")
_C_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif|error|include|import)\b(.*)$")


class SourceFile:
    """A Swift or C file, blanked, with `reach[line]`: the platforms compiling that line.

    `problems` lists (line, message) for conditions that cannot be read and unbalanced
    directives; `errors` lists the lines of `#error` directives; `directives` maps the
    line number of every directive to its kind and text.
    """

    def __init__(self, path, text, language, models):
        self.path, self.text, self.language = path, text, language
        if language == "swift":
            self.code, self.strings, self.regexes = blank_swift(text)
        else:
            (self.code, self.strings), self.regexes = blank_c(text), []
        self.lines = text.split("\n")
        self.code_lines = self.code.split("\n")
        self.string_lines = self.strings.split("\n")
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.problems, self.errors, self.directives = [], [], {}
        self.reach = self._walk(models)

    def line_of(self, offset):
        """The 1-based line holding `offset`."""
        return bisect.bisect_right(self.line_starts, offset)

    def _walk(self, models):
        """Evaluates the `#if` stack at every line; returns reach, indexed by line (1-based)."""
        swift = self.language == "swift"
        pattern, parse = (_SWIFT_DIRECTIVE, C.parse_swift) if swift else (_C_DIRECTIVE, C.parse_c)
        frames = []  # [earlier branch conditions, this branch's condition]
        everywhere = frozenset(models)
        current = everywhere
        reach = [frozenset()]
        number = 0
        while number < len(self.code_lines):
            number += 1
            line = self.code_lines[number - 1]
            match = pattern.match(line)
            if not match:
                reach.append(current)
                continue
            kind, rest = match.group(1), match.group(2)
            while not swift and rest.rstrip().endswith("\\") and number < len(self.code_lines):
                rest = rest.rstrip()[:-1] + " " + self.code_lines[number]
                reach.append(current)
                number += 1
            self.directives[number] = (kind, rest.strip())
            reach.append(current)
            if kind in ("if", "ifdef", "ifndef"):
                frames.append([[], self._condition(kind, rest, parse, number)])
            elif kind in ("elseif", "elif", "else"):
                if not frames:
                    self.problems.append((number, f"#{kind} without #if"))
                    continue
                earlier, this = frames[-1]
                condition = C.TRUE if kind == "else" else self._condition(kind, rest, parse, number)
                frames[-1] = [earlier + [this], condition]
            elif kind == "endif":
                if not frames:
                    self.problems.append((number, "#endif without #if"))
                    continue
                frames.pop()
            elif kind == "error":
                self.errors.append(number)
                continue
            else:
                continue
            condition = C.conjoin(C.conjoin([this] + [C.negate(e) for e in earlier]) for earlier, this in frames)
            current = C.reachable(condition, models)
        if frames:
            self.problems.append((len(self.code_lines), f"{len(frames)} #if without #endif"))
        return reach

    def _condition(self, kind, rest, parse, number):
        if kind in ("ifdef", "ifndef"):
            atom = ("atom", "defined", rest.strip())
            return atom if kind == "ifdef" else C.negate(atom)
        try:
            return parse(rest)
        except C.ConditionError as error:
            self.problems.append((number, f"cannot read this condition ({error}); both branches are checked"))
            return ("atom", "flag", rest.strip())
