// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "reckon",
    products: [
        .executable(name: "reckon", targets: ["reckon"]),
        // The fault sweep's counting preload, loaded into the reckon a test
        // runs (LD_PRELOAD); nothing links it.
        .library(name: "ReckonFaults", type: .dynamic, targets: ["ReckonFaults"])
    ],
    targets: [
        .systemLibrary(
            name: "CArchive",
            providers: [.apt(["libarchive-dev"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(name: "CLinux"),
        .systemLibrary(
            name: "CZip",
            providers: [.apt(["libzip-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "CSimdJSON",
            cxxSettings: [.define("SIMDJSON_THREADS_ENABLED", to: "1")],
            linkerSettings: [.linkedLibrary("simdjson")]
        ),
        .target(
            name: "ReckonCore",
            dependencies: ["CArchive", "CCrypto", "CLinux", "CSimdJSON", "CSQLite", "CZip"]
        ),
        .executableTarget(
            name: "reckon",
            dependencies: ["ReckonCore"]
        ),
        // The benchmark generates its data with the same seeded generator as the tests.
        .executableTarget(name: "reckon-bench", dependencies: ["CLinux", "CZip", "ReckonCore", "SeededGenerator"]),
        // SplitMix64, which the benchmark and the tests share; no test library.
        .target(name: "SeededGenerator"),
        // The test-only code; its libarchive zip writer makes hostile zips.
        .target(name: "TestSupport", dependencies: ["CArchive", "ReckonCore", "SeededGenerator"], path: "Tests/TestSupport"),
        .target(name: "ReckonFaults", path: "Tests/FaultInjection", linkerSettings: [.linkedLibrary("dl")]),
        .testTarget(
            name: "ReckonCoreTests",
            dependencies: ["ReckonCore", "SeededGenerator", "TestSupport"]
        ),
        .testTarget(
            name: "ReckonCLITests",
            dependencies: ["reckon", "ReckonCore", "SeededGenerator", "TestSupport"],
            exclude: ["Golden", "Fixtures"]
        )
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
