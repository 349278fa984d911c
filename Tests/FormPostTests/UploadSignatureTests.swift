import Foundation
import FormPostServer
import Testing

/// ``UploadURLSigner`` on its own: what it signs, and every way a signed URL is refused.
@Suite("Signed upload URLs: sign and verify")
struct UploadSignatureTests {
    let key = Array(repeating: UInt8(0x5A), count: 32)
    let expires: Int64 = 1_767_225_600

    var signer: UploadURLSigner {
        get throws { try UploadURLSigner(key: key) }
    }

    /// `target` with the query parameter `name` set to `value`.
    func replacing(_ name: String, with value: String, in target: String) -> String {
        let parts = target.split(separator: "?", maxSplits: 1)
        let query = parts[1].split(separator: "&").map { $0.hasPrefix(name + "=") ? "\(name)=\(value)" : String($0) }
        return parts[0] + "?" + query.joined(separator: "&")
    }

    @Test("a signed target verifies for its method and path, and gives its expiry and limit; the string signed is the documented one")
    func roundTrip() throws {
        let target = try signer.signedTarget(method: "POST", path: "/upload", expires: expires, maxBytes: 10 << 20)
        #expect(target.hasPrefix("/upload?X-FormPost-Expires=1767225600&X-FormPost-Max-Bytes=10485760&X-FormPost-Signature="))
        #expect(try signer.verify(method: "POST", target: target, now: expires - 10) == SignedUploadGrant(expires: expires, maxBytes: 10 << 20))
        #expect(UploadURLSigner.stringToSign(method: "post", path: "/upload", expires: expires, maxBytes: 10 << 20)
            == "FORMPOST-HMAC-SHA256\nPOST\n/upload\n1767225600\n10485760")
        #expect(UploadURLSigner.stringToSign(method: "PUT", path: "/a%20b", expires: 7, maxBytes: nil) == "FORMPOST-HMAC-SHA256\nPUT\n/a%20b\n7\n")
        let unlimited = try signer.signedTarget(method: "POST", path: "/files", expires: expires)
        #expect(try signer.verify(method: "POST", target: unlimited, now: expires) == SignedUploadGrant(expires: expires, maxBytes: nil))
    }

    @Test("the signature is HMAC-SHA256 of the string to sign, as Python's hmac computes it")
    func signatureIsHMACSHA256() throws {
        let target = try signer.signedTarget(method: "POST", path: "/upload", expires: expires, maxBytes: 1024)
        let signature = String(target.split(separator: "=").last ?? "")
        let script = "import hmac, hashlib; print(hmac.new(b'\\x5a' * 32, b'FORMPOST-HMAC-SHA256\\nPOST\\n/upload\\n1767225600\\n1024', hashlib.sha256).hexdigest())"
        let python = try ChildProcess("python3", ["-c", script]).finish()
        #expect(String(decoding: python.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == signature)
    }

    @Test("a query the URL already has is kept; the path alone is signed and other parameters are ignored")
    func existingQuery() throws {
        let target = try signer.signedTarget(method: "POST", path: "/upload?album=7", expires: expires)
        #expect(target.hasPrefix("/upload?album=7&X-FormPost-Expires="))
        #expect(try signer.verify(method: "POST", target: target + "&utm=x", now: expires).expires == expires)
    }

    @Test("expired: refused past the expiry plus the clock skew allowed, taken up to it")
    func expiry() throws {
        let target = try signer.signedTarget(method: "POST", path: "/upload", expires: expires)
        #expect(try signer.verify(method: "POST", target: target, now: expires + 60).expires == expires)
        #expect(try signer.verify(method: "POST", target: target, now: expires + 5, clockSkew: 5).expires == expires)
        #expect(throws: UploadSignatureRefusal.expired(expires: expires, now: expires + 61)) {
            try signer.verify(method: "POST", target: target, now: expires + 61)
        }
        #expect(throws: UploadSignatureRefusal.expired(expires: expires, now: expires + 1)) {
            try signer.verify(method: "POST", target: target, now: expires + 1, clockSkew: 0)
        }
    }

    @Test("tampered: another signature, a changed or removed limit, a changed expiry, another key — each refused as a mismatch")
    func tampered() throws {
        let target = try signer.signedTarget(method: "POST", path: "/upload", expires: expires, maxBytes: 1024)
        let signature = String(target.split(separator: "=").last ?? "")
        let flipped = String(signature.dropLast()) + (signature.hasSuffix("0") ? "1" : "0")
        let otherKey = try UploadURLSigner(key: Array(repeating: 0x5B, count: 32))
        let forged = [
            replacing("X-FormPost-Signature", with: flipped, in: target),
            replacing("X-FormPost-Max-Bytes", with: "1025", in: target),
            target.replacingOccurrences(of: "&X-FormPost-Max-Bytes=1024", with: ""),
            replacing("X-FormPost-Expires", with: String(expires + 3600), in: target),
            otherKey.signedTarget(method: "POST", path: "/upload", expires: expires, maxBytes: 1024),
        ]
        for target in forged {
            #expect(throws: UploadSignatureRefusal.mismatch, "\(target)") { try signer.verify(method: "POST", target: target, now: expires) }
        }
    }

    @Test("replayed to another path or with another method: refused as a mismatch")
    func anotherPathOrMethod() throws {
        let target = try signer.signedTarget(method: "POST", path: "/upload", expires: expires)
        let query = String(target.drop { $0 != "?" })
        for path in ["/other", "/upload/", "/UPLOAD", "/files"] {
            #expect(throws: UploadSignatureRefusal.mismatch, "\(path)") { try signer.verify(method: "POST", target: path + query, now: expires) }
        }
        #expect(throws: UploadSignatureRefusal.mismatch) { try signer.verify(method: "PUT", target: target, now: expires) }
    }

    @Test("missing or malformed parameters are refused saying which")
    func missingOrMalformed() throws {
        let target = try signer.signedTarget(method: "POST", path: "/upload", expires: expires, maxBytes: 5)
        #expect(throws: UploadSignatureRefusal.missing) { try signer.verify(method: "POST", target: "/upload", now: expires) }
        #expect(throws: UploadSignatureRefusal.missing) { try signer.verify(method: "POST", target: "/upload?X-FormPost-Expires=1", now: expires) }
        let cases: [(String, String)] = [
            (replacing("X-FormPost-Signature", with: "abc", in: target), "X-FormPost-Signature is not 64 hex digits"),
            (replacing("X-FormPost-Expires", with: "-1", in: target), "X-FormPost-Expires is not a Unix time in seconds"),
            (replacing("X-FormPost-Max-Bytes", with: "1e3", in: target), "X-FormPost-Max-Bytes is not a number of bytes"),
            (target + "&X-FormPost-Max-Bytes=5", "X-FormPost-Max-Bytes is given more than once"),
            (target.replacingOccurrences(of: "X-FormPost-Expires=\(expires)&", with: ""), "X-FormPost-Expires is missing"),
        ]
        for (target, detail) in cases {
            #expect(throws: UploadSignatureRefusal.malformed(detail), "\(target)") { try signer.verify(method: "POST", target: target, now: expires) }
        }
    }

    @Test("a key shorter than 32 bytes is refused, from a file too, saying so; a key file's bytes are the key")
    func keyLength() throws {
        #expect(throws: SigningKeyError.tooShort(length: 31, path: nil)) { try UploadURLSigner(key: Array(repeating: 1, count: 31)) }
        let directory = try SampleDirectory()
        let short = directory.path + "/short"
        try Data(repeating: 1, count: 16).write(to: URL(fileURLWithPath: short))
        #expect(throws: SigningKeyError.tooShort(length: 16, path: short)) { try UploadURLSigner(keyFile: short) }
        #expect(throws: SigningKeyError.unreadable(path: directory.path + "/none")) { try UploadURLSigner(keyFile: directory.path + "/none") }
        let file = directory.path + "/key"
        try Data(key).write(to: URL(fileURLWithPath: file))
        let fromFile = try UploadURLSigner(keyFile: file)
        #expect(fromFile.signedTarget(method: "POST", path: "/u", expires: 1) == (try signer.signedTarget(method: "POST", path: "/u", expires: 1)))
        #expect(SigningKeyError.tooShort(length: 16, path: short).description.contains("at least 32"))
    }
}
