/// `-F name=@` or `-F name=<` without a path: curl's exit 26 (nothing is read or sent).
struct MissingFileName: Error, CustomStringConvertible {
    let argument: String

    var description: String {
        "-F \(argument): no file name after \(argument.hasSuffix("<") ? "<" : "@") (give a path, or - for standard input)"
    }
}
