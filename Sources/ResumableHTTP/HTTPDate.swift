#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// HTTP's dates (RFC 9110, 5.6.7) without Foundation's `DateFormatter` (and so without ICU):
/// written as IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, always in English and GMT;
/// read in that form and in the two obsolete ones a recipient must also accept,
/// `Sunday, 06-Nov-94 08:49:37 GMT` (RFC 850) and `Sun Nov  6 08:49:37 1994` (asctime).
package enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longDays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date `seconds` after 1970-01-01T00:00:00Z (fractions dropped).
    package static func string(secondsSince1970 seconds: Double) -> String {
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec)) GMT"
    }

    /// Seconds since 1970-01-01T00:00:00Z of an HTTP date in any of its three forms, or nil
    /// when `text` is none of them (or names a day, month or time that does not exist).
    package static func secondsSince1970(parsing text: some StringProtocol) -> Double? {
        let words = String(text).split(separator: " ").map(String.init)
        var day: Int?, month: Int?, year: Int?, clock: String?, weekday: String?
        switch words.count {
        case 6 where words[5] == "GMT" && words[0].hasSuffix(","):
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            guard words[1].count == 2, words[3].count == 4 else { return nil }
            weekday = String(words[0].dropLast()); day = Int(words[1]); month = months.firstIndex(of: words[2]); year = Int(words[3]); clock = words[4]
            guard let name = weekday, days.contains(name) else { return nil }
        case 4 where words[3] == "GMT" && words[0].hasSuffix(","):
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT (two-digit years taken as 1970–2069)
            weekday = String(words[0].dropLast())
            guard let name = weekday, longDays.contains(name) else { return nil }
            let date = words[1].split(separator: "-").map(String.init)
            guard date.count == 3, date[0].count == 2, date[2].count == 2, let shortYear = Int(date[2]) else { return nil }
            day = Int(date[0]); month = months.firstIndex(of: date[1]); year = shortYear < 70 ? 2000 + shortYear : 1900 + shortYear; clock = words[2]
        case 5:
            // asctime: Sun Nov  6 08:49:37 1994
            guard days.contains(words[0]), words[2].count <= 2, words[4].count == 4 else { return nil }
            month = months.firstIndex(of: words[1]); day = Int(words[2]); clock = words[3]; year = Int(words[4])
        default:
            return nil
        }
        let time = (clock ?? "").split(separator: ":").map { $0.count == 2 ? Int($0) : nil }
        guard let day, let month, let year, time.count == 3, let hour = time[0], let minute = time[1], let second = time[2],
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        // timegm normalises 31 Feb into March: such a date does not exist.
        guard parts.tm_mday == Int32(day), parts.tm_mon == Int32(month) else { return nil }
        return Double(seconds)
    }
}
