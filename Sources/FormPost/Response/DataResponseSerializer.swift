/// The body's bytes as they are; an empty body is simply empty.
public struct DataResponseSerializer: ResponseSerializer {
    public let validation: ResponseValidation

    /// Creates a serializer; by default it accepts 200–299 and any content type.
    public init(validation: ResponseValidation = ResponseValidation()) {
        self.validation = validation
    }

    public func decode(_ response: UploadResponse) throws -> [UInt8] { response.body }

    public func emptyValue(for response: UploadResponse) throws -> [UInt8] { [] }
}

extension ResponseSerializer where Self == DataResponseSerializer {
    /// The body's bytes (200–299, any content type).
    public static var data: DataResponseSerializer { DataResponseSerializer() }
}
