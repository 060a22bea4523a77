// swift-tools-version: 6.2
import PackageDescription

/// Apple CI sets MODELDEPOT_WARNINGS_AS_ERRORS: there a delegate or notification method that misses
/// its signature compiles with only a warning, and is then never called.
let sdkSettings: [SwiftSetting] = Context.environment["MODELDEPOT_WARNINGS_AS_ERRORS"] == nil ? [] : [.treatAllWarnings(as: .error)]

let package = Package(
    name: "ModelDepot",
    platforms: [.macOS(.v15), .iOS(.v16)],
    products: [
        .library(name: "ModelDepotShared", targets: ["ModelDepotShared"]),
        .library(name: "ModelDepotServer", targets: ["ModelDepotServer"]),
        .library(name: "ModelDepot", targets: ["ModelDepot"]),
        .library(name: "ModelDepotVision", targets: ["ModelDepotVision"]),
        .library(name: "ModelDepotLiteRT", targets: ["ModelDepotLiteRT"]),
        .executable(name: "depot", targets: ["depot"]),
        .executable(name: "depot-classify", targets: ["depot-classify"]),
        .executable(name: "depot-detect", targets: ["depot-detect"]),
        .executable(name: "depot-track", targets: ["depot-track"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
    ],
    targets: [
        .target(
            name: "ModelDepotShared",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            path: "Shared/ModelDepotShared"
        ),
        .target(
            name: "ModelDepotRollouts",
            dependencies: ["ModelDepotShared", .product(name: "Crypto", package: "swift-crypto")],
            path: "Server/ModelDepotRollouts"
        ),
        .target(
            name: "ModelDepotServer",
            dependencies: [
                "ModelDepotShared", "ModelDepotRollouts",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            path: "Server/ModelDepotServer",
            resources: [.copy("openapi.yaml"), .copy("Console/Templates"), .copy("Console/Assets")]
        ),
        .target(
            name: "ModelDepot",
            dependencies: [
                "ModelDepotShared", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
            ],
            path: "Client/ModelDepot",
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: sdkSettings
        ),
        .target(
            name: "ModelDepotVision",
            dependencies: ["ModelDepot", "ModelDepotShared"],
            path: "Client/ModelDepotVision",
            swiftSettings: sdkSettings
        ),
        .target(
            name: "ModelDepotLiteRT",
            dependencies: ["ModelDepot", "ModelDepotShared", "ModelDepotVision"],
            path: "Client/ModelDepotLiteRT"
        ),
        .executableTarget(
            name: "depot",
            dependencies: [
                "ModelDepotShared", "ModelDepotRollouts",
                "ModelDepotServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Server/depot"
        ),
        .executableTarget(
            name: "depot-classify",
            dependencies: [
                "ModelDepot", "ModelDepotLiteRT", "ModelDepotShared",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/depot-classify"
        ),
        .executableTarget(
            name: "depot-detect",
            dependencies: [
                "ModelDepot", "ModelDepotLiteRT", "ModelDepotShared",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/depot-detect"
        ),
        .executableTarget(
            name: "depot-track",
            dependencies: [
                "ModelDepot", "ModelDepotLiteRT", "ModelDepotShared",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/depot-track"
        ),
        .executableTarget(
            name: "depot-benchmark",
            dependencies: [
                "ModelDepotShared", "ModelDepotRollouts", "ModelDepot", "ModelDepotLiteRT",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/depot-benchmark"
        ),
        .target(
            name: "TestSupport", dependencies: [.product(name: "Subprocess", package: "swift-subprocess")], path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "ModelDepotSharedTests",
            dependencies: ["ModelDepotShared", "ModelDepotRollouts", "depot", "TestSupport"],
            path: "Tests/ModelDepotSharedTests"
        ),
        .testTarget(
            name: "ModelDepotServerTests",
            dependencies: [
                "ModelDepotServer", "ModelDepotRollouts", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/ModelDepotServerTests"
        ),
        .testTarget(
            name: "ModelDepotTests",
            dependencies: ["ModelDepot", "ModelDepotShared", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/ModelDepotTests"
        ),
        .testTarget(
            name: "ModelDepotVisionTests",
            dependencies: ["ModelDepot", "ModelDepotVision", "ModelDepotLiteRT", "ModelDepotShared", "TestSupport"],
            path: "Tests/ModelDepotVisionTests"
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "ModelDepotShared", "ModelDepotRollouts", "ModelDepotServer", "ModelDepot", "ModelDepotLiteRT", "depot",
                "depot-classify", "depot-detect", "depot-track", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tests/EndToEndTests"
        ),
    ]
)
