// A Hummingbird app that receives uploads with FormPostServer, as a server of its own
// would mount it: `upload-receiver-app PORT DIRECTORY` answers `POST /upload` on
// 127.0.0.1:PORT with the receipt of the files it stored in DIRECTORY.
//
// It is also the package's footprint check: FormPostServer and Multipart need only
// FoundationEssentials, so this process loads no ICU, libcurl or libxml2 (a test reads
// its /proc/PID/maps).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormPostServer
import Hummingbird

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]) else {
    let usage = "usage: upload-receiver-app PORT DIRECTORY\n"
    _ = write(2, usage, usage.utf8.count)
    exit(2)
}
let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: arguments[2]))
let router = Router()
router.post("upload") { request, context in
    await receiver.respond(to: request, context: context)
}
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
