#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart

/// Builds a form from `-F` and `--form-string` arguments, in the order given on the command line.
enum FormBuilder {
    /// The form arguments in command-line order: `-F x`, `-Fx`, `--form x`, `--form=x`, `--form-string x`.
    static func orderedArguments(_ arguments: [String]) throws -> [FormArgument] {
        var result: [FormArgument] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            func nextValue() throws -> String {
                index += 1
                guard index < arguments.count else { throw UsageError("\(argument) needs a value") }
                return arguments[index]
            }
            if argument == "--" { break }
            if argument == "-F" || argument == "--form" {
                result.append(try FormArgument.parse(try nextValue()))
            } else if argument == "--form-string" {
                result.append(try FormArgument.parse(try nextValue(), literal: true))
            } else if argument.hasPrefix("--form=") {
                result.append(try FormArgument.parse(String(argument.dropFirst(7))))
            } else if argument.hasPrefix("--form-string=") {
                result.append(try FormArgument.parse(String(argument.dropFirst(14)), literal: true))
            } else if argument.hasPrefix("-F"), argument.count > 2 {
                result.append(try FormArgument.parse(String(argument.dropFirst(2))))
            }
            index += 1
        }
        return result
    }

    /// The form the arguments describe. Files are checked, not read; `-` reads standard input.
    static func form(from arguments: [FormArgument], boundary: String?) throws -> MultipartForm {
        var form = MultipartForm(boundary: try boundary.map { try Boundary($0) } ?? .random())
        for argument in arguments {
            let headers = try argument.headers.map(Self.header)
            switch argument.content {
            case .text(let value):
                form.append(name: argument.name, bytes: Array(value.utf8), filename: argument.filename, mimeType: argument.type, headers: headers)
            case .file(let path) where path == "-":
                // As curl: filename "-", and a Content-Type only when ;type= gives one.
                let input = Data(try Descriptor.standardInput.readToEnd())
                var lines = [try HeaderField(name: "Content-Disposition", value: ContentDisposition.formData(name: argument.name, filename: argument.filename ?? "-"))]
                if let type = argument.type { lines.append(try HeaderField(name: "Content-Type", value: type)) }
                form.append(headers: lines + headers, body: .data(input))
            case .file(let path):
                try form.append(name: argument.name, fileAt: path, filename: argument.filename, mimeType: argument.type, headers: headers)
            case .fileContent(let path):
                let content = try path == "-" ? Data(Descriptor.standardInput.readToEnd()) : readWhole(path)
                form.append(name: argument.name, data: content, filename: argument.filename, mimeType: argument.type, headers: headers)
            }
        }
        return form
    }

    /// Reads a file for `name=<path`, with the same checks and errors as a file part.
    static func readWhole(_ path: String) throws -> Data {
        var probe = MultipartForm()
        try probe.append(name: "probe", fileAt: path)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MultipartError.fileNotReadable(path: path, errno: EACCES)
        }
        return data
    }

    static func header(_ line: String) throws -> HeaderField {
        guard let colon = line.firstIndex(of: ":") else { throw UsageError("header \"\(line)\" needs the form \"Name: value\"") }
        return try HeaderField(name: String(line[..<colon]).trimmingSpaces, value: String(line[line.index(after: colon)...]).trimmingSpaces)
    }
}
