#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hides the password of a `postgres://` URL given on the command line from other processes.
///
/// `ps` and `/proc/PID/cmdline` show a process's arguments as they sit in its own memory for as long as it
/// runs. Once the arguments are parsed (into Swift strings of their own), every password in a `postgres://`
/// or `postgresql://` URL, alone (`--ledger URL`) or inside an argument (`--ledger=URL`), in its user part or
/// its `password` parameter, is overwritten there with `x`, its length kept; the parsed values are untouched.
enum ArgvScrub {
    private static let schemes = ["postgres://", "postgresql://"].map { Array($0.utf8) }

    /// The byte ranges of the passwords in one argument's bytes.
    ///
    /// The password is found as `PostgresURL` (LedgerPostgres) finds it, in libpq's grammar: after the scheme, the
    /// authority runs to the first `/` or `?`; the user part ends at an `@` and its first `:` starts the
    /// password. The last `@` of the authority is taken, so an `@` written unencoded in the password (a URL
    /// the parser refuses) is hidden too.
    static func passwordRanges(in argument: some RandomAccessCollection<UInt8>) -> [Range<Int>] {
        let bytes = Array(argument)
        var ranges: [Range<Int>] = []
        var i = 0
        while i < bytes.count {
            guard let scheme = schemes.first(where: { matches(bytes, at: i, $0) }) else {
                i += 1
                continue
            }
            let start = i + scheme.count
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?") { end += 1 }
            if let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")),
                let colon = bytes[start..<at].firstIndex(of: UInt8(ascii: ":")), colon + 1 < at
            {
                ranges.append((colon + 1)..<at)
            }
            // libpq's password parameter: `?password=...` or `&password=...` (its name percent-decoded, as the URL's
            // parser reads it: `pa%73sword`), to the next `&`.
            if let query = bytes[end...].firstIndex(of: UInt8(ascii: "?")) {
                var parameter = query + 1
                while parameter < bytes.count {
                    let next = bytes[parameter...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
                    if let equals = bytes[parameter..<next].firstIndex(of: UInt8(ascii: "=")), equals + 1 < next,
                        percentDecoded(bytes[parameter..<equals]) == Array("password".utf8)
                    {
                        ranges.append((equals + 1)..<next)
                    }
                    parameter = next + 1
                }
            }
            i = end
        }
        return ranges
    }

    /// `bytes` with each `%XX` replaced by the byte it stands for (a malformed escape kept as it is).
    private static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.endIndex, let high = hex(bytes[i + 1]), let low = hex(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    /// Overwrites every password in the C strings `argv[0..<argc]` with `x`, in place.
    /// - Returns: how many passwords were overwritten.
    @discardableResult
    static func scrub(argc: Int, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int {
        var count = 0
        for index in 0..<argc {
            guard let argument = argv[index] else { continue }
            let bytes = UnsafeMutableRawPointer(argument).bindMemory(to: UInt8.self, capacity: strlen(argument))
            let buffer = UnsafeMutableBufferPointer(start: bytes, count: strlen(argument))
            for range in passwordRanges(in: buffer) {
                for offset in range { buffer[offset] = UInt8(ascii: "x") }
                count += 1
            }
        }
        return count
    }

    /// Scrubs this process's own arguments (on Linux `CommandLine.unsafeArgv` is the kernel's argv, which
    /// `/proc/self/cmdline` reads). Call once, after parsing: `CommandLine.arguments` keeps its copy.
    static func scrubProcessArguments() {
        _ = CommandLine.arguments
        scrub(argc: Int(CommandLine.argc), argv: CommandLine.unsafeArgv)
    }

    private static func matches(_ bytes: [UInt8], at index: Int, _ scheme: [UInt8]) -> Bool {
        guard index + scheme.count <= bytes.count else { return false }
        for (offset, expected) in scheme.enumerated() {
            // ASCII letters compared without case: POSTGRES:// is the same scheme to a reader of `ps`.
            let byte = bytes[index + offset]
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if lowered != expected { return false }
        }
        return true
    }
}
