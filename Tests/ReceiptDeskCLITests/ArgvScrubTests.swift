import Foundation
import Testing

@testable import ReceiptDeskCLI

#if canImport(Glibc)
import Glibc
#endif

@Suite("a postgres:// password is hidden from the process list once the arguments are parsed", .serialized, .ownThreads)
struct ArgvScrubTests {
    /// Scrubs `arguments` as C strings in an argv array of their own; returns what they read afterwards.
    static func scrubbed(_ arguments: [String]) -> (count: Int, arguments: [String]) {
        let argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: arguments.count + 1)
        defer { argv.deallocate() }
        for (index, argument) in arguments.enumerated() { argv[index] = strdup(argument) }
        argv[arguments.count] = nil
        let count = ArgvScrub.scrub(argc: arguments.count, argv: argv)
        let after = (0..<arguments.count).map { index in
            defer { free(argv[index]) }
            return String(cString: argv[index]!)
        }
        return (count, after)
    }

    @Test(
        "each password is overwritten with x, its length kept; everything else stays as it was",
        arguments: [
            ("postgres://desk:s3cret@db.internal/ledger", "postgres://desk:xxxxxx@db.internal/ledger", 1),
            ("--ledger=postgres://desk:s3cret@db.internal:5433/ledger", "--ledger=postgres://desk:xxxxxx@db.internal:5433/ledger", 1),
            ("postgresql://u:pw@h", "postgresql://u:xx@h", 1),
            ("POSTGRES://u:pw@h/db", "POSTGRES://u:xx@h/db", 1),
            ("postgres://u:p%40ss@h/db?sslmode=require", "postgres://u:xxxxxx@h/db?sslmode=require", 1),
            // An @ written unencoded in the password: the URL is refused, and the password is still hidden.
            ("postgres://u:p@ss@h/db", "postgres://u:xxxx@h/db", 1),
            ("postgres://a:one@h/x,postgres://b:two@h/y", "postgres://a:xxx@h/x,postgres://b:xxx@h/y", 2),
            // libpq's password parameter, which the URL reads too.
            ("postgres://u@h/db?sslmode=require&password=s3cret", "postgres://u@h/db?sslmode=require&password=xxxxxx", 1),
            ("postgres://u:pw@h/db?password=other&port=5", "postgres://u:xx@h/db?password=xxxxx&port=5", 2),
            ("postgres://u@h/db?password=&mypassword=x", "postgres://u@h/db?password=&mypassword=x", 0),
            // Its name percent-encoded, as the URL's parser decodes it.
            ("postgres://u@h/db?pa%73sword=s3cret&x=1", "postgres://u@h/db?pa%73sword=xxxxxx&x=1", 1),
            ("postgres://u@h/db?%70%61%73%73%77%6F%72%64=pw", "postgres://u@h/db?%70%61%73%73%77%6F%72%64=xx", 1),
            // Nothing to hide: no password, an empty one, a port or a colon outside the user part, no postgres URL.
            ("postgres://u:@h/db", "postgres://u:@h/db", 0),
            ("postgres://desk@db.internal:5432/ledger", "postgres://desk@db.internal:5432/ledger", 0),
            ("postgres://[::1]:5432/ledger?host=/run/a:b@c", "postgres://[::1]:5432/ledger?host=/run/a:b@c", 0),
            ("postgres://desk@/ledger?host=%2Frun%2Fpostgresql", "postgres://desk@/ledger?host=%2Frun%2Fpostgresql", 0),
            ("sqlite:/tmp/a:b@c", "sqlite:/tmp/a:b@c", 0),
        ])
    func oneArgument(before: String, after: String, count: Int) {
        let result = Self.scrubbed([before])
        #expect(result.arguments == [after])
        #expect(result.count == count)
    }

    @Test("every argument of the command line is scrubbed, the others untouched")
    func wholeCommandLine() {
        let result = Self.scrubbed([
            "receiptdesk", "import", "--ledger", "postgres://desk:hunter2@db/ledger", "secret.ndjson",
            "--ledger=postgresql://other:pässword@db/x",
        ])
        #expect(result.count == 2)
        #expect(result.arguments == [
            "receiptdesk", "import", "--ledger", "postgres://desk:xxxxxxx@db/ledger", "secret.ndjson",
            "--ledger=postgresql://other:xxxxxxxxx@db/x",
        ])
    }

    /// A TCP listener on 127.0.0.1 that answers nothing unless told to: a client connecting to it waits.
    struct SilentServer {
        let descriptor: Int32
        let port: UInt16

        init() throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard listener >= 0 else { throw POSIXError(.EIO) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
            }
            guard bound == 0, listen(listener, 8) == 0 else {
                _ = Glibc.close(listener)
                throw POSIXError(.EADDRINUSE)
            }
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
            }
            descriptor = listener
            port = UInt16(bigEndian: address.sin_port)
        }

        /// Waits up to `seconds` for a client; returns its connection (kept open, never answered).
        func accept(within seconds: Int32) -> Int32? {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, seconds * 1000) == 1 else { return nil }
            let client = Glibc.accept(descriptor, nil, nil)
            return client >= 0 ? client : nil
        }

        func close() { _ = Glibc.close(descriptor) }

        /// Reads exactly `count` bytes from `client`, waiting at most `seconds` for each read.
        static func read(_ client: Int32, _ count: Int, within seconds: Int32 = 20) -> [UInt8]? {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: count)
            while bytes.count < count {
                var poller = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, seconds * 1000) == 1 else { return nil }
                let n = buffer.withUnsafeMutableBytes { Glibc.read(client, $0.baseAddress, count - bytes.count) }
                guard n > 0 else { return nil }
                bytes += buffer[0..<n]
            }
            return bytes
        }

        static func int32(_ bytes: ArraySlice<UInt8>) -> Int {
            bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        }

        /// Plays a PostgreSQL server up to the password: reads the startup message, asks for the password in
        /// clear text (authentication request 3) and returns the password the client sends.
        static func password(from client: Int32) -> String? {
            guard let length = read(client, 4), let _ = read(client, int32(length[...]) - 4) else { return nil }
            let request: [UInt8] = [UInt8(ascii: "R"), 0, 0, 0, 8, 0, 0, 0, 3]
            guard write(client, request, request.count) == request.count else { return nil }
            guard let header = read(client, 5), header[0] == UInt8(ascii: "p"),
                let body = read(client, int32(header[1...]) - 4)
            else { return nil }
            return String(decoding: body.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    @Test("a running receiptdesk's /proc/PID/cmdline holds no password, in --ledger URL and --ledger=URL forms")
    func processList() throws {
        let server = try SilentServer()
        defer { server.close() }
        let file = "\(Binary.corpus)/RevenueCat__purchases-ios/verifyReceiptSample1.txt"
        let url = "postgres://desk:Sup3rSecretPw@127.0.0.1:\(server.port)/ledger?sslmode=disable"
        for arguments in [["import", "--ledger", url, file], ["lookup", "--ledger=\(url)", "1000000723811158"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Binary.path)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer {
                if process.isRunning { process.terminate() }
                process.waitUntilExit()
            }
            // A connection to the silent server means the arguments were parsed (and scrubbed) and the
            // process is waiting for the ledger: its command line is read while it runs.
            let client = try #require(server.accept(within: 60), "receiptdesk never connected")
            defer { _ = Glibc.close(client) }
            #expect(process.isRunning)
            let cmdline = try #require(FileManager.default.contents(atPath: "/proc/\(process.processIdentifier)/cmdline"))
            let text = String(decoding: cmdline, as: UTF8.self)
            #expect(!text.contains("Sup3rSecretPw"), "\(text)")
            #expect(text.contains("postgres://desk:xxxxxxxxxxxxx@127.0.0.1:\(server.port)/ledger"), "\(text)")
            #expect(text.split(separator: "\0").count == arguments.count + 1)
            // The value the command parsed is whole: it is the password the client gives the server.
            #expect(SilentServer.password(from: client) == "Sup3rSecretPw")
        }
    }
}
