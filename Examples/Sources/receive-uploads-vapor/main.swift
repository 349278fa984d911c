import FormPostVapor
import Multipart
import Vapor

// receive-uploads-vapor [PORT] [DIRECTORY]: forms stored in DIRECTORY (./uploads) at POST /upload,
// resumable uploads of the IETF draft there too, the upload page at GET /upload, parts read
// one by one at POST /import.
let arguments = CommandLine.arguments
let port = arguments.count > 1 ? Int(arguments[1]) ?? 8080 : 8080
let directory = arguments.count > 2 ? arguments[2] : "./uploads"
let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: directory, maxFileSize: 1 << 30))
let resumable = try ResumableUploadReceiver(receiver: receiver, basePath: "/uploads")
let app = try await Application.make(Environment(name: "production", arguments: ["receive-uploads-vapor", "serve"]))
app.http.server.configuration.hostname = "127.0.0.1"
app.http.server.configuration.port = port
app.http.server.configuration.idleTimeout = .seconds(60)   // Vapor closes no idle connection unless told to
// POST /upload for forms and the draft's creations, /uploads/** for its resources (bodies
// streamed), GET /upload for the page, /healthz and /readyz; the gates of `formpost serve`
// (uploadSigner, authorize, trustedProxies, metrics) go in the same configuration.
let routes = UploadRoutesConfiguration(receiver: receiver, resumable: resumable, pagePath: "/upload",
                                       health: ServerHealth(directory: directory))
app.receiveUploads(at: "/upload", routes: routes)
app.on(.POST, "import", body: .stream) { request async throws -> String in
    var lines: [String] = []
    for try await part in try request.formParts(limits: MultipartParserLimits(maxPartBytes: 1 << 30)) {
        if let filename = part.filename {
            var size = 0
            for try await buffer in part.body { size += buffer.readableBytes }   // or send each buffer on
            lines.append("\(part.name): \(filename), \(size) bytes")
        } else {
            lines.append("\(part.name) = \(String(buffer: try await part.body.collect(upTo: 64 * 1024)))")
        }
    }
    return lines.joined(separator: "\n")
}
try await app.execute()
try await app.asyncShutdown()
