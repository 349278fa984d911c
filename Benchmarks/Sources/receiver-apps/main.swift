// receiver-apps MODE PORT DIRECTORY: one app receiving forms at POST /upload on
// 127.0.0.1:PORT into DIRECTORY, answering each file's name, size and SHA-256, for
// `formpost-bench vapor` to compare in processes of their own:
// - formpost-vapor: a Vapor app with FormPostVapor (the body streamed to UploadReceiver);
//   both FormPost apps leave files to the page cache (durability: .pageCache), as
//   vapor-collect does;
// - vapor-collect: a Vapor app receiving as Vapor's documentation shows, the body collected
//   and decoded with `req.content.decode` (multipart-kit), each file written with
//   `req.fileio` and hashed with swift-crypto;
// - formpost-hummingbird: a Hummingbird app with FormPostServer's UploadReceiver.
import Crypto
import FormPostServer
import FormPostVapor
import Foundation
import Hummingbird
import Logging
import Vapor

let arguments = CommandLine.arguments
guard arguments.count == 4, let port = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: receiver-apps formpost-vapor|vapor-collect|formpost-hummingbird PORT DIRECTORY\n".utf8))
    exit(2)
}
let directory = arguments[3]
var quiet = Logger(label: "receiver-apps")
quiet.logLevel = .warning
// Files left to the page cache, as vapor-collect's writes are: the same work on both sides
// (FormPost's default syncs each file before its receipt).
let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: directory, maxBodySize: 4 << 30, maxFileSize: 4 << 30,
                                                                       durability: .pageCache), logger: quiet)

/// What vapor-collect decodes: the benchmark's forms have a part `file` (and fields it ignores).
struct Upload: Content {
    var file: File
}

/// The receipt vapor-collect answers.
struct Stored: Content {
    var filename: String
    var size: Int
    var sha256: String
}

func vaporApp() async throws -> Vapor.Application {
    let app = try await Vapor.Application.make(Environment(name: "production", arguments: ["receiver-apps", "serve"]))
    app.logger.logLevel = .warning
    app.http.server.configuration.hostname = "127.0.0.1"
    app.http.server.configuration.port = port
    return app
}

switch arguments[1] {
case "formpost-vapor":
    let app = try await vaporApp()
    app.receiveUploads(at: "/upload", receiver: receiver)
    try await app.execute()
    try await app.asyncShutdown()
case "vapor-collect":
    let app = try await vaporApp()
    app.on(.POST, "upload", body: .collect(maxSize: "4gb")) { request async throws -> Stored in
        let upload = try request.content.decode(Upload.self)
        let path = directory + "/" + UUID().uuidString
        try await request.fileio.writeFile(upload.file.data, at: path)
        let digest = upload.file.data.withUnsafeReadableBytes { SHA256.hash(data: $0) }
        return Stored(filename: upload.file.filename, size: upload.file.data.readableBytes,
                      sha256: digest.map { String(format: "%02x", $0) }.joined())
    }
    try await app.execute()
    try await app.asyncShutdown()
case "formpost-hummingbird":
    let router = Router()
    router.post("upload") { request, context in await receiver.respond(to: request, context: context) }
    let app = Hummingbird.Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: quiet)
    try await app.runService()
default:
    FileHandle.standardError.write(Data("receiver-apps: no mode \(arguments[1])\n".utf8))
    exit(2)
}
