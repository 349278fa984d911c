#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Numbers as the command prints them, as C's `printf` writes them (`%.2f`, `%03d`, `%3d`),
/// without Foundation's `String(format:)`.
enum NumberText {
    /// `value` with `places` decimals, rounded as `printf` rounds: `fixed(1.005, places: 2)`.
    static func fixed(_ value: Double, places: Int) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.\(places)f", $0) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `value` in at least `width` characters, padded on the left with `padding`.
    static func padded(_ value: Int, width: Int, with padding: Character = " ") -> String {
        let digits = String(value)
        return String(repeating: padding, count: max(0, width - digits.count)) + digits
    }
}
