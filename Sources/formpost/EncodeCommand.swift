import ArgumentParser
import Foundation
import Multipart

/// `formpost encode -F … -o FILE|-`: writes the body without sending it, and prints the
/// request head (`Content-Type`, `Content-Length`) on standard output — or on standard
/// error when the body goes to standard output.
struct EncodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "encode", abstract: "Write an encoded form to a file or standard output.")

    @Option(name: [.customShort("F", allowingJoined: true), .customLong("form")], help: "A form part in curl's syntax.")
    var form: [String] = []
    @Option(name: .customLong("form-string"), help: "A text field whose value is taken literally.")
    var formString: [String] = []
    @Option(name: .customLong("boundary"), help: "Use this boundary instead of a random one.")
    var boundary: String?
    @Option(name: [.customShort("o"), .customLong("output")], help: "Where to write the body; - for standard output.")
    var output: String

    func run() async throws {
        do {
            let arguments = try FormBuilder.orderedArguments(Array(CommandLine.arguments.dropFirst()))
            let plan = try FormBuilder.form(from: arguments, boundary: boundary).plan()
            let head = "Content-Type: \(plan.contentType)\n" + (plan.contentLength.map { "Content-Length: \($0)\n" } ?? "Transfer-Encoding: chunked\n")
            if output == "-" {
                let reader = plan.makeChunkReader()
                while let chunk = try await reader.next() { FileHandle.standardOutput.write(Data(chunk)) }
                FileHandle.standardError.write(Data(head.utf8))
            } else {
                try await plan.write(toFile: output)
                FileHandle.standardOutput.write(Data(head.utf8))
            }
        } catch {
            throw fail(error)
        }
    }
}
