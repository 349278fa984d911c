import HTTPTypes
import NIOHPACK
import NIOHTTP1

extension HTTPFields {
    /// The fields of NIO's `headers`, in order; a name that is not an HTTP token is dropped.
    init(_ headers: HTTPHeaders) {
        self.init()
        reserveCapacity(headers.count)
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { append(HTTPField(name: name, value: value)) }
        }
    }
}

extension HTTPFields {
    /// The fields of an HTTP/2 HEADERS frame, in order, without its pseudo-header fields
    /// (`:status`); a name that is not an HTTP token is dropped.
    init(_ headers: HPACKHeaders) {
        self.init()
        for (name, value, _) in headers where !name.hasPrefix(":") {
            if let name = HTTPField.Name(name) { append(HTTPField(name: name, value: value)) }
        }
    }
}

extension HTTPHeaders {
    /// NIO's headers with `fields`, in order, names as written.
    init(_ fields: HTTPFields) {
        self.init(fields.map { ($0.name.rawName, $0.value) })
    }
}
