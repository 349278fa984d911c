#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Finds the MIME type of a file from its name's extension.
///
/// A built-in table of common types answers first, then `/etc/mime.types` when the
/// system has it; otherwise the type is `application/octet-stream`, as curl and browsers send.
///
/// Apple platforms have no `/etc/mime.types` (macOS keeps its types in Launch Services,
/// iOS has none readable), so there the built-in table alone answers: it holds the types
/// of documents, images, audio, video, archives and fonts that uploads commonly carry, and
/// the same file gets the same type on every platform when its extension is in it.
public enum MIMEType {
    /// The type sent for content of unknown type.
    public static let octetStream = "application/octet-stream"

    /// The MIME type for `filename`, judged by its extension (case-insensitive).
    ///
    /// `MIMEType.forFilename("photo.JPG")` is `image/jpeg`; `"notes"` is `application/octet-stream`.
    public static func forFilename(_ filename: String) -> String {
        guard let dot = filename.lastIndex(of: "."), dot != filename.startIndex else { return octetStream }
        let ext = filename[filename.index(after: dot)...].lowercased()
        guard !ext.isEmpty else { return octetStream }
        return builtIn[ext] ?? system[ext] ?? octetStream
    }

    static let builtIn: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown",
        "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
        "tsv": "text/tab-separated-values", "xml": "application/xml", "js": "text/javascript",
        "mjs": "text/javascript", "json": "application/json", "yaml": "application/yaml", "yml": "application/yaml",
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip",
        "tar": "application/x-tar", "bz2": "application/x-bzip2", "xz": "application/x-xz", "7z": "application/x-7z-compressed",
        "wasm": "application/wasm", "bin": "application/octet-stream",
        "doc": "application/msword", "xls": "application/vnd.ms-excel", "ppt": "application/vnd.ms-powerpoint",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text", "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation", "epub": "application/epub+zip",
        "rtf": "application/rtf", "ics": "text/calendar", "vcf": "text/vcard", "rar": "application/vnd.rar",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "svg": "image/svg+xml", "ico": "image/vnd.microsoft.icon", "bmp": "image/bmp", "tif": "image/tiff",
        "tiff": "image/tiff", "heic": "image/heic", "heif": "image/heif", "avif": "image/avif",
        "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "flac": "audio/flac", "m4a": "audio/mp4",
        "aac": "audio/aac", "opus": "audio/ogg", "aif": "audio/aiff", "aiff": "audio/aiff", "mid": "audio/midi", "midi": "audio/midi",
        "mpeg": "video/mpeg", "mpg": "video/mpeg", "3gp": "video/3gpp", "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm",
        "avi": "video/x-msvideo", "mkv": "video/x-matroska",
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
    ]

    static let system: [String: String] = loadSystemTable(path: "/etc/mime.types")

    /// Parses a `mime.types` file: `type ext ext …` per line, `#` comments.
    static func loadSystemTable(path: String) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        var table: [String: String] = [:]
        for line in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
            if line.hasPrefix("#") { continue }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count > 1 else { continue }
            for ext in words.dropFirst() where table[ext.lowercased()] == nil {
                table[ext.lowercased()] = String(words[0])
            }
        }
        return table
    }
}
