// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FormPost",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "Multipart", targets: ["Multipart"]),
        .executable(name: "formpost-bench", targets: ["formpost-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/vapor/multipart-kit.git", exact: "4.7.1"),
    ],
    targets: [
        .target(name: "CMultipartSystem"),
        .target(name: "Multipart", dependencies: ["CMultipartSystem"]),
        .executableTarget(
            name: "formpost-bench",
            dependencies: [
                "Multipart",
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "MultipartTests", dependencies: ["Multipart"]),
    ],
    swiftLanguageModes: [.v6]
)
