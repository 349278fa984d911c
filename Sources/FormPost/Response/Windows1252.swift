/// Windows-1252 text without ICU. FoundationEssentials alone decodes UTF-8, UTF-16, UTF-32,
/// ASCII, ISO-8859-1 and Mac Roman; Windows-1252, the web's most common legacy charset,
/// is decoded here when ICU is not loaded. Bytes it leaves undefined (0x81, 0x8D, 0x8F,
/// 0x90, 0x9D) become the C1 controls of the same value, as browsers read them.
package enum Windows1252 {
    /// The characters of 0x80–0x9F; the rest of the bytes are ISO-8859-1's.
    private static let high: [Unicode.Scalar] = [
        "\u{20AC}", "\u{81}", "\u{201A}", "\u{192}", "\u{201E}", "\u{2026}", "\u{2020}", "\u{2021}",
        "\u{2C6}", "\u{2030}", "\u{160}", "\u{2039}", "\u{152}", "\u{8D}", "\u{17D}", "\u{8F}",
        "\u{90}", "\u{2018}", "\u{2019}", "\u{201C}", "\u{201D}", "\u{2022}", "\u{2013}", "\u{2014}",
        "\u{2DC}", "\u{2122}", "\u{161}", "\u{203A}", "\u{153}", "\u{9D}", "\u{17E}", "\u{178}",
    ]

    /// The text `bytes` encode.
    package static func decode(_ bytes: some Sequence<UInt8>) -> String {
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            scalars.append((0x80...0x9F).contains(byte) ? high[Int(byte) - 0x80] : Unicode.Scalar(byte))
        }
        return String(scalars)
    }
}
