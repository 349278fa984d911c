import Foundation
import FormPost
import FormPostFoundation
import FormPostURLSession
import Multipart
import Testing

/// Decodes a body with Python's own parsers (Tests/Interop/bodies.py) and returns canonical JSON.
func pythonDecode(_ kind: String, _ bytes: [UInt8]) async throws -> String {
    try await offPool { try Subprocess.run("python3", [Subprocess.interopScript("bodies.py"), "decode", kind], input: Data(bytes)) }
}

/// Parameters with nesting, arrays, a set, unicode, reserved characters, a number, a boolean and an empty value.
let sampleParameters: [String: FormValue] = [
    "name": "Zoë & Åsa",
    "query": "a=b&c?d/e#f+g h%;[x]",
    "user": ["age": 7, "tags": ["x", "y z"], "address": ["city": "Köln"]],
    "flags": .set(["b", "a", "c"]),
    "empty": "",
    "ratio": 1.5,
    "ok": true,
    "emoji": "🎉",
]

/// `sampleParameters` as Python's `parse_qsl` reads them back, in order.
let samplePairs = #"[["emoji","🎉"],["empty",""],["flags","a"],["flags","b"],["flags","c"],["name","Zoë & Åsa"],["ok","true"],"#
    + #"["query","a=b&c?d/e#f+g h%;[x]"],["ratio","1.5"],["user[address][city]","Köln"],["user[age]","7"],["user[tags][]","x"],["user[tags][]","y z"]]"#

/// `sampleParameters` as a canonical JSON document.
let sampleDocument = #"{"emoji":"🎉","empty":"","flags":["a","b","c"],"name":"Zoë & Åsa","ok":true,"query":"a=b&c?d/e#f+g h%;[x]","ratio":1.5,"#
    + #""user":{"address":{"city":"Köln"},"age":7,"tags":["x","y z"]}}"#

struct NewUser: Codable, Equatable {
    struct Address: Codable, Equatable { let city: String }
    let name: String
    let age: Int
    let tags: [String]
    let address: Address
}

let sampleUser = NewUser(name: "Ann & Bob", age: 42, tags: ["a/b", "ü"], address: .init(city: "São Paulo"))

@Suite("Request serialization against a real server")
struct RequestSerializerTests {
    let client = FormPostClient()

    @Test("urlencoded text is exact: sorted keys, brackets, RFC 3986 escaping, / and ? left")
    func urlEncodedBytes() {
        let text = URLEncodedForm.encode(["s": "x y/?&=+", "a": ["b": 1, "a": nil], "c": [2, 3], "set": .set([3, 1])])
        #expect(text == "a%5Ba%5D=&a%5Bb%5D=1&c%5B%5D=2&c%5B%5D=3&s=x%20y/?%26%3D%2B&set=1&set=3")
        #expect(URLEncodedForm.escape(Array("ü~-._".utf8)) == "%C3%BC~-._")
    }

    @Test("the bytes the Uploading article shows for parameters are the bytes sent")
    func uploadingArticleBytes() throws {
        let parameters: [String: FormValue] = ["q": "swift", "tags": ["a b", "c&d"], "user": ["name": "Zoë"]]
        let serializer = RequestSerializer()
        let search = try serializer.request(.get, URL(string: "https://example.com/search")!, parameters: parameters)
        #expect(search.url.absoluteString == "https://example.com/search?q=swift&tags%5B%5D=a%20b&tags%5B%5D=c%26d&user%5Bname%5D=Zo%C3%AB")
        #expect(search.body == nil)
        let expected = [
            (ParameterEncoding.urlEncoded, "application/x-www-form-urlencoded", "q=swift&tags%5B%5D=a%20b&tags%5B%5D=c%26d&user%5Bname%5D=Zo%C3%AB"),
            (.json(), "application/json", #"{"q":"swift","tags":["a b","c&d"],"user":{"name":"Zoë"}}"#),
        ]
        for (encoding, contentType, body) in expected {
            let post = try RequestSerializer(parameterEncoding: encoding).request(.post, URL(string: "https://example.com/items")!, parameters: parameters)
            #expect(post.body?.contentType == contentType)
            guard case .bytes(let bytes) = post.body?.plan.segments.first else {
                Issue.record("no bytes")
                continue
            }
            #expect(String(decoding: bytes, as: UTF8.self) == body)
        }
    }

    @Test("POST parameters arrive urlencoded and Python reads every pair back")
    func urlEncodedBody() async throws {
        let echo = try await TestServer().run { base in
            try await client.request(.post, base.appendingPathComponent("echo"), parameters: sampleParameters).validate().decode(Echo.self)
        }
        #expect(echo.method == "POST" && echo.query.isEmpty)
        #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(echo.header("Content-Length") == String(echo.bodyBytes.count))
        #expect(try await pythonDecode("urlencoded", echo.bodyBytes) == samplePairs)
    }

    @Test("GET, HEAD and DELETE put parameters in the query, after any query already there", arguments: [RequestMethod.get, .delete])
    func queryMethods(method: RequestMethod) async throws {
        let echo = try await TestServer().run { base in
            try await client.request(method, URL(string: "\(base)/echo?keep=1%202")!, parameters: sampleParameters).validate().decode(Echo.self)
        }
        #expect(echo.method == method.rawValue && echo.bodyBytes.isEmpty && echo.header("Content-Type") == nil)
        #expect(echo.query.hasPrefix("keep=1%202&"))
        let pairs = try await pythonDecode("urlencoded", Array(echo.query.utf8))
        #expect(pairs == #"[["keep","1 2"],"# + samplePairs.dropFirst())
    }

    @Test("HEAD carries parameters in the query and its empty answer serializes as empty")
    func headQuery() async throws {
        let response = try await TestServer().run { base in
            try await client.request(.head, base.appendingPathComponent("echo"), parameters: ["q": "a b"])
        }
        #expect(response.status == 200 && response.method == .head && response.body.isEmpty)
        #expect(response.url.query == "q=a%20b")
        #expect(try response.serialized(by: .decodable(Echo?.self)) == nil)
        #expect(try response.serialized(by: .json) is NSNull)
    }

    @Test("JSON bodies from parameters and from Encodable values are what Python reads")
    func jsonBodies() async throws {
        var jsonClient = client
        jsonClient.requestSerializer.parameterEncoding = .json()
        let (fromParameters, fromEncodable) = try await TestServer().run { [jsonClient] base in
            let url = base.appendingPathComponent("echo")
            return (try await jsonClient.request(.put, url, parameters: sampleParameters).decode(Echo.self),
                    try await jsonClient.request(.patch, url, encoding: sampleUser).decode(Echo.self))
        }
        #expect(fromParameters.header("Content-Type") == "application/json" && fromParameters.method == "PUT")
        #expect(try await pythonDecode("json", fromParameters.bodyBytes) == sampleDocument)
        #expect(fromEncodable.method == "PATCH")
        #expect(try await pythonDecode("json", fromEncodable.bodyBytes)
            == #"{"address":{"city":"São Paulo"},"age":42,"name":"Ann & Bob","tags":["a/b","ü"]}"#)
        #expect(try JSONDecoder().decode(NewUser.self, from: Data(fromEncodable.bodyBytes)) == sampleUser)
    }

    @Test("property list bodies, XML and binary, are what Python's plistlib reads",
          arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func propertyListBodies(format: PropertyListSerialization.PropertyListFormat) async throws {
        var plistClient = client
        plistClient.requestSerializer.parameterEncoding = .propertyList(format: format)
        var parameters = sampleParameters
        parameters["blob"] = .bytes([0, 255, 10])
        let (fromParameters, fromEncodable) = try await TestServer().run { [plistClient, parameters] base in
            let url = base.appendingPathComponent("echo")
            return (try await plistClient.request(.post, url, parameters: parameters).decode(Echo.self),
                    try await plistClient.request(.post, url, encoding: sampleUser).decode(Echo.self))
        }
        let name = format == .xml ? "xml" : "binary"
        #expect(fromParameters.header("Content-Type") == "application/x-plist")
        let expected = #"{"format":"\#(name)","value":{"blob":{"$data":"AP8K"},"# + sampleDocument.dropFirst() + "}"
        #expect(try await pythonDecode("plist", fromParameters.bodyBytes) == expected)
        #expect(try await pythonDecode("plist", fromEncodable.bodyBytes)
            == #"{"format":"\#(name)","value":{"address":{"city":"São Paulo"},"age":42,"name":"Ann & Bob","tags":["a/b","ü"]}}"#)
    }

    @Test("Foundation dictionaries (as JSONSerialization reads them) become parameters; booleans stay booleans")
    func foundationParameters() throws {
        let object = try JSONSerialization.jsonObject(with: Data(#"{"b":true,"n":1,"x":1.25,"list":[1,"two",null],"inner":{"k":"v"}}"#.utf8))
        let value = try FormValue(foundationObject: object)
        #expect(value == ["b": true, "n": 1, "x": 1.25, "list": [1, "two", nil], "inner": ["k": "v"]])
        #expect(try FormValue(foundationObject: NSSet(array: ["b", "a"])).sortedElements == ["a", "b"])
        #expect(try FormValue(foundationObject: ["d": Data([1, 2])]) == ["d": .bytes([1, 2])])
        #expect(throws: EncodingError.self) { try FormValue(foundationObject: ["a": ["b": Date()]]) }
    }

    @Test("the methods that take parameters in the query are configurable")
    func configurableQueryMethods() async throws {
        var bodyDelete = client
        bodyDelete.requestSerializer.methodsEncodingParametersInURI = [.get, .head]
        let echo = try await TestServer().run { [bodyDelete] base in
            try await bodyDelete.request(.delete, base.appendingPathComponent("echo"), parameters: ["id": 7]).decode(Echo.self)
        }
        #expect(echo.method == "DELETE" && echo.query.isEmpty && echo.bodyBytes == Array("id=7".utf8))
        #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test("an Encodable value becomes query parameters for GET")
    func encodableQuery() async throws {
        let echo = try await TestServer().run { base in
            try await client.request(.get, base.appendingPathComponent("echo"), encoding: sampleUser).decode(Echo.self)
        }
        #expect(try await pythonDecode("urlencoded", Array(echo.query.utf8))
            == #"[["address[city]","São Paulo"],["age","42"],["name","Ann & Bob"],["tags[]","a/b"],["tags[]","ü"]]"#)
    }

    @Test("values a format cannot hold are refused before anything is sent")
    func invalidParameters() throws {
        let url = URL(string: "http://127.0.0.1:1/")!
        let plist = RequestSerializer(parameterEncoding: .propertyList())
        #expect(throws: UploadError.self) { try plist.request(.post, url, parameters: ["a": ["b": nil]]) }
        let json = RequestSerializer(parameterEncoding: .json())
        #expect(throws: UploadError.self) { try json.request(.post, url, parameters: ["x": .double(.nan)]) }
        #expect(throws: UploadError.self) { try RequestSerializer().request(.get, url, encoding: [1, 2]) }
        do {
            _ = try plist.request(.post, url, parameters: ["a": ["b": nil]])
        } catch {
            #expect(String(describing: error).contains("null cannot be written in a property list at a.b"))
        }
    }

    @Test("Accept-Language and User-Agent are sent by default, and a caller's own fields replace them")
    func defaultHeaders() async throws {
        let (plain, overridden) = try await TestServer().run { base in
            let url = base.appendingPathComponent("echo")
            return (try await client.request(.get, url).decode(Echo.self),
                    try await client.request(.get, url, headers: [.userAgent: "mine/1", HTTPField.Name("X-Extra")!: "1"]).decode(Echo.self))
        }
        #expect(plain.header("Accept-Language") == StandardHeaders.acceptLanguage(StandardHeaders.preferredLanguages()))
        let agent = try #require(plain.header("User-Agent"))
        #expect(agent.hasPrefix("FormPost/\(StandardHeaders.packageVersion) (Linux ") || agent.hasPrefix("FormPost/\(StandardHeaders.packageVersion) (macOS "))
        #expect(overridden.headers(named: "User-Agent") == ["mine/1"] && overridden.header("X-Extra") == "1")
        #expect(overridden.header("Accept-Language") != nil)
    }

    @Test("Accept-Language follows AFNetworking's q-values, and the POSIX locale variables")
    func acceptLanguage() {
        #expect(StandardHeaders.acceptLanguage(["fr-CH", "fr", "en"]) == "fr-CH;q=1, fr;q=0.9, en;q=0.8")
        #expect(StandardHeaders.acceptLanguage(["a", "b", "c", "d", "e", "f", "g"]) == "a;q=1, b;q=0.9, c;q=0.8, d;q=0.7, e;q=0.6, f;q=0.5")
        #if !canImport(Darwin)
        #expect(StandardHeaders.preferredLanguages(environment: ["LANGUAGE": "de_AT:de", "LANG": "fr_FR.UTF-8"]) == ["de-AT", "de", "fr-FR"])
        #expect(StandardHeaders.preferredLanguages(environment: ["LANG": "C.UTF-8"]) == ["en"])
        #expect(StandardHeaders.preferredLanguages(environment: ["LC_ALL": "sr_RS@latin"]) == ["sr-RS"])
        #endif
    }

    @Test("Basic and Bearer authorization, and removing it")
    func authorization() async throws {
        var basic = client
        basic.requestSerializer.authorize(username: "ann", password: "pa:ss wörd")
        var bearer = basic
        bearer.requestSerializer.authorize(bearerToken: "t0k3n")
        var none = bearer
        none.requestSerializer.removeAuthorization()
        let echoes = try await TestServer().run { [basic, bearer, none] base in
            let url = base.appendingPathComponent("echo")
            return [try await basic.request(.get, url).decode(Echo.self), try await bearer.request(.get, url).decode(Echo.self),
                    try await none.request(.get, url).decode(Echo.self)]
        }
        let basicValue = try #require(echoes[0].header("Authorization"))
        #expect(basicValue.hasPrefix("Basic "))
        let decoded = try await offPool { try Subprocess.run("base64", ["-d"], input: Data(basicValue.dropFirst(6).utf8)) }
        #expect(decoded == "ann:pa:ss wörd")
        #expect(echoes[1].headers(named: "Authorization") == ["Bearer t0k3n"])
        #expect(echoes[2].header("Authorization") == nil)
    }

    @Test("multipart requests take parameters first, then the built parts; Werkzeug reads them")
    func multipartRequest() async throws {
        let directory = try SampleDirectory()
        let file = try directory.file("photo.jpg", size: 50_000)
        let request = try client.requestSerializer.multipartRequest(.post, URL(string: "http://127.0.0.1:1/")!, parameters: ["user": ["name": "Ann"], "tags": ["a", "b"]], headers: [.contentType: "text/plain"]) { form in
            try form.append(name: "photo", fileAt: file)
        }
        #expect(throws: UploadError.self) { try client.requestSerializer.multipartRequest(.get, URL(string: "http://127.0.0.1:1/")!) }
        let echo = try await TestServer().run { base in
            var sent = request
            sent.url = base.appendingPathComponent("echo")
            return try await client.send(sent).decode(Echo.self)
        }
        let contentType = try #require(echo.header("Content-Type"))
        #expect(contentType.hasPrefix("multipart/form-data; boundary="))
        let bodyPath = directory.path + "/body"
        try Data(echo.bodyBytes).write(to: URL(fileURLWithPath: bodyPath))
        let parts = try await offPool { try Subprocess.run("python3", [Subprocess.interopScript("parse_form.py"), "werkzeug", bodyPath, contentType]) }
        let names = try JSONSerialization.jsonObject(with: Data(parts.utf8)) as? [[String: Any]]
        #expect(names?.compactMap { $0["name"] as? String } == ["tags[]", "tags[]", "user[name]", "photo"])
        #expect(names?.last?["sha256"] as? String == sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file))))
    }
}
