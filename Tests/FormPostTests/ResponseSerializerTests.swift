import Foundation
import FormPost
import FormPostFoundation
import FormPostURLSession
import Multipart
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A property list made by Python's plistlib from a JSON document.
func pythonPlist(_ json: String, format: String) async throws -> [UInt8] {
    Array(try await offPool { try Subprocess.runForBytes("python3", [Subprocess.interopScript("bodies.py"), "plist", format], input: Data(json.utf8)) })
}

/// Counts the elements an `XMLParser` reports.
final class ElementCounter: NSObject, XMLParserDelegate {
    var names: [String] = []
    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
        names.append(elementName)
    }
}

struct Listing: Decodable, Equatable {
    struct Item: Decodable, Equatable { let id: Int }
    let items: [Item]
}

@Suite("Response serializers against a real server")
struct ResponseSerializerTests {
    let client = FormPostClient()

    /// Responses the server gives for each (status, content type, body), fetched with `method`.
    func replies(_ specs: [(status: Int, type: String?, body: [UInt8])], method: RequestMethod = .get) async throws -> [UploadResponse] {
        try await TestServer().run { base in
            var responses: [UploadResponse] = []
            for spec in specs {
                var parameters: [String: FormValue] = ["status": .integer(Int64(spec.status)), "body64": .string(Data(spec.body).base64EncodedString())]
                if let type = spec.type { parameters["type"] = .string(type) }
                responses.append(try await client.request(method, base.appendingPathComponent("reply"), parameters: parameters))
            }
            return responses
        }
    }

    /// Expects `work` to fail decoding with a reason (containing `reason`, when given) and the raw body kept.
    func expectDecodingFailure(_ body: [UInt8], containing reason: String? = nil, _ work: () throws -> Void) {
        do {
            try work()
            Issue.record("no error")
        } catch UploadError.decodingFailed(let message, let kept) {
            #expect(!message.isEmpty && (reason.map(message.contains) ?? true), "\(message)")
            #expect(kept == body)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("data and string: charsets from Content-Type, UTF-8 then Latin-1 without one, clear errors otherwise")
    func dataAndString() async throws {
        let cafeLatin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]
        let utf16 = Array("naïve ✓".data(using: .utf16)!)
        let responses = try await replies([
            (200, "application/octet-stream", [0, 1, 255]), (200, "text/plain; charset=ISO-8859-1", cafeLatin1),
            (200, "text/plain; charset=\"utf-16\"", utf16), (200, "text/plain", cafeLatin1), (200, "text/plain; charset=utf-8", cafeLatin1),
            (200, "text/plain; charset=x-klingon", [0x61]), (204, nil, []),
        ])
        #expect(try responses[0].serialized(by: .data) == [UInt8]([0, 1, 255]))
        #expect(try responses[1].serialized(by: .string) == "café")
        #expect(try responses[2].serialized(by: .string) == "naïve ✓")
        #expect(try responses[3].serialized(by: .string) == "café")
        expectDecodingFailure(cafeLatin1, containing: "not valid utf-8") { _ = try responses[4].serialized(by: .string) }
        expectDecodingFailure([0x61], containing: "\"x-klingon\" is not supported") { _ = try responses[5].serialized(by: .string) }
        #expect(try responses[6].serialized(by: .string) == "" && responses[6].serialized(by: .data).isEmpty)
        #expect(try responses[2].serialized(by: StringResponseSerializer(encoding: .utf16, validation: .acceptingAnything)) == "naïve ✓")
        expectDecodingFailure(cafeLatin1, containing: "not valid") { _ = try responses[1].serialized(by: StringResponseSerializer(encoding: .utf8)) }
    }

    @Test("JSON: objects, errors that keep the body, and empty bodies only where they are meant")
    func json() async throws {
        let good = Array(#"{"a":[1,"x",null],"b":true}"#.utf8)
        let bad = Array(#"{"a": [1,"#.utf8)
        let responses = try await replies([
            (200, "application/json; charset=utf-8", good), (200, "text/json", bad), (200, "text/html", Array("<p>hi</p>".utf8)),
            (500, "application/json", Array(#"{"error":"boom"}"#.utf8)), (204, nil, []), (200, "application/json", []),
        ])
        let object = try #require(try responses[0].serialized(by: .json) as? [String: Any])
        #expect(object["b"] as? Bool == true && (object["a"] as? [Any])?.count == 3)
        expectDecodingFailure(bad) { _ = try responses[1].serialized(by: .json) }
        do {
            _ = try responses[2].serialized(by: .json)
            Issue.record("text/html accepted")
        } catch UploadError.unacceptableContentType(let type, let acceptable, let status, let prefix) {
            #expect(type == "text/html" && status == 200 && prefix == "<p>hi</p>" && acceptable.contains("application/json"))
        }
        do {
            _ = try responses[3].serialized(by: .json)
            Issue.record("500 accepted")
        } catch UploadError.unacceptableStatus(let status, let type, let prefix) {
            #expect(status == 500 && type == "application/json" && prefix == #"{"error":"boom"}"#)
        }
        #expect(try responses[4].serialized(by: .json) is NSNull)
        let emptyError = #expect(throws: UploadError.self) { try responses[5].serialized(by: .json) }
        #expect(emptyError.map(String.init(describing:)) == "The server answered 200 with an empty body where one was needed.")
    }

    @Test("Decodable: values, the failing path with the raw body kept, Empty and optionals for 204")
    func decodable() async throws {
        let good = Array(#"{"items":[{"id":1},{"id":2}]}"#.utf8)
        let wrongType = Array(#"{"items":[{"id":1},{"id":"two"}]}"#.utf8)
        let missing = Array(#"{"items":[{"id":1},{}]}"#.utf8)
        let responses = try await replies([
            (200, "application/json", good), (200, "application/json", wrongType), (200, "application/json", missing), (204, nil, []),
        ])
        #expect(try responses[0].serialized(by: .decodable(Listing.self)) == Listing(items: [.init(id: 1), .init(id: 2)]))
        expectDecodingFailure(wrongType, containing: "$.items[1].id") { _ = try responses[1].serialized(by: .decodable(Listing.self)) }
        expectDecodingFailure(missing, containing: #"$.items[1]: "#) { _ = try responses[2].serialized(by: .decodable(Listing.self)) }
        expectDecodingFailure(missing, containing: #"missing key "id""#) { _ = try responses[2].serialized(by: .decodable(Listing.self)) }
        #expect(try responses[3].serialized(by: .decodable(Empty.self)) == Empty())
        #expect(try responses[3].serialized(by: .decodable(Listing?.self)) == nil)
        #expect(throws: UploadError.self) { try responses[3].serialized(by: .decodable(Listing.self)) }
    }

    @Test("property lists from Python's plistlib, XML and binary, as objects and as Decodable values", arguments: ["xml", "binary"])
    func propertyList(format: String) async throws {
        let plist = try await pythonPlist(#"{"items":[{"id":1},{"id":2}],"name":"Zoë"}"#, format: format)
        let responses = try await replies([(200, "application/x-plist", plist), (200, "application/x-plist", Array("<plist><dict><key>a</key>".utf8))])
        let object = try #require(try responses[0].serialized(by: .propertyList) as? [String: Any])
        #expect(object["name"] as? String == "Zoë" && (object["items"] as? [Any])?.count == 2)
        #expect(try responses[0].serialized(by: .decodable(Listing.self, decoder: PropertyListDecoder())) == Listing(items: [.init(id: 1), .init(id: 2)]))
        expectDecodingFailure(Array("<plist><dict><key>a</key>".utf8)) { _ = try responses[1].serialized(by: .propertyList) }
    }

    @Test("XML: documents, malformed ones named by line and column, and an unparsed XMLParser")
    func xml() async throws {
        let good = Array(#"<?xml version="1.0" encoding="UTF-8"?><root><item id="1">a</item><item id="2">ü</item></root>"#.utf8)
        let broken = Array("<root>\n<item>a</root>".utf8)
        let responses = try await replies([(200, "text/xml; charset=utf-8", good), (200, "application/xml", broken), (205, nil, [])])
        // XMLDocument exists on macOS and Linux only.
        #if os(macOS) || os(Linux)
        let document = try responses[0].serialized(by: .xmlDocument)
        #expect(document.rootElement()?.name == "root" && document.rootElement()?.elements(forName: "item").count == 2)
        #expect(document.rootElement()?.elements(forName: "item").last?.stringValue == "ü")
        expectDecodingFailure(broken, containing: "malformed XML at line 2") { _ = try responses[1].serialized(by: .xmlDocument) }
        #expect(try responses[2].serialized(by: .xmlDocument).rootElement() == nil)
        #endif
        let parser = try responses[0].serialized(by: .xmlParser)
        let counter = ElementCounter()
        parser.delegate = counter
        #expect(parser.parse() && counter.names == ["root", "item", "item"])
    }

    // XMLDocument exists on macOS and Linux only.
    #if os(macOS) || os(Linux)
    @Test("the compound serializer picks by content type and refuses types none of its serializers take")
    func compound() async throws {
        let compound = CompoundResponseSerializer([JSONResponseSerializer(), PropertyListResponseSerializer(), XMLDocumentResponseSerializer()])
        let responses = try await replies([
            (200, "application/json", Array(#"[1,2]"#.utf8)), (200, "text/xml", Array("<a/>".utf8)),
            (200, "text/plain", Array("hello".utf8)), (204, nil, []),
        ])
        #expect((try responses[0].serialized(by: compound) as? [Any])?.count == 2)
        #expect((try responses[1].serialized(by: compound) as? XMLDocument)?.rootElement()?.name == "a")
        do {
            _ = try responses[2].serialized(by: compound)
            Issue.record("text/plain accepted")
        } catch UploadError.unacceptableContentType(let type, let acceptable, _, _) {
            #expect(type == "text/plain" && acceptable == ["application/json", "application/x-plist", "application/xml", "text/javascript", "text/json", "text/xml"])
        }
        #expect(try responses[3].serialized(by: compound) is NSNull)
    }
    #endif

    @Test("validation is shared: custom statuses and wildcard content types")
    func validation() async throws {
        let responses = try await replies([(404, "application/problem+json", Array(#"{"title":"gone"}"#.utf8)), (200, "image/png", [0x89])])
        let lenient = JSONResponseSerializer(validation: ResponseValidation(statusCodes: [200, 404], contentTypes: ["application/*"]))
        #expect((try responses[0].serialized(by: lenient) as? [String: Any])?["title"] as? String == "gone")
        #expect(throws: UploadError.self) { try responses[0].validate() }
        #expect(try responses[1].validate(contentTypes: ["image/*"]).status == 200)
        #expect(throws: UploadError.self) { try responses[1].validate(contentTypes: ["text/*"]) }
        #expect(try responses[1].serialized(by: DataResponseSerializer(validation: ResponseValidation(contentTypes: ["*/*"]))) == [UInt8]([0x89]))
    }

    @Test("Windows-1252 without ICU reads every byte as Foundation with ICU does, and the bytes it leaves undefined as C1 controls")
    func windows1252WithoutICU() throws {
        for byte in UInt8.min...UInt8.max {
            let ours = Windows1252.decode([byte])
            if [0x81, 0x8D, 0x8F, 0x90, 0x9D].contains(byte) {
                #expect(ours.unicodeScalars.map(\.value) == [UInt32(byte)])
            } else {
                #expect(ours == String(data: Data([byte]), encoding: .windowsCP1252), "byte \(byte)")
            }
        }
        #expect(Windows1252.decode([0x63, 0x61, 0x66, 0xE9, 0x20, 0x80, 0x93, 0x94]) == "café €“”")
    }
}
