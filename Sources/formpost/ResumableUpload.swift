import Foundation
import FormPost

extension UploadCommand {
    /// `--resumable tus -T FILE URL`: the file goes with ``TusUploader``, which keeps the
    /// upload URL between runs, so that the same command resumes after a crash.
    func uploadResumably(client: FormPostClient, target: URL, headers: HTTPFields, options: UploadOptions, bar: ProgressBar) async throws {
        guard resumable.mode == "tus" else {
            throw UsageError("--resumable \(resumable.mode ?? ""): expected tus")
        }
        guard let path = uploadFile, path != "-", try formOptions.orderedArguments().isEmpty, dataBinary == nil, method == nil else {
            throw UsageError("--resumable tus sends one file: give -T FILE (not -F, --data-binary, -X or standard input)")
        }
        guard let chunkSize = ByteSize.parse(resumable.chunkSize), chunkSize >= TusUploader.minimumChunkSize else {
            throw UsageError("--chunk-size \(resumable.chunkSize): expected a size of at least 1M")
        }
        let uploader = TusUploader(client: client, chunkSize: chunkSize, retry: options.retry, options: options)
        let started = Date()
        let result: ResumableUploadResult
        do {
            result = try await uploader.upload(fileAt: path, to: target, headers: headers) { progress in
                bar.update(UploadProgress(bytesSent: progress.sent, totalBytes: progress.total))
            }
        } catch {
            bar.finish(summary: "Upload failed after \(String(format: "%.1f", Date().timeIntervalSince(started))) s; the same command resumes it")
            throw error
        }
        let seconds = Date().timeIntervalSince(started)
        let resumed = result.resumedFrom > 0 ? ", resumed at \(ByteSize.format(result.resumedFrom))" : ""
        bar.finish(summary: "Sent \(ByteSize.format(result.bytesSent)) in \(String(format: "%.2f", seconds)) s\(resumed); \(result.uploadURL.absoluteString)")
        if json {
            printJSON(response: result.response, sent: result.bytesSent, seconds: seconds,
                      extra: ["upload_url": result.uploadURL.absoluteString, "resumed_from": result.resumedFrom])
        } else if !silent {
            FileHandle.standardOutput.write(Data((result.uploadURL.absoluteString + "\n").utf8))
        }
        printWriteOut(WriteOut.Transfer(status: result.response.status, sent: result.bytesSent, received: result.response.body.count, seconds: seconds,
                                        url: result.uploadURL.absoluteString, httpVersion: result.response.httpVersion ?? "1.1"))
    }
}
