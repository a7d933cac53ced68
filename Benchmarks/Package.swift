// swift-tools-version: 6.0
// Benchmarks of StrataStorage against LMDB (system liblmdb) and SQLite (through GRDB), of Strata's object
// layer against GRDB records, of Strata queries against the same queries in SQL, and of Strata's change
// notifications against GRDB's ValueObservation; `strata-report` puts their results together into one report.
// A package of its own so that the root package keeps no dependencies. Run: bash Benchmarks/run.sh
import PackageDescription

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // Seeded generator, timing, checks and formatting shared by the executables.
        .target(name: "BenchSupport"),
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                "BenchSupport",
                "CLMDB",
                .product(name: "StrataStorage", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .executableTarget(
            name: "strata-object-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "Strata", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // The write-path rows drive prepared statements through SQLite's C API.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .executableTarget(
            name: "strata-query-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "Strata", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Change notifications (actor Realms, for-await) against GRDB's ValueObservation.
        .executableTarget(
            name: "strata-notify-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "Strata", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Assembles the benchmarks' Markdown and tab-separated results into one report (run by run.sh).
        .executableTarget(name: "strata-report", dependencies: ["BenchSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
