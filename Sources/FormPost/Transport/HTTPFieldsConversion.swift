import HTTPTypes
import NIOHTTP1

extension HTTPFields {
    /// The fields of NIO's `headers`, in order; a name that is not an HTTP token is dropped.
    init(_ headers: HTTPHeaders) {
        self.init(headers.compactMap { name, value in HTTPField.Name(name).map { HTTPField(name: $0, value: value) } })
    }
}

extension HTTPHeaders {
    /// NIO's headers with `fields`, in order, names as written.
    init(_ fields: HTTPFields) {
        self.init(fields.map { ($0.name.rawName, $0.value) })
    }
}
