import ArgumentParser

/// `receiptdesk bench`: the performance figures of DESIGN section 11.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Measure decoding, verification and storage speed.")

    func run() async throws {
        throw CLIError(message: "bench: not built yet", code: 2)
    }
}
