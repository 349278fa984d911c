import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPost

extension UploadCommand {
    /// `--resumable tus -T FILE URL` (``TusUploader``) and `--resumable ietf -T FILE|-F … URL`
    /// (``ResumableUploader``): the upload's URL is kept between runs, so that the same
    /// command resumes after a crash.
    func uploadResumably(client: FormPostClient, target: URL, headers: HTTPFields, options: UploadOptions, bar: ProgressBar) async throws {
        guard let mode = resumable.mode, mode == "tus" || mode == "ietf" else {
            throw UsageError("--resumable \(resumable.mode ?? ""): expected tus or ietf")
        }
        let formArguments = try formOptions.orderedArguments()
        guard dataBinary == nil, uploadFile != "-", (uploadFile == nil) != formArguments.isEmpty, mode == "ietf" || (uploadFile != nil && method == nil) else {
            throw UsageError(mode == "tus" ? "--resumable tus sends one file: give -T FILE (not -F, --data-binary, -X or standard input)"
                                           : "--resumable ietf sends a file (-T FILE) or a form (-F): one of them, not --data-binary or standard input")
        }
        // Each part is an upload in progress, and the final one: formpost serve allows 10 per client.
        guard (1...9).contains(resumable.parallel), resumable.parallel == 1 || mode == "tus" else {
            throw UsageError("--parallel \(resumable.parallel): expected 1 to 9, with --resumable tus")
        }
        guard let chunkSize = ByteSize.parse(resumable.chunkSize), chunkSize >= TusUploader.minimumChunkSize else {
            throw UsageError("--chunk-size \(resumable.chunkSize): expected a size of at least 1M")
        }
        // A resumable upload resumes by default (as tus-js-client does): `--retry N` sets how
        // many failed requests in a row are retried, `--retry 0` none.
        let retries = retry ?? (mode == "tus" ? TusUploader.defaultRetries : ResumableUploader.defaultRetries)
        let report: @Sendable (ResumableProgress) -> Void = { progress in bar.update(UploadProgress(bytesSent: progress.sent, totalBytes: progress.total)) }
        let started = Date()
        let result: ResumableUploadResult
        // A completed upload is forgotten only once its answer is reported: the same command
        // run again after a kill in between reports the same answer instead of uploading anew.
        let forget: (ResumableUploadResult) -> Void
        do {
            if mode == "tus", let path = uploadFile {
                var uploader = TusUploader(client: client, chunkSize: chunkSize, retry: retryPolicy(retries: retries), options: options, checksums: resumable.tusChecksum)
                uploader.forgetsCompletedUploads = false
                uploader.parallelUploads = resumable.parallel
                forget = uploader.forget
                result = try await uploader.upload(fileAt: path, to: target, headers: headers, progress: report)
            } else {
                var uploader = ResumableUploader(client: client, chunkSize: chunkSize, retry: retryPolicy(retries: retries), options: options)
                uploader.forgetsCompletedUploads = false
                forget = uploader.forget
                if let path = uploadFile {
                    result = try await uploader.upload(fileAt: path, to: target, method: RequestMethod(rawValue: method ?? "PUT"), headers: headers, progress: report)
                } else {
                    result = try await uploader.upload(try formOptions.makeForm(), to: target, method: RequestMethod(rawValue: method ?? "POST"), headers: headers, progress: report)
                }
            }
        } catch {
            bar.finish(summary: "Upload failed after \(NumberText.fixed(Date().timeIntervalSince(started), places: 1)) s; the same command resumes it")
            throw error
        }
        let seconds = Date().timeIntervalSince(started)
        let resumed = result.resumedFrom > 0 ? ", resumed at \(ByteSize.format(result.resumedFrom))" : ""
        bar.finish(summary: "Sent \(ByteSize.format(result.bytesSent)) in \(NumberText.fixed(seconds, places: 2)) s\(resumed); \(result.uploadURL.absoluteString)")
        let transfer = WriteOut.Transfer(status: result.response.status, sent: result.bytesSent, received: result.response.body.count, seconds: seconds,
                                         url: result.uploadURL.absoluteString, httpVersion: result.response.httpVersion ?? "1.1")
        if failOnError || failWithBody, result.response.status >= 400 {
            if failWithBody { try writeBody(result.response.body) }
            printWriteOut(transfer)
            if !silent || showError { Descriptor.standardError.print("formpost: (22) The requested URL returned error: \(result.response.status)\n") }
            forget(result)
            throw ExitCode(ExitStatus.httpError.rawValue)
        }
        if json {
            if let output { try OutputFile.write(result.response.body, to: output) }
            printJSON(response: result.response, sent: result.bytesSent, seconds: seconds,
                      extra: ["upload_url": .string(result.uploadURL.absoluteString), "resumed_from": .integer(Int64(result.resumedFrom))])
        } else if mode == "tus" {
            if !silent { Descriptor.standardOutput.print((result.uploadURL.absoluteString + "\n")) }
        } else {
            // As an upload in one request: the target's answer.
            try writeBody(result.response.body)
        }
        printWriteOut(transfer)
        forget(result)
    }

    /// Writes a response body to `-o` or standard output.
    private func writeBody(_ body: [UInt8]) throws {
        if let output {
            try OutputFile.write(body, to: output)
        } else {
            try? Descriptor.standardOutput.write(Array(body))
        }
    }
}
