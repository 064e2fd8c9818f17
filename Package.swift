// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "reckon",
    products: [
        .executable(name: "reckon", targets: ["reckon"]),
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
            dependencies: ["CArchive", "CCrypto", "CLinux", "CSimdJSON", "CSQLite"]
        ),
        .executableTarget(
            name: "reckon",
            dependencies: ["ReckonCore"]
        ),
        .executableTarget(name: "reckon-bench", dependencies: ["ReckonCore"]),
        .target(name: "TestScratch", path: "Tests/TestScratch"),
        .testTarget(
            name: "ReckonCoreTests",
            dependencies: ["ReckonCore", "TestScratch"]
        ),
        .testTarget(
            name: "ReckonCLITests",
            dependencies: ["reckon", "ReckonCore", "TestScratch"],
            exclude: ["Golden", "Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
