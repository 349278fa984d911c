#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Multipart

/// A file descriptor the command reads or writes whole: standard input, output and error,
/// or a file it opened (Foundation's `FileHandle` without Foundation, and with errors thrown
/// rather than raised).
struct Descriptor {
    /// A failed read or write, with `errno`'s text.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The descriptor's number.
    let number: Int32

    /// Standard input.
    static let standardInput = Descriptor(number: 0)
    /// Standard output.
    static let standardOutput = Descriptor(number: 1)
    /// Standard error.
    static let standardError = Descriptor(number: 2)

    /// Opens `path` with `flags` (`O_CLOEXEC` added), creating it with mode 0666 less the umask.
    static func open(_ path: String, flags: Int32) throws -> Descriptor {
        #if canImport(Darwin)
        let number = Darwin.open(path, flags | O_CLOEXEC, 0o666)
        #elseif canImport(Glibc)
        let number = Glibc.open(path, flags | O_CLOEXEC, 0o666)
        #elseif canImport(Musl)
        let number = Musl.open(path, flags | O_CLOEXEC, 0o666)
        #endif
        guard number >= 0 else { throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        return Descriptor(number: number)
    }

    /// Whether it is a terminal.
    var isTerminal: Bool { isatty(number) == 1 }

    /// Writes all of `bytes`, through short writes and interruptions.
    func write(_ bytes: [UInt8]) throws {
        guard bytes.withUnsafeBytes({ SystemFile(descriptor: number).writeAll($0) }) else {
            throw Failure(description: String(cString: strerror(errno)))
        }
    }

    /// Writes `text` as UTF-8, as a message: a failure to write it is not reported (there is
    /// nowhere left to report it).
    func print(_ text: String) {
        try? write(Array(text.utf8))
    }

    /// Up to `count` bytes; empty at the end.
    func read(upTo count: Int) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            while true {
                #if canImport(Darwin)
                let read = Darwin.read(number, buffer.baseAddress!, count)
                #elseif canImport(Glibc)
                let read = Glibc.read(number, buffer.baseAddress!, count)
                #elseif canImport(Musl)
                let read = Musl.read(number, buffer.baseAddress!, count)
                #endif
                if read < 0, errno == EINTR { continue }
                guard read >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
                initialized = read
                return
            }
        }
    }

    /// Everything to the end.
    func readToEnd() throws -> [UInt8] {
        var all: [UInt8] = []
        while true {
            let chunk = try read(upTo: 1 << 16)
            if chunk.isEmpty { return all }
            all += chunk
        }
    }

    /// Closes it.
    func close() {
        SystemFile(descriptor: number).close()
    }
}
