#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// curl's `-w`/`--write-out`: a format whose `%{variable}` are replaced once the transfer
/// is done — `http_code`, `http_version`, `size_upload`, `size_download`, `speed_upload`
/// (bytes per second), `time_total` (seconds), `url_effective`, `%{json}` (all of them as
/// one JSON object) — and whose `\n`, `\r`, `\t` are those characters.
struct WriteOut {
    let format: String

    /// What the transfer gives the variables.
    struct Transfer {
        let status: Int
        let sent: Int64
        let received: Int
        let seconds: Double
        let url: String
        /// curl's `%{http_version}`: `1.1`, `2`; `0` when there was no answer.
        let httpVersion: String
    }

    func render(_ transfer: Transfer) -> String {
        let values: [String: String] = [
            "http_code": NumberText.padded(transfer.status, width: 3, with: "0"),
            "response_code": NumberText.padded(transfer.status, width: 3, with: "0"),
            "size_upload": String(transfer.sent),
            "size_download": String(transfer.received),
            "speed_upload": String(Int64(Double(transfer.sent) / max(transfer.seconds, 1e-9))),
            "time_total": NumberText.fixed(transfer.seconds, places: 6),
            "url_effective": transfer.url,
            "http_version": transfer.httpVersion,
        ]
        var output = ""
        var rest = Substring(format)
        while let start = rest.firstIndex(where: { $0 == "%" || $0 == "\\" }) {
            output += rest[..<start]
            let after = rest.index(after: start)
            guard after < rest.endIndex else {
                output.append(rest[start])
                rest = rest[after...]
                break
            }
            if rest[start] == "\\" {
                let escapes: [Character: String] = ["n": "\n", "r": "\r", "t": "\t", "\\": "\\"]
                output += escapes[rest[after]] ?? String(rest[start...after])
                rest = rest[rest.index(after: after)...]
            } else if rest[after] == "{", let close = rest[after...].firstIndex(of: "}") {
                let name = String(rest[rest.index(after: after)..<close])
                output += name == "json" ? Self.json(values) : (values[name] ?? "")
                rest = rest[rest.index(after: close)...]
            } else {
                output.append(rest[start])
                rest = rest[after...]
            }
        }
        return output + rest
    }

    private static func json(_ values: [String: String]) -> String {
        var object: [String: JSONValue] = [:]
        // As curl's: numbers are numbers, except the version (`"2"`, `"1.1"`).
        for (name, value) in values {
            guard name != "http_version", let number = Double(value), number.isFinite else { object[name] = .string(value); continue }
            object[name] = number.rounded() == number && !value.contains(".") && abs(number) < 9e18 ? .integer(Int64(number)) : .number(number)
        }
        return JSONValue.object(object).text
    }
}
