import HTTPTypes

/// A request's connection whose interim answers (the IETF draft's `104`) carry the
/// upload's token in their `Location`, as its final answer does (``SignatureGate``).
struct LocationBindingConnection: ReceiverConnection {
    let base: any ReceiverConnection
    /// The `Location` with the token.
    let bind: @Sendable (String) -> String

    var isMultiplexedStream: Bool { base.isMultiplexedStream }

    func sendInterim(_ status: HTTPResponse.Status, fields: HTTPFields) async {
        await base.sendInterim(status, fields: Self.binding(fields, with: bind))
    }

    /// `fields` with their `Location`, if any, as `bind` makes it.
    static func binding(_ fields: HTTPFields, with bind: (String) -> String) -> HTTPFields {
        var bound = fields
        if let location = fields[.location] { bound[.location] = bind(location) }
        return bound
    }

    func end() {
        base.end()
    }
}
