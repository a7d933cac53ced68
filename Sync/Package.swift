// swift-tools-version: 6.1
// Strata Sync: keeps Strata files in sync through PostgreSQL (postgres-nio). PostgreSQL is the source of truth
// and the log: per synced type a table with per-property clocks, a change log with a gap-free sequence per
// scope, merges in one PostgreSQL transaction. A package of its own so that the root package keeps no
// dependencies. See Documentation/Sync.md and Sync/README.md.
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

/// What every target builds on: the Strata library, PostgreSQL and logging.
let strataAndPostgres: [Target.Dependency] = [
    .product(name: "Strata", package: "Strata"),
    .product(name: "PostgresNIO", package: "postgres-nio"),
    .product(name: "Logging", package: "swift-log"),
]

let package = Package(
    name: "StrataSync",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataSync", targets: ["StrataSync"]),
        .library(name: "StrataSyncGateway", targets: ["StrataSyncGateway"]),
        .executable(name: "strata-sync-bench", targets: ["strata-sync-bench"]),
        .executable(name: "strata-sync-example", targets: ["strata-sync-example"]),
        .executable(name: "strata-sync-gateway", targets: ["strata-sync-gateway"]),
    ],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        // The HTTP gateway's server. Without its default traits: the gateway reads its settings from the
        // environment itself and needs neither swift-configuration nor the full-Foundation extras.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: []),
    ],
    targets: [
        // The change format, the hybrid logical clock, and the PostgreSQL side: schema, merge, pull.
        .target(
            name: "StrataSync",
            dependencies: strataAndPostgres,
            swiftSettings: strictSettings
        ),
        // The HTTP gateway (Hummingbird) for clients that must not hold PostgreSQL credentials: the change format as
        // JSON over HTTP, bearer tokens mapped to the scopes a client may read and write.
        .target(
            name: "StrataSyncGateway",
            dependencies: ["StrataSync", .product(name: "Hummingbird", package: "hummingbird")] + strataAndPostgres,
            swiftSettings: strictSettings
        ),
        // The gateway as a program, configured by environment variables (see its main.swift).
        .executableTarget(
            name: "strata-sync-gateway",
            dependencies: ["StrataSyncGateway", "StrataSync", .product(name: "Hummingbird", package: "hummingbird")]
                + strataAndPostgres,
            swiftSettings: strictSettings
        ),
        // The convergence suite's model, seeded workload and canonical dump, shared by its in-process replicas and
        // its child-process replica (Sync/Tests/StrataSyncTests/ConvergenceTests.swift).
        .target(
            name: "SyncConvergence",
            dependencies: [.product(name: "Strata", package: "Strata")],
            swiftSettings: strictSettings
        ),
        // The convergence suite's replica in a process of its own, which the suite kills with SIGKILL mid-upload
        // and mid-apply (see its main.swift for the commands it takes). Built by `swift build --build-tests`.
        .executableTarget(
            name: "strata-sync-replica",
            dependencies: ["StrataSync", "SyncConvergence"] + strataAndPostgres,
            swiftSettings: strictSettings
        ),
        // Benchmarks against a real PostgreSQL (Documentation/Sync.md, "Benchmarks"); not run by CI.
        .executableTarget(
            name: "strata-sync-bench",
            dependencies: ["StrataSync", "StrataSyncGateway", .product(name: "Hummingbird", package: "hummingbird")]
                + strataAndPostgres,
            swiftSettings: strictSettings
        ),
        // A runnable example: two services sharing data through PostgreSQL (Documentation/Sync.md, "Example").
        .executableTarget(
            name: "strata-sync-example",
            dependencies: ["StrataSync"] + strataAndPostgres,
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataSyncTests",
            dependencies: [
                "StrataSync", "StrataSyncGateway", "SyncConvergence", "strata-sync-replica",
                .product(name: "Hummingbird", package: "hummingbird"),
            ] + strataAndPostgres,
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
