// swift-tools-version: 6.0
// A Hummingbird 2 HTTP service over a Strata file, beside the library: JSON CRUD routes on authors and their
// books, a `where {}` query route, a server-sent-events route driven by `changes`, swift-log logging and a
// graceful shutdown with swift-service-lifecycle. The same routes also run over SQLite through GRDB (one
// repository protocol, two implementations) so that `bench.sh` can compare them on loopback with wrk.
// A package of its own so that the root package keeps no dependencies. See Examples/README.md.
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "StrataExamples",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // The service: models, the repository protocol with its Strata and GRDB implementations, the routes.
        .target(
            name: "StrataService",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataStorage", package: "Strata"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "strata-server",
            dependencies: ["StrataService"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataServiceTests",
            dependencies: [
                "StrataService",
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataStorage", package: "Strata"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
