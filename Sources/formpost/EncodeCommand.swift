import ArgumentParser
import Foundation
import Multipart

/// `formpost encode -F … -o FILE|-`: writes the body without sending it, and prints the
/// request head (`Content-Type`, `Content-Length`) on standard output — or on standard
/// error when the body goes to standard output.
struct EncodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "encode", abstract: "Write an encoded form to a file or standard output.")

    @OptionGroup var formOptions: FormOptions
    @Option(name: [.customShort("o"), .customLong("output")], help: "Where to write the body; - for standard output.")
    var output: String

    func run() async throws {
        do {
            let plan = try formOptions.makeForm().plan()
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
