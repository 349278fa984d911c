/// The content types of the documents FormPost's decoders and serializers read by default.
package enum DocumentContentTypes {
    /// JSON, as AFNetworking's JSON serializer accepts it.
    package static let json: Set<String> = ["application/json", "text/json", "text/javascript"]
    /// Property lists, XML or binary.
    package static let propertyList: Set<String> = ["application/x-plist"]
}
