import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart

/// `formpost encode -F … [-o FILE|-]`: writes the body without sending it, and prints the
/// request head (`Content-Type`, `Content-Length`) on standard output — or on standard
/// error when the body goes to standard output.
struct EncodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "encode", abstract: "Write an encoded form to a file or standard output.")

    @OptionGroup var formOptions: FormOptions
    @Option(name: [.customShort("o"), .customLong("output")], help: "Where to write the body (written through as curl does; an existing file is overwritten); - or nothing for standard output.")
    var output: String?

    func run() async throws {
        do {
            let destination = output ?? "-"
            if output == nil, Descriptor.standardOutput.isTerminal {
                throw UsageError("the body would go to a terminal: give -o FILE (or -o - to insist)")
            }
            let plan = try formOptions.makeForm().plan()
            let head = "Content-Type: \(plan.contentType)\n" + (plan.contentLength.map { "Content-Length: \($0)\n" } ?? "Transfer-Encoding: chunked\n")
            let descriptor = try OutputFile.open(destination)
            defer { if destination != "-" { descriptor.close() } }
            try await plan.write(toDescriptor: descriptor.number)
            (destination == "-" ? Descriptor.standardError : Descriptor.standardOutput).print(head)
        } catch {
            throw fail(error)
        }
    }
}
