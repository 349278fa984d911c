#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Another executable of the package, installed beside the running one (as `swift build`
/// puts them), to which the running command can hand itself over.
struct SiblingExecutable {
    /// The executable's file name.
    let name: String

    /// Its path beside the running executable, if one is there and can be run.
    var path: String? {
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let own = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
        // Elsewhere `formpost` has URLSession itself and hands nothing over.
        let own = ""
        #endif
        guard let slash = own.lastIndex(of: "/") else { return nil }
        let candidate = String(own[...slash]) + name
        return access(candidate, X_OK) == 0 ? candidate : nil
    }

    /// Replaces this process with the sibling, given this process's arguments (its own
    /// name first, the rest unchanged). Returns only if it could not: nil when no sibling
    /// is there, else why running it failed (the path and the system's error).
    func exec(arguments: [String]) -> String? {
        guard let path else { return nil }
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments.dropFirst()).map { strdup($0) }
        argv.append(nil)
        execv(path, argv)
        let reason = String(cString: strerror(errno))
        for pointer in argv { free(pointer) }
        return "cannot run \(path): \(reason)"
    }
}
