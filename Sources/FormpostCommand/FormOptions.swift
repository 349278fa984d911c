import ArgumentParser
import Multipart

/// The form options shared by uploads and `encode`: `-F`, `--form-string`, `--boundary`.
struct FormOptions: ParsableArguments {
    @Option(name: [.customShort("F", allowingJoined: true), .customLong("form")], help: "A form part in curl's syntax: name=value, name=@file, name=<file, with ;type= ;filename= ;headers=.")
    var form: [String] = []
    @Option(name: .customLong("form-string"), help: "A text field whose value is taken literally.")
    var formString: [String] = []
    @Option(name: .customLong("boundary"), help: "Use this boundary instead of a random one.")
    var boundary: String?

    /// The form arguments in command-line order (ArgumentParser keeps `-F` and
    /// `--form-string` apart, so the order is read from the command line itself).
    func orderedArguments() throws -> [FormArgument] {
        try FormBuilder.orderedArguments(Array(CommandLine.arguments.dropFirst()))
    }

    /// The form the options describe.
    func makeForm() throws -> MultipartForm {
        try FormBuilder.form(from: try orderedArguments(), boundary: boundary)
    }
}
