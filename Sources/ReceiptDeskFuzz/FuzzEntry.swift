import Foundation

#if FUZZING

    /// The harness of this process, from `RECEIPTDESK_FUZZ_HARNESS`; a libFuzzer binary runs one.
    private let selectedHarness: FuzzHarness = {
        let name = ProcessInfo.processInfo.environment[FuzzHarness.environmentKey] ?? ""
        guard let harness = FuzzHarness(rawValue: name) else {
            let names = FuzzHarness.allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("set \(FuzzHarness.environmentKey) to one of: \(names)\n".utf8))
            exit(2)
        }
        return harness
    }()

    /// libFuzzer's entry point: one input, run through the selected harness.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        selectedHarness.run(bytes)
        return 0
    }

    // libFuzzer's driver (in the runtime that -sanitize=fuzzer links): parses its flags and calls the callback
    // per input. SwiftPM links an executable target's `main` to the module's own entry point, so the entry
    // point hands over to the driver instead of libFuzzer's main() being used.
    @_silgen_name("LLVMFuzzerRunDriver")
    private func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// Runs libFuzzer with this process's arguments (`-max_total_time=60 CORPUS_DIR ...`).
    @main
    struct FuzzMain {
        static func main() {
            _ = selectedHarness
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(runFuzzerDriver(&argc, &argv, fuzzTestOneInput))
        }
    }
#else
    /// Replays inputs through a harness once each, without libFuzzer: `receiptdesk-fuzz HARNESS FILE|DIR...`.
    /// Exits 0 when every input ran (a crash ends the process, as under the fuzzer); 2 on a usage error.
    @main
    struct FuzzReplay {
        static func main() {
            let arguments = Array(CommandLine.arguments.dropFirst())
            let names = FuzzHarness.allCases.map(\.rawValue).joined(separator: "|")
            guard let first = arguments.first, let harness = FuzzHarness(rawValue: first), arguments.count > 1 else {
                FileHandle.standardError.write(Data("usage: receiptdesk-fuzz \(names) FILE|DIRECTORY...\n".utf8))
                exit(2)
            }
            var count = 0
            for path in arguments.dropFirst() {
                for file in files(at: path) {
                    guard let data = FileManager.default.contents(atPath: file) else {
                        FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
                        exit(2)
                    }
                    harness.run([UInt8](data))
                    count += 1
                }
            }
            print("\(harness.rawValue): ran \(count) input\(count == 1 ? "" : "s")")
        }

        /// The path itself, or the regular files under a directory, sorted.
        private static func files(at path: String) -> [String] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                return [path]
            }
            let entries = FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []
            return entries.map { path + "/" + $0 }.filter { file in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) && !isDirectory.boolValue
            }.sorted()
        }
    }
#endif
