/// Sizes and rates as users type and read them: `500K`, `10M`, `2G` (powers of 1024).
enum ByteSize {
    /// Parses a plain count or one with a K, M, G or T suffix (case-insensitive, optional B);
    /// nil for anything else, or a size that does not fit in 63 bits.
    static func parse(_ text: String) -> Int64? {
        var digits = text.trimmingSpaces.uppercased()
        if digits.hasSuffix("B"), digits.count > 1 { digits.removeLast() }
        var multiplier: Int64 = 1
        switch digits.last {
        case "K": multiplier = 1 << 10
        case "M": multiplier = 1 << 20
        case "G": multiplier = 1 << 30
        case "T": multiplier = 1 << 40
        default: break
        }
        if multiplier > 1 { digits.removeLast() }
        // Digits only (no exponents, infinities or NaN), and a product that fits in Int64.
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(digits), value.isFinite, value >= 0 else { return nil }
        let bytes = value * Double(multiplier)
        guard bytes < 9.2e18 else { return nil }
        return Int64(bytes)
    }

    /// `1.5 GiB`, `12.0 MiB`, `512 B`.
    static func format(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : NumberText.fixed(value, places: 1) + " " + units[unit]
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
