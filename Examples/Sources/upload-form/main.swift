import Foundation
import FormPost
import Multipart

// upload-form URL FILE [NAME=VALUE …]: the fields and the file as one form, with progress.
let arguments = CommandLine.arguments
guard arguments.count >= 3, let url = URL(string: arguments[1]) else {
    print("usage: upload-form URL FILE [NAME=VALUE …]")
    exit(2)
}
var form = MultipartForm()
for field in arguments.dropFirst(3) {
    let pair = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
    form.append(name: String(pair[0]), value: pair.count > 1 ? String(pair[1]) : "")
}
try form.append(name: "file", fileAt: arguments[2])   // checks the file, records its size, reads nothing
let response = try await FormPostClient().upload(form, to: url) { progress in
    let percent = Int((progress.fraction ?? 0) * 100)
    FileHandle.standardError.write(Data("\r\(progress.bytesSent) of \(progress.totalBytes ?? 0) bytes, \(percent)%".utf8))
}
FileHandle.standardError.write(Data("\n".utf8))
print(response.status)
print(response.text)
