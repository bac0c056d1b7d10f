import Dispatch

/// One fuzz target: a product entry point fed arbitrary bytes.
///
/// A harness calls the product as the product calls itself and ignores the errors it throws: a
/// rejected input is the product working. A trap, an ASan report or a timeout is the finding. Where the
/// product promises something that holds for every input (the splitter's pieces do not depend on how the
/// input was chunked; the ledger reads back every record it stores), the harness traps when it breaks.
enum FuzzHarness: String, CaseIterable, Sendable {
    /// Record splitting and sniffing, then every decoder (`RecordSplitter` + `RecordDecoder`).
    case decode
    /// Compact JWS parsing and ES256 + x5c verification (`CompactJWS` + `JWSVerifier`).
    case jws
    /// PKCS#7 app receipts: BER/DER envelope, receipt attributes, signature check.
    case receipt
    /// Refund rules files (`FlagRules.parse`).
    case rules
    /// Product catalog CSV, read as the CLI reads it (`CSVRows`, `Catalog.parse(rows:)`).
    case catalog
    /// Theme TOML (`ThemeLoader.parse`), then resolution and colour-depth adaptation.
    case theme
    /// The dashboard drawing data from the input on every screen at a size from the input (`ScreenHarness`):
    /// traps when a control character from data reaches the screen.
    case screen

    /// The environment variable that chooses the harness of a libFuzzer build.
    static let environmentKey = "RECEIPTDESK_FUZZ_HARNESS"

    /// Runs one input through the harness.
    func run(_ bytes: [UInt8]) {
        switch self {
        case .decode: DecodeHarness.run(bytes)
        case .jws: JWSHarness.run(bytes)
        case .receipt: ReceiptHarness.run(bytes)
        case .rules: TextHarnesses.rules(bytes)
        case .catalog: TextHarnesses.catalog(bytes)
        case .theme: TextHarnesses.theme(bytes)
        case .screen: ScreenHarness.run(bytes)
        }
    }
}

/// Runs async product code to completion from a thread outside Swift concurrency (libFuzzer's callback,
/// or the replay tool's `main`), so one input is finished before the next starts.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

// The semaphore orders the write before the read.
private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
