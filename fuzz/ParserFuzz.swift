// libFuzzer entry point for MultipartParser: the first input byte picks the chunk size,
// the rest is the body (boundary "B"). Any crash, hang, byte held beyond the parser's
// bound, or disagreement between appended chunks and in-place parsing is a finding.

@_cdecl("LLVMFuzzerTestOneInput")
public func parserFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let chunkSize = Int(input[0]) + 1
    let body = input.dropFirst()
    let limits = MultipartParserLimits(maxHeaderBytes: 1024, maxParts: 50, maxPartBytes: 1 << 16, maxTotalBytes: 1 << 20)
    guard var parser = try? MultipartParser(contentType: "multipart/form-data; boundary=B", limits: limits) else { return 0 }
    var offset = body.startIndex
    var emitted = 0
    do {
        while offset < body.endIndex {
            let end = min(offset + chunkSize, body.endIndex)
            parser.append(Array(body[offset..<end]))
            offset = end
            while let event = try parser.next() {
                if case .body(let bytes) = event { emitted += bytes.count }
            }
            // What the parser holds besides its input is bounded by a constant of its limits.
            if parser.heldBytes > parser.heldBytesBound {
                fatalError("the parser holds \(parser.heldBytes) bytes, over its bound of \(parser.heldBytesBound)")
            }
        }
        try parser.finish()
    } catch {
        return 0
    }
    // Body bytes can never exceed what was fed.
    if emitted > body.count { fatalError("emitted \(emitted) body bytes from \(body.count) input bytes") }
    // Parsed in place (views of the input, read under the address sanitizer), the same
    // chunks give the same content.
    guard var inPlace = try? MultipartParser(contentType: "multipart/form-data; boundary=B", limits: limits) else { return 0 }
    var emittedInPlace = 0
    offset = body.startIndex
    do {
        while offset < body.endIndex {
            let end = min(offset + chunkSize, body.endIndex)
            try body[offset..<end].withUnsafeBytes { chunk in
                try inPlace.parse(chunk) { event in
                    if case .body(let bytes) = event { emittedInPlace += bytes.count }
                }
            }
            offset = end
        }
        try inPlace.finish()
    } catch {
        fatalError("a body parsed whole from chunks fails in place: \(error)")
    }
    if emittedInPlace != emitted { fatalError("in place \(emittedInPlace) content bytes, from chunks \(emitted)") }
    return 0
}
