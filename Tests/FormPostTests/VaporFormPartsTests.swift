#if Vapor
import Foundation
import FormPostVapor
import Testing
import Vapor

/// FormPostVapor's `Request.formParts()`, which reads the body with Vapor's `drain`: a
/// handler that stops after the first part leaves the rest to be read and dropped, and the
/// connection serves the next request.
@Suite("FormPostVapor's formParts")
struct VaporFormPartsTests {
    /// Runs `body` with the port of a Vapor app on 127.0.0.1 whose `POST /first` answers the
    /// name of the body's first part (reading no more), and whose `POST /sizes` answers
    /// each part's name and size, every part read.
    func whileServing<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
        try await whileVaporRuns({ app in
            app.on(.POST, "first", body: .stream) { request async throws -> String in
                var parts = try request.formParts().makeAsyncIterator()
                return try await parts.next()?.name ?? "none"
            }
            app.on(.POST, "sizes", body: .stream) { request async throws -> String in
                var sizes: [String] = []
                for try await part in try request.formParts() {
                    var size = 0
                    for try await buffer in part.body { size += buffer.readableBytes }
                    sizes.append("\(part.name)=\(size)")
                }
                return sizes.joined(separator: ",")
            }
        }, body)
    }

    @Test("a handler reads the first part of a 32 MiB form and answers; the rest is read and dropped, and the same connection then carries a form read whole")
    func unreadRestDrained() async throws {
        let samples = try SampleDirectory()
        let big = try samples.file("big.bin", size: 32 << 20, seed: 3)
        let answers = try await whileServing { port in
            try await offPool {
                try Subprocess.run("curl", [
                    "-s", "--max-time", "60", "-w", " connects=%{num_connects}\n",
                    "-F", "title=first", "-F", "big=@\(big)", "http://127.0.0.1:\(port)/first",
                    "--next", "-s", "--max-time", "60", "-w", " connects=%{num_connects}\n",
                    "-F", "note=second", "-F", "big=@\(big)", "http://127.0.0.1:\(port)/sizes",
                ])
            }
        }
        let lines = answers.split(separator: "\n").map(String.init)
        #expect(lines == ["title connects=1", "note=6,big=\(32 << 20) connects=0"])
    }
}
#endif
