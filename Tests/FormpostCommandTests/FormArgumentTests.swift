import Foundation
import Testing
@testable import FormpostCommand

@Suite("curl -F syntax")
struct FormArgumentTests {
    @Test("every -F form and modifier", arguments: [
        ("name=value", FormArgument(name: "name", content: .text("value"))),
        ("name=", FormArgument(name: "name", content: .text(""))),
        ("name=a=b", FormArgument(name: "name", content: .text("a=b"))),
        ("name=value;type=text/x", FormArgument(name: "name", content: .text("value"), type: "text/x")),
        ("name=semi;colon", FormArgument(name: "name", content: .text("semi;colon"))),
        ("f=@photo.jpg", FormArgument(name: "f", content: .file(path: "photo.jpg"))),
        ("f=@photo.jpg;type=image/png", FormArgument(name: "f", content: .file(path: "photo.jpg"), type: "image/png")),
        ("f=@photo.jpg;filename=x.jpg;type=image/png", FormArgument(name: "f", content: .file(path: "photo.jpg"), type: "image/png", filename: "x.jpg")),
        ("f=@\"a;b.txt\";filename=\"x y\\\".txt\"", FormArgument(name: "f", content: .file(path: "a;b.txt"), filename: "x y\".txt")),
        ("f=@a.txt;headers=\"X-A: 1\";headers=X-B: 2", FormArgument(name: "f", content: .file(path: "a.txt"), headers: ["X-A: 1", "X-B: 2"])),
        ("f=@-", FormArgument(name: "f", content: .file(path: "-"))),
        ("n=<notes.txt", FormArgument(name: "n", content: .fileContent(path: "notes.txt"))),
        ("n=<-;type=text/plain", FormArgument(name: "n", content: .fileContent(path: "-"), type: "text/plain")),
        ("f=@path with spaces.bin", FormArgument(name: "f", content: .file(path: "path with spaces.bin"))),
        ("f=@a.txt; type=text/x", FormArgument(name: "f", content: .file(path: "a.txt"), type: "text/x")),
        // A ';' that starts no known modifier stays in the path (curl would warn and drop it).
        ("f=@a.txt;bogus=1", FormArgument(name: "f", content: .file(path: "a.txt;bogus=1"))),
    ])
    func parses(argument: String, expected: FormArgument) throws {
        #expect(try FormArgument.parse(argument) == expected)
    }

    @Test("--form-string takes the value literally")
    func literal() throws {
        #expect(try FormArgument.parse("n=@not-a-file;type=x", literal: true) == FormArgument(name: "n", content: .text("@not-a-file;type=x")))
    }

    @Test("mistakes are usage errors", arguments: ["novalue", "f=@\"unterminated", "f=@a.txt;filename=\"x"])
    func mistakes(argument: String) {
        #expect(throws: UsageError.self) { try FormArgument.parse(argument) }
    }

    @Test("form arguments keep their command-line order across -F and --form-string")
    func order() throws {
        let parsed = try FormBuilder.orderedArguments(["-F", "a=1", "--form-string", "b=@2", "-Fc=3", "--form=d=4", "-H", "X: y", "http://x/"])
        #expect(parsed.map(\.name) == ["a", "b", "c", "d"])
    }

    @Test("sizes and rates", arguments: [("500K", Int64(512_000)), ("10M", Int64(10 << 20)), ("2g", Int64(2 << 30)), ("123", Int64(123)), ("1.5K", Int64(1536)), ("10MB", Int64(10 << 20))])
    func sizes(text: String, bytes: Int64) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test("bad sizes are refused, never trapping", arguments: ["", "K", "-1", "ten", "1e30", "1e3", "9e18", "inf", "nan", "99999999999T", "0x10"])
    func badSizes(text: String) {
        #expect(ByteSize.parse(text) == nil)
    }

    @Test("the progress bar shows bytes, percentage, rate and time left")
    func progressBar() {
        let line = ProgressBar.render(.init(bytesSent: 512 << 20, totalBytes: 1 << 30), elapsed: 1, width: 10)
        #expect(line == "[#####.....]  50%  512.0 MiB / 1.0 GiB  512.0 MiB/s  ETA 0:01")
        let early = ProgressBar.render(.init(bytesSent: 4 << 20, totalBytes: 1 << 30), elapsed: 0.05, width: 10)
        #expect(early == "[..........]   0%  4.0 MiB / 1.0 GiB", "no rate or time left from a 50 ms sample")
    }

    @Test("-w's variables, escapes and %{json}")
    func writeOut() throws {
        let transfer = WriteOut.Transfer(status: 201, sent: 1000, received: 2, seconds: 0.5, url: "http://x/u", httpVersion: "2")
        let line = WriteOut(format: "code=%{http_code} v=%{http_version} up=%{size_upload} down=%{size_download} speed=%{speed_upload} t=%{time_total} %{nope}100%\\n").render(transfer)
        #expect(line == "code=201 v=2 up=1000 down=2 speed=2000 t=0.500000 100%\n")
        let json = WriteOut(format: "%{json}").render(transfer)
        let object = try #require(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["http_code"] as? Int == 201 && object["size_upload"] as? Int == 1000 && object["url_effective"] as? String == "http://x/u")
        #expect(object["http_version"] as? String == "2", "the version is a string, as curl's: \(json)")
        #expect(!json.contains("\\/"), "slashes are not escaped: \(json)")
    }
}
