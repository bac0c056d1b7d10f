import Foundation
import Samples
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("streaming", .ownThreads)
struct StreamingTests {
    /// Runs `receiptdesk sample` in a child process and returns that child's own peak RSS in MB (`wait4`'s
    /// `ru_maxrss`, so earlier or larger children do not leak into the figure).
    private func peakRSS(_ binary: String, customers: Int, out: String) throws -> Double {
        let arguments = [binary, "sample", "--customers", String(customers), "--seed", "3", "--out", out]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for pointer in argv { free(pointer) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, binary, &actions, nil, argv, environ)
        try #require(spawned == 0, "posix_spawn failed: \(spawned)")
        var status: Int32 = 0
        var usage = rusage()
        let waited = wait4(pid, &status, 0, &usage)
        try #require(waited == pid)
        try #require(status == 0, "receiptdesk sample --customers \(customers) exited with status \(status)")
        return Double(usage.ru_maxrss) / 1024
    }

    /// The binary to run: `$RECEIPTDESK_SAMPLE_BINARY`, else a release build, else the debug build.
    private func binary() -> (path: String, release: Bool) {
        if let path = ProcessInfo.processInfo.environment["RECEIPTDESK_SAMPLE_BINARY"], !path.isEmpty {
            return (path, !path.contains("/debug/"))
        }
        let release = SampleSupport.packageRoot.appendingPathComponent(".build/release/receiptdesk").path
        if FileManager.default.isExecutableFile(atPath: release) { return (release, true) }
        return (SampleSupport.packageRoot.appendingPathComponent(".build/debug/receiptdesk").path, false)
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
        // hundreds of MB here (the large output is hundreds of MB). The slack is what was measured without
        // such a leak: alone 42 MB for 1,000 and 49 MB for 100,000 (the largest block of 64 customers grows
        // with the run), under a parallel test run up to 72 MB (the two workers' malloc arenas keep more).
        #expect(smallPeak > 5, "peak RSS \(smallPeak) MB is not a plausible measurement")
        #expect(
            largePeak < smallPeak * 1.5 + 25,
            "peak RSS \(smallPeak) MB for 1,000 customers, \(largePeak) MB for \(large) (\(binary))")
    }
}
