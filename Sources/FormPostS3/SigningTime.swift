/// The moment a request is signed, as Signature Version 4 writes it: `20261126T151200Z`
/// (`x-amz-date`) and its first eight characters (the credential scope's date). Made from
/// seconds since 1970 in UTC, without a calendar library.
package struct SigningTime: Sendable, Equatable {
    /// `YYYYMMDD'T'HHMMSS'Z'`.
    package let timestamp: String

    /// `YYYYMMDD`.
    package var date: Substring { timestamp.prefix(8) }

    /// The moment `secondsSince1970` seconds after 1970-01-01T00:00:00Z.
    package init(secondsSince1970: Int64) {
        let days = secondsSince1970 >= 0 ? secondsSince1970 / 86_400 : (secondsSince1970 - 86_399) / 86_400
        let seconds = secondsSince1970 - days * 86_400
        let (year, month, day) = Self.civil(daysSince1970: days)
        timestamp = Self.digits(year, 4) + Self.digits(month, 2) + Self.digits(day, 2) + "T"
            + Self.digits(seconds / 3600, 2) + Self.digits(seconds / 60 % 60, 2) + Self.digits(seconds % 60, 2) + "Z"
    }

    /// The proleptic Gregorian date of a day number (Howard Hinnant's `civil_from_days`).
    private static func civil(daysSince1970: Int64) -> (Int64, Int64, Int64) {
        let z = daysSince1970 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
