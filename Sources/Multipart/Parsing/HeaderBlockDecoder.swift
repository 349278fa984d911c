/// Decodes a part's header block (the bytes before its empty line) into a ``PartHead``.
///
/// Lines end in CRLF; a line that starts with a space or tab continues the previous one
/// (obsolete folding, unfolded to one space). Names must be HTTP tokens; values are UTF-8
/// with surrounding spaces trimmed. `Content-Disposition: form-data` with a `name` is required.
enum HeaderBlockDecoder {
    static func decode(_ block: ArraySlice<UInt8>, partNumber: Int) throws -> PartHead {
        var fields: [(name: String, value: [UInt8])] = []
        var lineStart = block.startIndex
        while lineStart < block.endIndex {
            let lineEnd = MultipartParser.find([0x0D, 0x0A], in: block[lineStart...]) ?? block.endIndex
            let line = block[lineStart..<lineEnd]
            lineStart = min(lineEnd + 2, block.endIndex)
            if line.contains(0x0A) || line.contains(0x0D) || line.contains(0x00) {
                throw MultipartError.malformedBody(reason: "part \(partNumber) has a header line with a bare CR, LF or NUL")
            }
            if let first = line.first, first == 0x20 || first == 0x09 {
                guard !fields.isEmpty else {
                    throw MultipartError.malformedBody(reason: "part \(partNumber) begins its headers with a continuation line")
                }
                fields[fields.count - 1].value += [0x20] + trimmed(line)
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw MultipartError.malformedBody(reason: "part \(partNumber) has a header line without a colon")
            }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(HeaderField.isTokenByte) else {
                throw MultipartError.malformedBody(reason: "part \(partNumber) has a header with an invalid name")
            }
            fields.append((String(decoding: name, as: UTF8.self), Array(trimmed(line[(colon + 1)...]))))
        }
        let headers = fields.map { HeaderField(unchecked: $0.name, value: String(decoding: $0.value, as: UTF8.self)) }
        guard let disposition = headers.first(where: { $0.name.equalsIgnoringCase("Content-Disposition") }) else {
            throw MultipartError.malformedBody(reason: "part \(partNumber) has no Content-Disposition header")
        }
        guard let parsed = ContentDispositionValue(parsing: disposition.value), parsed.type == "form-data", let name = parsed.name else {
            throw MultipartError.malformedBody(reason: "part \(partNumber) has no \"Content-Disposition: form-data; name=…\" (it has \"\(disposition.value)\")")
        }
        let contentType = headers.first { $0.name.equalsIgnoringCase("Content-Type") }?.value
        return PartHead(headers: headers, name: name, filename: parsed.filename, contentType: contentType)
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
        return slice
    }
}
