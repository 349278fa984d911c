// A Vapor app that receives uploads with FormPostVapor, as a Vapor server of its own
// would mount it: `upload-receiver-vapor PORT DIRECTORY [MAX_FILE_SIZE]` answers on
// 127.0.0.1:PORT `POST /upload` (multipart forms, and creations of the IETF draft's
// resumable uploads) and the upload page on `GET /upload`, tus 1.0 under `/files` and the
// draft's uploads under `/uploads`, storing in DIRECTORY files of at most MAX_FILE_SIZE
// bytes (10 GiB, the receivers' default, when not given).
// Built with the package's "Vapor" trait only (`swift build --traits Vapor`).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if Vapor
import FormPostReceiving
import FormPostVapor
import Vapor

let arguments = CommandLine.arguments
var configuration = ReceiverConfiguration(directory: arguments.count > 2 ? arguments[2] : "")
guard (3...4).contains(arguments.count), let port = Int(arguments[1]),
      let maxFileSize = arguments.count == 4 ? Int64(arguments[3]) : configuration.maxFileSize else {
    let usage = "usage: upload-receiver-vapor PORT DIRECTORY [MAX_FILE_SIZE]\n"
    _ = write(2, usage, usage.utf8.count)
    exit(2)
}
configuration.maxFileSize = maxFileSize
let receiver = try UploadReceiver(configuration: configuration)
let tus = try TusReceiver(configuration: receiver.configuration, basePath: "/files")
let resumable = try ResumableUploadReceiver(receiver: receiver, basePath: "/uploads")

// Vapor reads its command from the arguments it is given: here, always `serve`.
let app = try await Application.make(Environment(name: "production", arguments: ["upload-receiver-vapor", "serve"]))
app.logger.logLevel = .warning
app.http.server.configuration.hostname = "127.0.0.1"
app.http.server.configuration.port = port
app.http.server.configuration.idleTimeout = .seconds(60)
app.receiveUploads(at: "/upload", receiver: receiver, tus: tus, resumable: resumable, uploadPage: true)
do {
    try await app.execute()
} catch {
    app.logger.error("\(error)")
}
try await app.asyncShutdown()
#else
let message = "upload-receiver-vapor: built without the package's Vapor trait (swift build --traits Vapor)\n"
_ = write(2, message, message.utf8.count)
exit(1)
#endif
