// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "ReceiptDesk",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "receiptdesk", targets: ["receiptdesk"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Declared for the modules LedgerPostgres imports from them (DESIGN section 1); postgres-nio brings them.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/yaslab/CSV.swift.git", from: "2.5.2"),
    ],
    targets: [
        .target(name: "ReceiptModel"),
        .target(
            name: "ReceiptDecoding",
            dependencies: [
                "ReceiptModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .target(
            name: "Samples",
            dependencies: [
                "ReceiptModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .target(name: "Entitlements", dependencies: ["ReceiptModel"]),
        .target(name: "LedgerQueries", dependencies: ["ReceiptModel", "Entitlements"]),
        .target(name: "Ledger", dependencies: ["ReceiptModel", "ReceiptDecoding", "Entitlements", "LedgerQueries"]),
        .target(
            name: "LedgerSQLite",
            dependencies: [
                "Ledger", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "LedgerPostgres",
            dependencies: [
                "Ledger",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "DeskUI", dependencies: ["ReceiptModel", "Entitlements", "LedgerQueries"]),
        .systemLibrary(name: "CNcurses", path: "Sources/CNcurses"),
        .target(name: "CursesBackend", dependencies: ["CNcurses", "DeskUI"]),
        .target(
            name: "ReceiptDeskCLI",
            dependencies: [
                "ReceiptModel", "ReceiptDecoding", "Entitlements", "Samples", "Ledger", "LedgerSQLite", "LedgerPostgres",
                "DeskUI", "CursesBackend", .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "CSV", package: "CSV.swift"),
            ]
        ),
        .executableTarget(name: "receiptdesk", dependencies: ["ReceiptDeskCLI"]),
        // libFuzzer harnesses (scripts/fuzz); ThemeLoader.swift and CSVRows.swift are links to the CLI's files, so
        // the theme and CSV readers are fuzzed without building the CLI's storage backends.
        .executableTarget(
            name: "receiptdesk-fuzz",
            dependencies: [
                "ReceiptModel", "ReceiptDecoding", "Entitlements", "DeskUI", "LedgerQueries",
                .product(name: "X509", package: "swift-certificates"), .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "CSV", package: "CSV.swift"),
            ],
            path: "Sources/ReceiptDeskFuzz"
        ),
        .testTarget(name: "ReceiptModelTests", dependencies: ["ReceiptModel"]),
        .testTarget(name: "SamplesTests", dependencies: ["Samples", "ReceiptDecoding", "Entitlements", "Ledger", "LedgerSQLite", "ReceiptDeskCLI"]),
        .testTarget(name: "DeskUITests", dependencies: ["DeskUI", "Entitlements", "LedgerQueries"], exclude: ["Snapshots", "Fixtures"]),
        .testTarget(name: "ReceiptDecodingTests", dependencies: ["ReceiptDecoding", "Samples"], exclude: ["Fixtures"]),
        .testTarget(name: "EntitlementsTests", dependencies: ["Entitlements", "ReceiptDecoding", "Samples"]),
        .testTarget(name: "LedgerTests", dependencies: ["Ledger", "LedgerSQLite", "LedgerPostgres", "Entitlements", "Samples"]),
        .testTarget(name: "ReceiptDeskCLITests", dependencies: ["ReceiptDeskCLI", "Ledger", "LedgerSQLite", "Samples"], exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
