// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FormPost",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "Multipart", targets: ["Multipart"]),
    ],
    targets: [
        .target(name: "CMultipartSystem"),
        .target(name: "Multipart", dependencies: ["CMultipartSystem"]),
        .testTarget(name: "MultipartTests", dependencies: ["Multipart"]),
    ],
    swiftLanguageModes: [.v6]
)
