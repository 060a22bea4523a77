// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "ModelDepot",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "ModelDepotShared", targets: ["ModelDepotShared"]),
        .executable(name: "depot", targets: ["depot"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .target(
            name: "ModelDepotShared",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            path: "Shared/ModelDepotShared"
        ),
        .executableTarget(
            name: "depot",
            dependencies: [
                "ModelDepotShared",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Server/depot"
        ),
        .executableTarget(
            name: "tflite-benchmark",
            dependencies: ["ModelDepotShared", .product(name: "Crypto", package: "swift-crypto")],
            path: "Benchmarks/tflite-benchmark"
        ),
        .testTarget(
            name: "ModelDepotSharedTests",
            dependencies: ["ModelDepotShared", "depot"],
            path: "Tests/ModelDepotSharedTests"
        ),
    ]
)
