/// Bytes written as lowercase hexadecimal, two digits a byte: how digests (SHA-256 of
/// stored files, of a resumable form's identity) are printed across the package.
package enum Hexadecimal {
    /// `bytes` as lowercase hexadecimal: `[0x0f, 0xa0]` → `"0fa0"`.
    package static func string(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
