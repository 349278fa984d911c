// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "FormPost",
    // Mutex, TaskExecutor and String(validating:) need these; visionOS is declared so that
    // SwiftPM does not assume 1.0. FormPostServer and formpost do not build for watchOS
    // (Hummingbird's NIOTransportServices excludes it): Multipart, FormPost and the
    // receiving core (FormPostReceiving, FormPostS3, FormPostHooks) do.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Multipart", targets: ["Multipart"]),
        .library(name: "MultipartFoundation", targets: ["MultipartFoundation"]),
        .library(name: "FormPost", targets: ["FormPost"]),
        .library(name: "FormPostFoundation", targets: ["FormPostFoundation"]),
        .library(name: "FormPostURLSession", targets: ["FormPostURLSession"]),
        .library(name: "FormPostReceiving", targets: ["FormPostReceiving"]),
        .library(name: "FormPostS3", targets: ["FormPostS3"]),
        .library(name: "FormPostHooks", targets: ["FormPostHooks"]),
        .library(name: "FormPostServer", targets: ["FormPostServer"]),
        // The receivers on Vapor 4 routes: empty unless the "Vapor" trait is enabled.
        .library(name: "FormPostVapor", targets: ["FormPostVapor"]),
        .executable(name: "formpost", targets: ["formpost"]),
        .executable(name: "formpost-urlsession", targets: ["formpost-urlsession"]),
    ],
    // "Vapor" builds FormPostVapor (the receivers on Vapor routes). Off by default: a package
    // that does not enable it neither resolves nor builds Vapor.
    traits: [
        .trait(name: "Vapor", description: "FormPostVapor: the receivers on Vapor 4 routes"),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        // No default traits: "FullFoundation" would make Hummingbird load all of Foundation
        // (and ICU) into every receiver; "ConfigurationSupport" brings swift-configuration.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // swift-crypto 4 imports FoundationEssentials where it can (3 imported all of Foundation).
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-http-structured-headers.git", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // Metrics: the receivers count through swift-metrics; formpost serve exports them in
        // Prometheus's text format.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Only with the "Vapor" trait.
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
    ],
    targets: [
        .target(name: "CMultipartSystem"),
        // The system's zlib (a Swift toolchain's own dependency on Linux, in every Apple SDK):
        // its CRC32, which S3's flexible checksums take of each part.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        .target(name: "Multipart", dependencies: ["CMultipartSystem"]),
        // What of Multipart needs all of Foundation (InputStream parts, NSNumber and
        // property-list values): apart, so that Multipart itself needs FoundationEssentials only.
        .target(name: "MultipartFoundation", dependencies: ["Multipart"]),
        // SHA-256 and SHA-1 as the package hashes: swift-crypto's (CryptoKit on Apple
        // platforms, BoringSSL elsewhere), behind a small value type of its own.
        .target(name: "FormPostDigests", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        // What the resumable-upload client and receiver share: field names and values of
        // tus 1.0 and of the IETF draft (structured fields), limits, metadata. Not a product.
        .target(
            name: "ResumableHTTP",
            dependencies: [
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
            ]
        ),
        .target(
            name: "FormPost",
            dependencies: [
                "Multipart", "ResumableHTTP", "FormPostDigests",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // What of FormPost needs all of Foundation: JSONSerialization, property lists and
        // XML (FoundationXML) for parameters and responses, InputStream bodies. Apart, so that
        // FormPost itself needs FoundationEssentials only.
        .target(name: "FormPostFoundation", dependencies: ["FormPost", "Multipart", "MultipartFoundation"]),
        // The URLSession transport, which brings FoundationNetworking (libcurl on Linux).
        .target(name: "FormPostURLSession", dependencies: ["FormPost", "Multipart"]),
        // The receiving core: receivers, forms, storage (the directory and the object-store
        // seam), the gates (signed URLs, authorization, trusted proxies, admission), routing,
        // events, health and metrics. No HTTP framework and no HTTP client: the adapters
        // below put it on Hummingbird or Vapor, FormPostS3 and FormPostHooks reach services.
        .target(
            name: "FormPostReceiving",
            dependencies: [
                "Multipart", "ResumableHTTP", "FormPostDigests",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // HTTP/1.1's parser errors, to tell a client gone mid-body.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Object storage over S3's API (AsyncHTTPClient, Signature Version 4): an ObjectStore.
        .target(
            name: "FormPostS3",
            dependencies: [
                "FormPostReceiving", "FormPostDigests", "ResumableHTTP", "CZlib",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The authorization hook and the events' hook: HTTP services asked with AsyncHTTPClient.
        .target(
            name: "FormPostHooks",
            dependencies: [
                "FormPostReceiving",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The receivers on Hummingbird (UploadServer, what `formpost serve` runs); it
        // re-exports the core, object storage and the hooks.
        .target(
            name: "FormPostServer",
            dependencies: [
                "FormPostReceiving", "FormPostS3", "FormPostHooks", "Multipart",
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The receivers on Vapor's routes: the core and Vapor only (no Hummingbird). Its
        // code is compiled with the "Vapor" trait only.
        .target(
            name: "FormPostVapor",
            dependencies: [
                "FormPostReceiving", "Multipart",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The command's code, shared by its two executables.
        .target(
            name: "FormpostCommand",
            dependencies: [
                "Multipart", "FormPost", "FormPostServer", "FormPostDigests", "CMultipartSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // `formpost`. On Linux it loads no FoundationNetworking: `--transport urlsession`
        // hands the command to `formpost-urlsession`; on Apple platforms it has URLSession itself.
        .executableTarget(
            name: "formpost",
            dependencies: [
                "FormpostCommand",
                .target(name: "FormPostURLSession", condition: .when(platforms: [.macOS, .iOS, .tvOS, .visionOS, .macCatalyst])),
            ]
        ),
        .executableTarget(name: "formpost-urlsession", dependencies: ["FormpostCommand", "FormPostURLSession"]),
        // A Hummingbird app receiving uploads as users mount FormPostServer: an example, and
        // what the footprint test runs (it must load no ICU, libcurl or libxml2).
        .executableTarget(
            name: "upload-receiver-app",
            dependencies: ["FormPostServer", .product(name: "Hummingbird", package: "hummingbird")],
            path: "Examples/UploadReceiverApp"
        ),
        // The same receivers in a Vapor app, mounted with FormPostVapor: what the receiving
        // tests run against Hummingbird's `formpost serve` and this alike. A program that
        // says so and exits without the "Vapor" trait.
        .executableTarget(
            name: "upload-receiver-vapor",
            dependencies: [
                "FormPostVapor",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
            ],
            path: "Examples/UploadReceiverVapor"
        ),
        .testTarget(name: "MultipartTests", dependencies: ["Multipart", "MultipartFoundation"]),
        .testTarget(name: "FormpostCommandTests", dependencies: ["FormpostCommand", "FormPost"]),
        // The README's Swift blocks, written here by scripts/readme-examples: compiled, not run.
        .testTarget(
            name: "ReadmeExamples",
            dependencies: [
                "Multipart", "FormPost", "FormPostServer", "FormPostURLSession",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "FormPostTests",
            dependencies: [
                "Multipart", "MultipartFoundation", "FormPost", "FormPostFoundation", "FormPostURLSession", "FormPostServer",
                "FormPostReceiving", "FormPostS3", "FormPostHooks",
                "FormPostDigests", "FormPostVapor",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
