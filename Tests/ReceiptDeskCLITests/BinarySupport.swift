import Foundation
import Testing

/// Runs the real `receiptdesk` binary built beside the tests and captures what it prints.
enum Binary {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let corpus = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus").path

    /// The executable next to the test bundle (same build configuration).
    static var path: String {
        let candidates = [
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("receiptdesk").path,
            packageRoot.appendingPathComponent(".build/debug/receiptdesk").path,
        ]
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        for bundle in Bundle.allBundles {
            let candidate = bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("receiptdesk").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return candidates[1]
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Whether the run outlived its time limit and was killed.
        var timedOut = false
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// - Parameter limit: past it, the process is killed (SIGKILL) and the result says `timedOut`, so a hang fails
    ///   its test instead of the whole run.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil, limit: Duration? = nil,
        directory: String? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        final class Killed: @unchecked Sendable {
            let lock = NSLock()
            var value = false
        }
        let killed = Killed()
        let watchdog = DispatchWorkItem {
            killed.lock.withLock { killed.value = true }
            kill(process.processIdentifier, SIGKILL)
        }
        if let limit {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(limit.components.seconds * 1000)), execute: watchdog)
        }
        defer { watchdog.cancel() }
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self), timedOut: killed.lock.withLock { killed.value })
    }

    /// One line of JSON output as an object; anything else (an array, a number) fails the test rather than
    /// reading as an object without keys, where an absent key would pass for one the output left out.
    static func json(_ line: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(value as? [String: Any], "not a JSON object: \(line.prefix(200))")
    }
}

/// Writes a test's input file, recording an issue when it cannot (the run then fails for that reason, not a later one).
func writeTestFile(_ path: String, _ data: Data, sourceLocation: SourceLocation = #_sourceLocation) {
    if !FileManager.default.createFile(atPath: path, contents: data) {
        Issue.record("could not write \(path)", sourceLocation: sourceLocation)
    }
}
