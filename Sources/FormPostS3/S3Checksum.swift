import CZlib
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore

/// S3's CRC32 checksum of a part (`x-amz-checksum-crc32`), from the system's zlib.
enum S3Checksum {
    /// The CRC32 (ISO-HDLC, zlib's and S3's) of `bytes`, as S3 writes it: its four bytes,
    /// big-endian, in base64.
    static func crc32(of bytes: ByteBuffer) -> String {
        let value = bytes.withUnsafeReadableBytes { buffer -> UInt32 in
            var crc = CZlib.crc32(0, nil, 0)
            var rest = UnsafeRawBufferPointer(buffer)
            // zlib counts in `uInt`: a part of more than 4 GiB goes in pieces.
            while !rest.isEmpty {
                let count = min(rest.count, Int(UInt32.max))
                crc = CZlib.crc32(crc, rest.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(count))
                rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            }
            return UInt32(truncatingIfNeeded: crc)
        }
        return Data([UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff)]).base64EncodedString()
    }
}
