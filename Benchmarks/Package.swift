// swift-tools-version:6.2
// The benchmarks behind every speed figure of the documentation (Benchmarks/README.md), in a
// package of their own so that the library's manifest names only what its products need
// (multipart-kit, the parse reference, is pinned here and nowhere else).
//
//     swift build -c release --package-path Benchmarks
//     Benchmarks/.build/release/formpost-bench encode|parse|upload|resumable|small
import PackageDescription

let package = Package(
    name: "FormPostBenchmarks",
    // The library's own minimums (FormPost's Package.swift).
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        // With the "Vapor" trait: receiver-apps runs FormPostVapor.
        .package(name: "FormPost", path: "..", traits: ["Vapor"]),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/vapor/multipart-kit.git", exact: "4.7.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: [
        // The memmem(3) scan that `formpost-bench parse` measures the parser against.
        .target(name: "CMemmemScan"),
        // The apps `formpost-bench vapor` runs, each in a process of its own.
        .executableTarget(
            name: "receiver-apps",
            dependencies: [
                .product(name: "FormPostServer", package: "FormPost"), .product(name: "FormPostVapor", package: "FormPost"),
                .product(name: "Vapor", package: "vapor"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "formpost-bench",
            dependencies: [
                "CMemmemScan",
                .product(name: "Multipart", package: "FormPost"),
                .product(name: "FormPost", package: "FormPost"),
                .product(name: "FormPostURLSession", package: "FormPost"),
                .product(name: "FormPostServer", package: "FormPost"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
