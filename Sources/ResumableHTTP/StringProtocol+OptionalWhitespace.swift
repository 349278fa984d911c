extension StringProtocol {
    /// The text without the spaces and horizontal tabs around it: an HTTP field value or
    /// list item with its optional whitespace (RFC 9110, 5.6.3) removed.
    package func trimmingOptionalWhitespace() -> String {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isWhitespace($0) }), let last = lastIndex(where: { !isWhitespace($0) }) else { return "" }
        return String(self[first...last])
    }
}
