#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// `formpost serve --log-format json`: each log message as one line of JSON on standard
/// error, for a log collector to read without parsing prose —
/// `{"time":"2026-11-27T05:01:02.345Z","level":"info","label":"formpost.serve","source":"FormPostReceiving","message":"POST /upload 200", …}`
/// with every metadata value a key of its own beside those (`method`, `path`, `status`,
/// `bytes`, `duration`, `client`, `upload`: a receiver's request line). Integer and
/// decimal metadata are JSON numbers, lists arrays, dictionaries objects; a metadata key
/// named like one of the line's own keys is dropped rather than let overwrite it.
struct JSONLogHandler: LogHandler {
    /// The logger's label.
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        Descriptor.standardError.print(line(event, at: Self.now()) + "\n")
    }

    /// The JSON of `event`, logged at `time` (ISO 8601, UTC).
    func line(_ event: LogEvent, at time: String) -> String {
        var object: [String: JSONValue] = [
            "time": .string(time), "level": .string(event.level.rawValue), "label": .string(label),
            "source": .string(event.source), "message": .string(event.message.description),
        ]
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let own = event.metadata { merged.merge(own) { $1 } }
        for (key, value) in merged where object[key] == nil {
            object[key] = Self.json(value)
        }
        return JSONValue.object(object).text
    }

    /// A metadata value as JSON: numbers as numbers, the rest as their text.
    static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let convertible):
            switch convertible {
            case let number as Int: .integer(Int64(number))
            case let number as Int64: .integer(number)
            case let number as Double where number.isFinite: .number(number)
            default: .string(convertible.description)
            }
        case .array(let values): .array(values.map(json))
        case .dictionary(let values): .object(values.mapValues(json))
        }
    }

    /// Now, as `2026-11-27T05:01:02.345Z`.
    static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let milliseconds = Int(spec.tv_nsec) / 1_000_000
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = String(String(1000 + milliseconds).dropFirst())
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }
}
