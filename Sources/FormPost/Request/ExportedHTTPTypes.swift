// Requests and responses carry swift-http-types' `HTTPFields`, as AsyncHTTPClient's and
// Hummingbird's users know them: importing FormPost is enough to write
// `[.authorization: "Bearer …"]`.
@_exported import HTTPTypes
