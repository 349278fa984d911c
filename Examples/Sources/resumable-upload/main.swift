import Foundation
import FormPost
import Multipart

// resumable-upload URL FILE: the file as a form, with the IETF draft, in requests of 8 MiB;
// run again after a cut or a crash, it goes on from what the server acknowledged.
let arguments = CommandLine.arguments
guard arguments.count == 3, let url = URL(string: arguments[1]) else {
    print("usage: resumable-upload URL FILE")
    exit(2)
}
var form = MultipartForm()
try form.append(name: "file", fileAt: arguments[2])
let uploader = ResumableUploader(chunkSize: 8 << 20, retry: RetryPolicy(maxRetries: 5))
let result = try await uploader.upload(form, to: url) { progress in
    FileHandle.standardError.write(Data("\r\(progress.acknowledged) of \(progress.total) bytes acknowledged".utf8))
}
FileHandle.standardError.write(Data("\n".utf8))
print("resumed at \(result.resumedFrom), sent \(result.bytesSent) bytes, upload resource \(result.uploadURL)")
print(result.response.text)   // the target's answer to the whole form
