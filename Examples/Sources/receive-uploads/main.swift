import FormPostServer
import Hummingbird
import Multipart

// receive-uploads [PORT] [DIRECTORY]: forms stored in DIRECTORY (./uploads) at POST /upload,
// resumable uploads of the IETF draft there too, parts read one by one at POST /import.
let arguments = CommandLine.arguments
let port = arguments.count > 1 ? Int(arguments[1]) ?? 8080 : 8080
let directory = arguments.count > 2 ? arguments[2] : "./uploads"
let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: directory, maxFileSize: 1 << 30))
let resumable = try ResumableUploadReceiver(receiver: receiver, basePath: "/uploads")
let router = Router()
router.post("upload") { request, context in
    if resumable.handles(request) {                                  // Upload-Complete: a resumable upload begins
        return await resumable.respond(to: request, context: context)
    }
    return await receiver.respond(to: request, context: context)     // stores the files, answers the receipt
}
for method in [HTTPRequest.Method.head, .patch, .delete, .get] {    // the resumable uploads' resources
    router.on("uploads/:id", method: method) { request, context in
        await resumable.respond(to: request, context: context)
    }
}
router.post("import") { request, context -> String in
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
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
