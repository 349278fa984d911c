import Foundation

/// `formpost-bench sink PORT`: a minimal HTTP sink that counts request body bytes.
///
/// A thread per connection (clients keep connections alive), blocking sockets and
/// 1 MiB reads: it answers
/// `100 Continue` when asked, reads `Content-Length` bytes (or a chunked body), and
/// replies `200` with the count. It keeps connections alive until the client closes.
enum ByteSink {
    static func run(port: UInt16) -> Never {
        // Started by a thread that blocks signals, the sink would inherit the mask and
        // outlive the benchmark's terminate().
        var termination = sigset_t()
        sigemptyset(&termination)
        sigaddset(&termination, SIGTERM)
        sigaddset(&termination, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &termination, nil)
        let listener = socket(AF_INET, streamSocket, 0)
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(listener, 16) == 0 else {
            FileHandle.standardError.write(Data("sink: cannot listen on \(port)\n".utf8))
            exit(1)
        }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 { continue }
            Thread.detachNewThread {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
                serve(connection, buffer: buffer)
                buffer.deallocate()
                close(connection)
            }
        }
    }

    private static func serve(_ connection: Int32, buffer: UnsafeMutableRawBufferPointer) {
        var pending = [UInt8]()
        while true {
            // Read the head.
            var headEnd: Int?
            while headEnd == nil {
                if let found = find(Array("\r\n\r\n".utf8), in: pending) { headEnd = found; break }
                let count = read(connection, buffer.baseAddress, buffer.count)
                if count <= 0 { return }
                pending += UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            }
            let head = String(decoding: pending[0..<headEnd!], as: UTF8.self).lowercased()
            pending.removeFirst(headEnd! + 4)
            let lines = head.split(separator: "\r\n")
            let length = lines.first { $0.hasPrefix("content-length:") }.flatMap { Int64($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) }
            if lines.contains(where: { $0.hasPrefix("expect:") && $0.contains("100-continue") }) {
                writeAll(connection, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
            }
            var received: Int64 = 0
            if let length {
                received = Int64(min(pending.count, Int(length)))
                pending.removeFirst(Int(received))
                while received < length {
                    let count = read(connection, buffer.baseAddress, Int(min(Int64(buffer.count), length - received)))
                    if count <= 0 { return }
                    received += Int64(count)
                }
            } else if lines.contains(where: { $0.hasPrefix("transfer-encoding:") && $0.contains("chunked") }) {
                guard let total = readChunked(connection, pending: &pending, buffer: buffer) else { return }
                received = total
            }
            let body = "\(received)"
            writeAll(connection, Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
        }
    }

    /// Reads a chunked body; returns the content byte count, or nil if the peer closed.
    private static func readChunked(_ connection: Int32, pending: inout [UInt8], buffer: UnsafeMutableRawBufferPointer) -> Int64? {
        var total: Int64 = 0
        func fill() -> Bool {
            let count = read(connection, buffer.baseAddress, buffer.count)
            if count <= 0 { return false }
            pending += UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            return true
        }
        while true {
            var lineEnd = find([13, 10], in: pending)
            while lineEnd == nil {
                guard fill() else { return nil }
                lineEnd = find([13, 10], in: pending)
            }
            let sizeText = String(decoding: pending[0..<lineEnd!], as: UTF8.self).split(separator: ";").first ?? ""
            let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) ?? 0
            pending.removeFirst(lineEnd! + 2)
            while pending.count < size + 2 {
                guard fill() else { return nil }
            }
            pending.removeFirst(size + 2)
            total += Int64(size)
            if size == 0 { return total }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] && Array(haystack[index..<(index + needle.count)]) == needle {
            return index
        }
        return nil
    }

    private static func writeAll(_ connection: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let count = write(connection, raw.baseAddress! + done, raw.count - done)
                if count <= 0 { return }
                done += count
            }
        }
    }
}
