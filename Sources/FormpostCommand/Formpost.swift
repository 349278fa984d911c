import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `formpost`: upload forms as `curl -F` does, encode them, receive them.
package struct Formpost: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "formpost",
        abstract: "Build, send and receive multipart/form-data.",
        discussion: """
        Without a subcommand, formpost uploads as curl does (see 'formpost upload --help'):
          formpost -F title=Holiday -F photo=@beach.jpg https://example.com/upload
          formpost -T big.iso https://example.com/put
          formpost encode -F a=1 -F f=@x.bin -o body.bin
          formpost serve --port 8080 --dir ./uploads
          formpost sign --key-file key --max-bytes 10M http://127.0.0.1:8080/upload
          formpost demo
        """,
        subcommands: [UploadCommand.self, EncodeCommand.self, ServeCommand.self, SignCommand.self, DemoCommand.self],
        defaultSubcommand: UploadCommand.self
    )

    package init() {}

    /// Runs the command; usage mistakes exit 2, as curl's do.
    package static func start() async {
        do {
            var command = try parseAsRoot(ShortOptions.split(Array(CommandLine.arguments.dropFirst())))
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                Descriptor.standardError.print((fullMessage(for: error) + "\n"))
                ExitStatus.usage.terminate()
            }
            exit(withError: error)
        }
    }
}

/// Prints `formpost: message` on standard error (unless `quiet`) and ends with the matching exit code.
func fail(_ error: any Error, quiet: Bool = false) -> ExitCode {
    if !quiet { Descriptor.standardError.print("formpost: \(error)\n") }
    return ExitCode(ExitStatus.forError(error).rawValue)
}
