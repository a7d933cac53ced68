// swift-tools-version: 6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataStorage", targets: ["StrataStorage"]),
        // The CLI's module folder is `StrataCLI`, not `strata`: `Sources/strata` and
        // `Sources/Strata` would collide on case-insensitive file systems (macOS).
        .executable(name: "strata", targets: ["StrataCLI"]),
        .executable(name: "strata-demo", targets: ["strata-demo"]),
    ],
    targets: [
        .target(name: "StrataStorage", swiftSettings: strictSettings),
        .target(name: "Strata", dependencies: ["StrataStorage"], swiftSettings: strictSettings),
        .executableTarget(
            name: "StrataCLI", dependencies: ["Strata", "StrataStorage"], swiftSettings: strictSettings),
        .executableTarget(
            name: "strata-demo", dependencies: ["Strata", "StrataStorage"], swiftSettings: strictSettings),
        // Helpers shared by the test targets and the integration tests' child process.
        .target(
            name: "StrataTestSupport", dependencies: ["StrataStorage"], path: "Tests/StrataTestSupport",
            swiftSettings: strictSettings),
        // A child process driven by the integration tests (crash, multi-process writers).
        .executableTarget(
            name: "strata-integration-child",
            dependencies: ["Strata", "StrataStorage", "StrataTestSupport"],
            path: "IntegrationTests/Child",
            swiftSettings: strictSettings
        ),
        // A child whose entry point is `static func main() async`: a Realm opened on the main actor must keep
        // working after awaits (on Linux the main actor leaves the main thread).
        .executableTarget(
            name: "strata-async-main", dependencies: ["Strata"], path: "IntegrationTests/AsyncMain",
            swiftSettings: strictSettings),
        .testTarget(
            name: "StrataStorageTests", dependencies: ["StrataStorage", "StrataTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StrataTests", dependencies: ["Strata", "StrataTestSupport"], swiftSettings: strictSettings),
        // Runs the built `strata` executable on files made with the library, and on one the integration child is
        // writing meanwhile.
        .testTarget(
            name: "CLITests",
            dependencies: ["Strata", "StrataStorage", "StrataTestSupport", "StrataCLI", "strata-integration-child"],
            swiftSettings: strictSettings),
        // Every Swift sample of README.md and Documentation/ as code that compiles and runs, plus a guard test
        // that fails when a sample in the Markdown no longer matches this code.
        .testTarget(
            name: "DocumentationTests", dependencies: ["Strata", "StrataStorage"], swiftSettings: strictSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "Strata", "StrataStorage", "StrataTestSupport", "strata-integration-child", "strata-async-main",
            ],
            path: "IntegrationTests/Suites",
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
