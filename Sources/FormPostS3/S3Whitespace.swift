/// Text without the whitespace around it (spaces, tabs, line ends): a token file's last
/// newline, a header's padding. Written here because `trimmingCharacters(in:)` is
/// Foundation's, which this module does not link.
enum S3Whitespace {
    /// `text` without the spaces, tabs, carriage returns and line feeds around it.
    static func trimmed(_ text: some StringProtocol) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        return String(text.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
