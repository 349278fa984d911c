import Foundation
import Testing
@testable import Multipart

@Suite("Parameters and MIME types")
struct ParametersTests {
    @Test("nested values flatten the AFNetworking way")
    func flattening() {
        let value: FormValue = [
            "user": ["name": "Ann", "age": 7, "admin": true],
            "tags": ["a", "b"],
            "empty": nil,
            "raw": .bytes([0, 255]),
            "list": [["k": 1], ["k": 2.5]],
        ]
        let fields = value.flattened().map { ($0.name, $0.value) }
        let expected: [(String, [UInt8])] = [
            ("empty", []),
            ("list[][k]", Array("1".utf8)),
            ("list[][k]", Array("2.5".utf8)),
            ("raw", [0, 255]),
            ("tags[]", Array("a".utf8)),
            ("tags[]", Array("b".utf8)),
            ("user[admin]", Array("true".utf8)),
            ("user[age]", Array("7".utf8)),
            ("user[name]", Array("Ann".utf8)),
        ]
        #expect(fields.map(\.0) == expected.map(\.0))
        #expect(fields.map(\.1) == expected.map(\.1))
    }

    @Test("parameters become text fields in flattened order")
    func appendParameters() async throws {
        var form = MultipartForm(boundary: try Boundary("B"))
        form.append(parameters: ["b": ["x": "1"], "a": "2"])
        #expect(text(try await form.plan().encodedData()) == """
            --B\r
            Content-Disposition: form-data; name="a"\r
            \r
            2\r
            --B\r
            Content-Disposition: form-data; name="b[x]"\r
            \r
            1\r
            --B--\r

            """)
    }

    @Test("Encodable values flatten the same way, with Data kept as bytes")
    func encodable() throws {
        struct Profile: Encodable {
            struct Address: Encodable { let city: String }
            let name: String
            let scores: [Int]
            let address: Address
            let avatar: Data
            let nickname: String?
            let ratio: Double
        }
        let value = try FormValueEncoder().encode(Profile(name: "Zoë", scores: [3, 4], address: .init(city: "Oslo"), avatar: Data([1, 2]), nickname: nil, ratio: 0.5))
        let fields = value.flattened()
        #expect(fields.map(\.name) == ["address[city]", "avatar", "name", "ratio", "scores[]", "scores[]"])
        #expect(fields.map { text($0.value) } == ["Oslo", "\u{1}\u{2}", "Zoë", "0.5", "3", "4"])
        var form = MultipartForm()
        try form.append(encodable: Profile(name: "a", scores: [], address: .init(city: "b"), avatar: Data(), nickname: "n", ratio: 1))
        #expect(form.parts.count == 5, "an empty [Int] writes no field (it must not be taken for bytes)")
        #expect(throws: EncodingError.self) { try form.append(encodable: [1, 2]) }
    }

    @Test("MIME types come from the extension", arguments: [
        ("a.txt", "text/plain"), ("photo.JPG", "image/jpeg"), ("x.tar.gz", "application/gzip"), ("noext", "application/octet-stream"),
        (".hidden", "application/octet-stream"), ("trailing.", "application/octet-stream"), ("a.json", "application/json"),
        ("a.unknownext", "application/octet-stream"),
    ])
    func mimeTypes(filename: String, type: String) {
        #expect(MIMEType.forFilename(filename) == type)
    }

    @Test("the system table is parsed from mime.types syntax")
    func systemTable() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("mime.types", "# comment\napplication/x-foo\tfoo  fo2\ntext/x-bar bar\nlonely/type\n")
        #expect(MIMEType.loadSystemTable(path: path) == ["foo": "application/x-foo", "fo2": "application/x-foo", "bar": "text/x-bar"])
    }
}
