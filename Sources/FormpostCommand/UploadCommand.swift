import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPost
import Multipart
import Synchronization

/// `formpost [options] URL`: uploads a form (`-F`), a file (`-T`) or raw bytes (`--data-binary`).
struct UploadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Upload a form, a file or bytes (the default command).",
        discussion: """
        Examples:
          formpost -F title=Holiday -F photo=@beach.jpg https://example.com/upload
          formpost -T big.iso https://example.com/put                   # a raw PUT
          formpost --cacert ca.pem --http1.1 -F f=@x.bin https://localhost:8443/
          formpost encode -F a=1 -F f=@x.bin -o body.bin                # the body, not sent
          formpost serve --port 8080 --dir ./uploads                    # receive uploads
        """
    )

    @OptionGroup var formOptions: FormOptions
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var resumable: ResumableOptions
    @Option(name: [.customShort("T"), .customLong("upload-file")], help: "Send this file as the raw body (PUT unless -X says otherwise).")
    var uploadFile: String?
    @Option(name: .customLong("data-binary"), help: "Send @FILE (or a literal value) as the raw body of a POST.")
    var dataBinary: String?
    @Option(name: [.customShort("H"), .customLong("header")], help: "An extra request header, \"Name: value\".")
    var headers: [String] = []
    @Option(name: [.customShort("X"), .customLong("request")], help: "The method (POST by default, PUT with -T).")
    var method: String?
    @Option(name: [.customShort("o"), .customLong("output")], help: "Write the response body to this file (written through, as curl does: devices, links and pipes stay what they are); - for standard output.")
    var output: String?
    @Flag(name: [.customShort("f"), .customLong("fail")], help: "Exit 22 without printing the body when the status is 400 or more.")
    var failOnError = false
    @Flag(name: .customLong("fail-with-body"), help: "Exit 22 when the status is 400 or more, after printing the body.")
    var failWithBody = false
    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the response's status line and header fields before its body.")
    var include = false
    @Flag(name: [.customShort("L"), .customLong("location")], help: "Follow redirects (credentials are dropped when the origin changes).")
    var location = false
    @Flag(name: .customLong("location-trusted"), help: "Follow redirects and send credentials to other origins too (never from https to http).")
    var locationTrusted = false
    @Option(name: .customLong("max-redirs"), help: "The most redirects followed with -L (50).")
    var maxRedirects = 50
    @Option(name: .customLong("retry"), help: "Retry this many times on connection failures, 503 and 429 (with --resumable: failed requests in a row, \(TusUploader.defaultRetries) unless given).")
    var retry: Int?
    @Option(name: .customLong("retry-delay"), help: "Wait this many seconds between retries (instead of doubling from 0.5 s).")
    var retryDelay: Double?
    @Option(name: [.customShort("w"), .customLong("write-out")], help: "Print this after the transfer: %{http_code}, %{size_upload}, %{speed_upload}, %{time_total}, %{json}…")
    var writeOut: String?
    @Option(name: [.customShort("D"), .customLong("dump-header")], help: "Write the response's status line and header fields to this file (- for standard output).")
    var dumpHeader: String?
    @Flag(name: .customLong("create-dirs"), help: "Create the missing directories of -o's path.")
    var createDirectories = false
    @Option(name: .customLong("limit-rate"), help: "The most bytes per second to send: 500K, 10M.")
    var limitRate: String?
    @Option(name: .customLong("max-time"), help: "The whole request's time limit in seconds.")
    var maxTime: Double?
    @Flag(name: [.customShort("s"), .customLong("silent")], help: "No progress bar, summary or error message (with -S, error messages still).")
    var silent = false
    @Flag(name: [.customShort("S"), .customLong("show-error")], help: "With -s, print error messages all the same.")
    var showError = false
    @Flag(name: [.customShort("#"), .customLong("progress-bar")], help: "Show the progress as a bar (curl's -#; it is formpost's only progress display).")
    var progressBar = false
    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Print the request and response heads on standard error.")
    var verbose = false
    @Option(name: .customLong("transport"), help: "ahc (AsyncHTTPClient, the default) or urlsession.")
    var transport: String = "ahc"
    @Flag(name: .customLong("json"), help: "Print one JSON summary on standard output; the body goes only to -o.")
    var json = false
    @Argument(help: "The URL to send to.")
    var url: String

    func run() async throws {
        do {
            let (transport, shutdown) = try makeTransport()
            do {
                try await upload(with: transport)
                await shutdown()
            } catch {
                await shutdown()
                throw error
            }
        } catch let code as ExitCode {
            throw code
        } catch {
            throw fail(error, quiet: silent && !showError)
        }
    }

    private func upload(with uploadTransport: any UploadTransport) async throws {
        let target = try TargetURL.parse(url)
        let rate = try limitRate.map { text -> Int64 in
            guard let value = ByteSize.parse(text), value > 0 else { throw UsageError("--limit-rate \(text): expected a size such as 500K or 10M") }
            return value
        }
        var extraHeaders = try identity.headers()
        for line in headers {
            let field = try FormBuilder.header(line)
            guard let name = HTTPField.Name(field.name) else { throw UsageError("header \"\(line)\": \"\(field.name)\" is not a valid field name") }
            extraHeaders.append(HTTPField(name: name, value: field.value))
        }
        let follows = location || locationTrusted
        let options = UploadOptions(retry: retryPolicy(retries: retry ?? 0), maxRedirects: follows ? max(0, maxRedirects) : 0,
                                    keepsCredentialsAcrossOrigins: locationTrusted, maxBytesPerSecond: rate, timeout: maxTime.map { .seconds($0) })
        let client = FormPostClient(transport: uploadTransport, requestSerializer: RequestSerializer(defaultHeaders: Self.curlLikeHeaders))
        let bar = ProgressBar(enabled: !silent && !json)
        if resumable.mode != nil {
            return try await uploadResumably(client: client, target: target, headers: extraHeaders, options: options, bar: bar)
        }
        // After the resumable branch, which builds its own body: a form built here too would
        // read each `<file` twice, and standard input (`@-`) only once.
        let (body, defaultMethod) = try requestBody()
        let requestMethod = RequestMethod(rawValue: method ?? defaultMethod.rawValue)
        let lastSent = Mutex(Int64(0))
        let request = client.requestSerializer.request(requestMethod, target, body: body, headers: extraHeaders)
        if verbose { printRequestHead(request) }
        let started = Date()
        let response: UploadResponse
        do {
            if let body, requestMethod == .get || requestMethod == .head, body.contentLength ?? 1 > 0 {
                throw UploadError.methodCannotCarryBody(requestMethod)
            }
            response = try await client.send(request, options: options) { progress in
                lastSent.withLock { $0 = progress.bytesSent }
                bar.update(progress)
            }
        } catch {
            bar.finish(summary: "Upload failed after \(NumberText.fixed(Date().timeIntervalSince(started), places: 1)) s")
            // As curl: -w is written for a transfer that failed too, with http_code 000.
            printWriteOut(WriteOut.Transfer(status: 0, sent: lastSent.withLock { $0 }, received: 0, seconds: Date().timeIntervalSince(started), url: target.absoluteString, httpVersion: "0"))
            throw error
        }
        let seconds = Date().timeIntervalSince(started)
        let sent = lastSent.withLock { $0 }
        let transfer = WriteOut.Transfer(status: response.status, sent: sent, received: response.body.count, seconds: seconds, url: response.url.absoluteString,
                                            httpVersion: response.httpVersion ?? "1.1")
        bar.finish(summary: "Sent \(ByteSize.format(sent)) in \(NumberText.fixed(seconds, places: 2)) s (\(ByteSize.format(Int64(Double(sent) / max(seconds, 1e-9))))/s); HTTP \(response.status)")
        if verbose { printResponseHead(response) }
        if failOnError, !failWithBody, response.status >= 400 {
            printWriteOut(transfer)
            if !silent || showError { Descriptor.standardError.print("formpost: (22) The requested URL returned error: \(response.status)\n") }
            throw ExitCode(ExitStatus.httpError.rawValue)
        }
        if let dumpHeader { try OutputFile.write(Array(Self.responseHead(response).utf8), to: dumpHeader) }
        let head = include ? Array(Self.responseHead(response).utf8) : []
        if let output, createDirectories {
            let parent = output.lastIndex(of: "/").map { String(output[..<$0]) } ?? ""
            if !parent.isEmpty { try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) }
        }
        if let output {
            try OutputFile.write(head + response.body, to: output)
        } else if !json {
            try? Descriptor.standardOutput.write(head + response.body)
        }
        if failWithBody, response.status >= 400 {
            printWriteOut(transfer)
            if !silent || showError { Descriptor.standardError.print("formpost: (22) The requested URL returned error: \(response.status)\n") }
            throw ExitCode(ExitStatus.httpError.rawValue)
        }
        if json { printJSON(response: response, sent: sent, seconds: seconds) }
        printWriteOut(transfer)
    }

    /// `retries` retries (none for 0), waiting `--retry-delay` between them if given.
    func retryPolicy(retries: Int) -> RetryPolicy {
        guard retries > 0 else { return .none }
        return retryDelay.map { RetryPolicy(maxRetries: retries, baseDelay: .seconds($0), maxDelay: .seconds($0)) } ?? RetryPolicy(maxRetries: retries)
    }

    /// The transport `--transport` and the connection options ask for, and how to end it.
    private func makeTransport() throws -> (transport: any UploadTransport, shutdown: @Sendable () async -> Void) {
        guard transport == "ahc" || transport == "urlsession" else { throw UsageError("--transport \(transport): expected ahc or urlsession") }
        if transport == "urlsession" {
            guard connection.caCertificates == nil, !connection.insecure, connection.certificate == nil, connection.proxy == nil else {
                throw UsageError("--cacert, -k, --cert and -x need the default transport (URLSession takes trust and proxies from the system)")
            }
            if let make = URLSessionTransportFactory.current { return make(connection.connectTimeout) }
            if let failure = SiblingExecutable(name: "formpost-urlsession").exec(arguments: CommandLine.arguments) {
                throw UsageError("--transport urlsession: \(failure)")
            }
            throw UsageError("--transport urlsession needs formpost-urlsession beside formpost (swift build --product formpost-urlsession): formpost itself does not load FoundationNetworking")
        }
        // A transport of its own even without options: the command's connections fail at
        // once where a library's would wait for connectivity (networkFrameworkWaitForConnectivity).
        let client = AsyncHTTPClientTransport(configuration: try connection.makeConfiguration())
        return (client, { try? await client.shutdown() })
    }

    /// The body and the method it implies: a form (POST), -T (PUT) or --data-binary (POST).
    private func requestBody() throws -> (RequestBody?, RequestMethod) {
        let formArguments = try formOptions.orderedArguments()
        let kinds = [!formArguments.isEmpty, uploadFile != nil, dataBinary != nil].filter { $0 }.count
        guard kinds <= 1 else { throw UsageError("use only one of -F/--form-string, -T and --data-binary") }
        if let uploadFile {
            if uploadFile == "-" { return (.bytes(try Descriptor.standardInput.readToEnd()), .put) }
            return (try RequestBody.file(path: uploadFile), .put)
        }
        if let dataBinary {
            let contentType = "application/x-www-form-urlencoded"
            if dataBinary == "@-" { return (.bytes(try Descriptor.standardInput.readToEnd(), contentType: contentType), .post) }
            if dataBinary.hasPrefix("@") { return (try RequestBody.file(path: String(dataBinary.dropFirst()), contentType: contentType), .post) }
            return (.bytes(Array(dataBinary.utf8), contentType: contentType), .post)
        }
        if formArguments.isEmpty { return (nil, .get) }
        return (try RequestBody.form(try formOptions.makeForm()), .post)
    }

    /// Writes `-w`'s format for `transfer` on standard output, if asked.
    func printWriteOut(_ transfer: WriteOut.Transfer) {
        guard let writeOut else { return }
        Descriptor.standardOutput.print(WriteOut(format: writeOut).render(transfer))
    }

    /// What curl sends besides the caller's fields: its name and `Accept: */*`.
    static let curlLikeHeaders: HTTPFields = [.userAgent: "formpost/\(StandardHeaders.packageVersion)", .accept: "*/*"]

    private func printRequestHead(_ request: FormPostRequest) {
        let url = request.url
        var lines = ["> \(request.method) \(url.path.isEmpty ? "/" : url.path)\(url.query.map { "?" + $0 } ?? "") HTTP/1.1", "> Host: \(url.host ?? "")\(url.port.map { ":\($0)" } ?? "")"]
        lines += request.headers.map { "> \($0.name.rawName): \($0.value)" }
        if let body = request.body {
            lines.append("> Content-Type: \(body.contentType)")
            lines.append(body.contentLength.map { "> Content-Length: \($0)" } ?? "> Transfer-Encoding: chunked")
        }
        Descriptor.standardError.print((lines.joined(separator: "\n") + "\n>\n"))
    }

    /// The status line and header fields as `-i` prints them (CRLF line ends, a blank line after).
    static func responseHead(_ response: UploadResponse) -> String {
        let lines = [statusLine(response)] + response.headers.map { "\($0.name.rawName): \($0.value)" }
        return lines.joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// The status line as curl prints it: `HTTP/1.1 200 OK`, and `HTTP/2 200 ` (HTTP/2 has no
    /// reason phrase; curl keeps the space before it).
    static func statusLine(_ response: UploadResponse) -> String {
        let version = response.httpVersion ?? "1.1"
        let reason = version.hasPrefix("1") ? ReasonPhrase.of(response.status) : ""
        return "HTTP/\(version) \(response.status) \(reason)"
    }

    private func printResponseHead(_ response: UploadResponse) {
        let lines = ["< " + Self.statusLine(response)] + response.headers.map { "< \($0.name.rawName): \($0.value)" }
        Descriptor.standardError.print((lines.joined(separator: "\n") + "\n<\n"))
    }

    /// Prints the `--json` summary, with `extra` keys.
    func printJSON(response: UploadResponse, sent: Int64, seconds: Double, extra: [String: JSONValue] = [:]) {
        var headers: [String: JSONValue] = [:]
        for field in response.headers { headers[field.name.canonicalName] = .string(field.value) }
        let summary: [String: JSONValue] = extra.merging([
            "status": .integer(Int64(response.status)), "bytes_sent": .integer(sent), "seconds": .number(seconds),
            "megabytes_per_second": .number(Double(sent) / max(seconds, 1e-9) / 1e6), "response_headers": .object(headers),
            "response_bytes": .integer(Int64(response.body.count)),
        ]) { $1 }
        Descriptor.standardOutput.print(JSONValue.object(summary).text + "\n")
    }
}
