// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "reckon",
    products: [
        .executable(name: "reckon", targets: ["reckon"]),
        .executable(name: "reckon-bench", targets: ["reckon-bench"]),
        .library(name: "ReckonCore", targets: ["ReckonCore"]),
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
        .target(
            name: "ReckonCore",
            dependencies: ["CArchive", "CCrypto", "CLinux"]
        ),
        .executableTarget(
            name: "reckon",
            dependencies: ["ReckonCore"]
        ),
        .executableTarget(name: "reckon-bench"),
        .testTarget(
            name: "ReckonCoreTests",
            dependencies: ["ReckonCore"]
        ),
        .testTarget(
            name: "ReckonCLITests",
            dependencies: ["reckon", "ReckonCore"],
            exclude: ["Golden", "Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
