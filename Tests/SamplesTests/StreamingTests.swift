import Foundation
import Samples
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("streaming", .ownThreads)
struct StreamingTests {
    /// Runs `receiptdesk sample` in a child process and returns the peak RSS in MB it reports for itself
    /// (`VmHWM`). `wait4`'s `ru_maxrss` cannot be used: Linux keeps the high-water mark of the memory a
    /// process had before `execve`, and a spawned child starts in the test runner's (which is what made
    /// this test read 239 MB under a parallel run).
    private func peakRSS(_ binary: String, customers: Int, out: String) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["sample", "--customers", String(customers), "--seed", "3", "--out", out]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "receiptdesk sample --customers \(customers) exited with \(process.terminationStatus)")
        let first = try #require(text.split(separator: "\n").first.map(String.init))
        let figure = try #require(
            first.range(of: "peak RSS ").map { first[$0.upperBound...].split(separator: " ").first.flatMap { Double($0) } } ?? nil,
            "no peak RSS in: \(first)")
        return figure
    }

    /// The binary to run: `$RECEIPTDESK_SAMPLE_BINARY`, else a release build newer than the debug one, else the debug build.
    private func binary() -> (path: String, release: Bool) {
        if let path = ProcessInfo.processInfo.environment["RECEIPTDESK_SAMPLE_BINARY"], !path.isEmpty {
            return (path, !path.contains("/debug/"))
        }
        let release = SampleSupport.packageRoot.appendingPathComponent(".build/release/receiptdesk").path
        let debug = SampleSupport.packageRoot.appendingPathComponent(".build/debug/receiptdesk").path
        // A release build older than the debug one the tests were built with may not be this code.
        func modified(_ path: String) -> Date? { try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date }
        if FileManager.default.isExecutableFile(atPath: release), let built = modified(release), built >= modified(debug) ?? .distantPast {
            return (release, true)
        }
        return (debug, false)
    }

    @Test("the sample command's peak memory stays flat from 1,000 customers to 100,000")
    func flatMemory() throws {
        let (binary, release) = binary()
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build the receiptdesk product first: \(binary)")
        // A debug build writes ~40 customers/s (its ECDSA arithmetic is unoptimised): 100,000 customers would
        // take forty minutes there, so without a release binary the large run is 8,000.
        let large = release ? 100_000 : 8_000
        let smallOut = SampleSupport.temporaryDirectory("rss-small")
        let largeOut = SampleSupport.temporaryDirectory("rss-large")
        defer {
            try? FileManager.default.removeItem(atPath: smallOut)
            try? FileManager.default.removeItem(atPath: largeOut)
        }
        let smallPeak = try peakRSS(binary, customers: 1_000, out: smallOut)
        let largePeak = try peakRSS(binary, customers: large, out: largeOut)
        func size(_ directory: String) throws -> Int {
            try SampleGenerator.dataFiles.reduce(0) {
                $0 + (try FileManager.default.attributesOfItem(atPath: directory + "/" + $1)[.size] as! NSNumber).intValue
            }
        }
        let ratio = Double(large) / 1_000
        // The output did grow with the customers (so the large run really did the work) ...
        #expect(try Double(size(largeOut)) > 0.8 * ratio * Double(size(smallOut)))
        // ... and the memory did not: a generator that kept customers, records or output would grow by
        // hundreds of MB here (the large output is hundreds of MB). Measured without such a leak: 42 MB for
        // 1,000 and 49 MB for 100,000 (release; the largest block of 64 customers grows with the run), 46 and
        // 51 MB for 1,000 and 8,000 (debug).
        #expect(smallPeak > 5, "peak RSS \(smallPeak) MB is not a plausible measurement")
        #expect(
            largePeak < smallPeak * 1.2 + 10,
            "peak RSS \(smallPeak) MB for 1,000 customers, \(largePeak) MB for \(large) (\(binary))")
    }
}
