// swift-tools-version:6.2
// The flows the documentation shows, each a program of its own, built against the package in
// the directory above (scripts/examples builds them and runs them against each other):
//
//     swift build --package-path Examples
//     Examples/.build/debug/receive-uploads 8080 /tmp/uploads &      # or receive-uploads-vapor
//     REQUEST_METHOD=POST CONTENT_TYPE=… Examples/.build/debug/receive-uploads-cgi /tmp/uploads <body
//     Examples/.build/debug/upload-form http://127.0.0.1:8080/upload photo.jpg title=Holiday
//     Examples/.build/debug/resumable-upload http://127.0.0.1:8080/upload big.iso
//     Examples/.build/debug/presigned-post photo.jpg     # the request it would send; an URL sends it
//
// A package of its own, so that the library's manifest names only what its products need.
// Examples/UploadReceiverApp, beside these sources, is a target of the main package.
import PackageDescription

let package = Package(
    name: "FormPostExamples",
    // The main package's minimums (FormPostServer, and so receive-uploads, does not build for watchOS).
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        // With the "Vapor" trait, for receive-uploads-vapor: the main package's FormPostVapor.
        .package(name: "FormPost", path: "..", traits: ["Vapor"]),
        // As the main package names it: without default traits, so that a receiver loads
        // FoundationEssentials only.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
    ],
    targets: [
        // Uploads a form of text fields and a file with a progress display; prints the answer.
        .executableTarget(
            name: "upload-form",
            dependencies: [.product(name: "FormPost", package: "FormPost"), .product(name: "Multipart", package: "FormPost")]
        ),
        // A Hummingbird app: UploadReceiver (and resumable uploads of the IETF draft) on one
        // route, FormParts read on another.
        .executableTarget(
            name: "receive-uploads",
            dependencies: [
                .product(name: "FormPostServer", package: "FormPost"), .product(name: "Multipart", package: "FormPost"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // The same receiver in a Vapor app, through FormPostVapor: it links no Hummingbird.
        .executableTarget(
            name: "receive-uploads-vapor",
            dependencies: [
                .product(name: "FormPostVapor", package: "FormPost"), .product(name: "Multipart", package: "FormPost"),
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        // One request as a CGI program gets it, answered by the receiving core alone: it links
        // no HTTP framework and no AsyncHTTPClient.
        .executableTarget(
            name: "receive-uploads-cgi",
            dependencies: [.product(name: "FormPostReceiving", package: "FormPost")]
        ),
        // A large file through the resumable client (the IETF draft).
        .executableTarget(
            name: "resumable-upload",
            dependencies: [.product(name: "FormPost", package: "FormPost"), .product(name: "Multipart", package: "FormPost")]
        ),
        // An S3 presigned POST; without an endpoint, the request it would send.
        .executableTarget(
            name: "presigned-post",
            dependencies: [.product(name: "FormPost", package: "FormPost"), .product(name: "Multipart", package: "FormPost")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
