import FormPostReceiving
import HTTPTypes
import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// receive-uploads-cgi DIRECTORY: one request as a web server hands it to a CGI program
// (RFC 3875) — its method, path and fields in the environment, its body on standard input —
// stored in DIRECTORY and answered on standard output by the receiving core alone: no HTTP
// server, no HTTP client linked.
struct StandardInput: AsyncSequence, AsyncIteratorProtocol, Sendable {
    mutating func next() async throws -> ByteBuffer? {
        var buffer = ByteBufferAllocator().buffer(capacity: 64 * 1024)
        let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 64 * 1024) { Swift.max(0, read(0, $0.baseAddress, $0.count)) }
        return count == 0 ? nil : buffer
    }

    func makeAsyncIterator() -> StandardInput { self }
}

func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

let directory = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "./uploads"
let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: directory, maxFileSize: 1 << 30))
var fields = HTTPFields()
if let type = variable("CONTENT_TYPE") { fields[.contentType] = type }
if let length = variable("CONTENT_LENGTH") { fields[.contentLength] = length }
let request = ReceiverRequest(method: HTTPRequest.Method(variable("REQUEST_METHOD") ?? "GET") ?? .get, path: variable("PATH_INFO") ?? "/",
                              query: variable("QUERY_STRING"), headers: fields, body: ReceiverRequestBody(StandardInput()))
let response = await UploadRoutes(UploadRoutesConfiguration(receiver: receiver)).respond(to: request)
var head = "Status: \(response.status.code) \(response.status.reasonPhrase)\r\n"
for field in response.headers { head += "\(field.name): \(field.value)\r\n" }
print(head + "\r\n" + String(buffer: response.body))
