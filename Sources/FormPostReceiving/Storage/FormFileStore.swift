/// Where the files of multipart forms are stored: a sink for each new file, what makes a
/// request's files safe before its receipt, and their removal when the request fails.
protocol FormFileStore: Sendable {
    /// The bucket the receipt names (`bucket` of its file), nil for a directory.
    var bucket: String? { get }
    /// A sink for a new file whose part says `contentType`.
    func sink(contentType: String?) async throws -> any FormFileSink
    /// Makes the files `stored` by one request safe before its receipt is answered.
    func finish(stored: [String]) async throws
    /// Removes the files `stored` by a request that failed.
    func remove(stored: [String]) async
}
