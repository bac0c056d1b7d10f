import Foundation
import Ledger
@testable import LedgerPostgres
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// How `--ledger postgres://...` is read: user, password, host or socket directory, port, database and
/// sslmode, and the printable form that never holds the password.
@Suite("PostgreSQL ledger URLs")
struct PostgresURLTests {
    /// What a URL says, field by field.
    struct Parsed: Equatable, CustomStringConvertible {
        var user: String
        var password: String?
        var host: String
        var port: Int
        var database: String?
        var socketDirectory: String?
        var sslMode: String?
        var isLoopback: Bool
        var redacted: String

        init(_ url: PostgresURL) {
            user = url.user
            password = url.password
            host = url.host
            port = url.port
            database = url.database
            socketDirectory = url.socketDirectory
            sslMode = url.sslMode?.rawValue
            isLoopback = url.isLoopback
            redacted = url.redacted
        }

        init(
            user: String, password: String? = nil, host: String, port: Int = 5432, database: String?, socketDirectory: String? = nil,
            sslMode: String? = nil, isLoopback: Bool, redacted: String
        ) {
            self.user = user
            self.password = password
            self.host = host
            self.port = port
            self.database = database
            self.socketDirectory = socketDirectory
            self.sslMode = sslMode
            self.isLoopback = isLoopback
            self.redacted = redacted
        }

        var description: String { "\(user):\(password ?? "-")@\(host):\(port)/\(database ?? "-") socket=\(socketDirectory ?? "-") ssl=\(sslMode ?? "-") loopback=\(isLoopback) \(redacted)" }
    }

    /// No password from the environment or a password file: only what the URL itself says.
    static let bare = ["USER": "ana"]

    @Test(
        "each part of the URL lands in its field",
        arguments: [
            (
                "postgres://bo:pw@db.example:6543/ledger?sslmode=require",
                Parsed(
                    user: "bo", password: "pw", host: "db.example", port: 6543, database: "ledger", sslMode: "require", isLoopback: false,
                    redacted: "postgres://bo:***@db.example:6543/ledger")
            ),
            (
                "postgresql://bo@db.example/ledger",
                Parsed(user: "bo", host: "db.example", database: "ledger", isLoopback: false, redacted: "postgres://bo@db.example:5432/ledger")
            ),
            // No user: $USER, as libpq does. No host: the loopback address. No database: none (the server's default).
            ("postgres:///ledger", Parsed(user: "ana", host: "127.0.0.1", database: "ledger", isLoopback: true, redacted: "postgres://ana@127.0.0.1:5432/ledger")),
            ("postgres://db.example", Parsed(user: "ana", host: "db.example", database: nil, isLoopback: false, redacted: "postgres://ana@db.example:5432/")),
            ("postgres://bo@localhost/x", Parsed(user: "bo", host: "localhost", database: "x", isLoopback: true, redacted: "postgres://bo@localhost:5432/x")),
            ("postgres://bo@127.0.0.2/x", Parsed(user: "bo", host: "127.0.0.2", database: "x", isLoopback: true, redacted: "postgres://bo@127.0.0.2:5432/x")),
            // A unix socket directory: as a host parameter, or as a percent-encoded host.
            (
                "postgres://bo@/ledger?host=/run/postgresql",
                Parsed(
                    user: "bo", host: "", database: "ledger", socketDirectory: "/run/postgresql", isLoopback: false,
                    redacted: "postgres://bo@/ledger?host=/run/postgresql")
            ),
            // Percent-encoded user, password and database are decoded; the printed form encodes them again.
            (
                "postgres://b%40o:p%40ss%3Aw%2Frd@db.example/led%20ger",
                Parsed(
                    user: "b@o", password: "p@ss:w/rd", host: "db.example", database: "led ger", isLoopback: false,
                    redacted: "postgres://b%40o:***@db.example:5432/led%20ger")
            ),
            // An IPv6 address: no brackets in the host (the address is what is connected to), brackets when printed.
            (
                "postgres://bo@[::1]:6543/ledger",
                Parsed(user: "bo", host: "::1", port: 6543, database: "ledger", isLoopback: true, redacted: "postgres://bo@[::1]:6543/ledger")
            ),
            // A socket on another port: the port names the socket file (.s.PGSQL.6543), so it is printed.
            (
                "postgres://bo@:6543/ledger?host=/run/postgresql",
                Parsed(
                    user: "bo", host: "", port: 6543, database: "ledger", socketDirectory: "/run/postgresql", isLoopback: false,
                    redacted: "postgres://bo@:6543/ledger?host=/run/postgresql")
            ),
            // libpq's port, user and dbname parameters win over the URL's parts.
            (
                "postgres://bo@/x?host=/run/postgresql&port=55439&dbname=ledger",
                Parsed(
                    user: "bo", host: "", port: 55439, database: "ledger", socketDirectory: "/run/postgresql", isLoopback: false,
                    redacted: "postgres://bo@:55439/ledger?host=/run/postgresql")
            ),
            (
                "postgres://db.example:6543/ledger?user=ops&port=6544",
                Parsed(user: "ops", host: "db.example", port: 6544, database: "ledger", isLoopback: false, redacted: "postgres://ops@db.example:6544/ledger")
            ),
        ])
    func fields(url: String, expected: Parsed) throws {
        #expect(Parsed(try PostgresURL(url, environment: Self.bare)) == expected)
    }

    @Test(
        "what is not a postgres:// URL is refused as cannotOpen, without echoing it",
        arguments: [
            "mysql://bo:secret@db/x", "sqlite:/tmp/ledger.sqlite", "postgres//bo:secret@db/x", "", "http://bo:secret@db/x",
            "postgres://bo:secret@db/x?port=secret", "postgres://bo:secret@db/x?port=70000",
        ])
    func refused(url: String) {
        #expect {
            _ = try PostgresURL(url, environment: Self.bare)
        } throws: { error in
            guard let error = error as? LedgerError else { return false }
            return error.code == .cannotOpen && !error.message.contains("secret")
        }
    }

    @Test(
        "a parameter libpq does not know, or one asking for what this client does not do, is refused naming it; a harmless one is accepted",
        arguments: [
            ("postgres://bo:s3cret@db.example/ledger?sslmod=require", "libpq does not know, sslmod"),
            ("postgres://bo:s3cret@db.example/ledger?SSLMODE=require", "a parameter libpq does not know ("),
            ("postgres://bo@db.example/ledger?s3cret=1", "libpq does not know, s3cret"),
            ("postgres://bo@db.example/ledger?pw%20s3cret=1", "a parameter libpq does not know ("),
            ("postgres://bo:s3cret@db.example/ledger?channel_binding=require", "the channel_binding parameter"),
            ("postgres://bo:s3cret@db.example/ledger?options=-c%20statement_timeout%3D0", "the options parameter"),
            ("postgres://bo:s3cret@db.example/ledger?sslcrl=/crl.pem", "the sslcrl parameter"),
        ])
    func unknownParameters(url: String, named: String) throws {
        #expect {
            _ = try PostgresURL(url, environment: Self.bare)
        } throws: { error in
            guard let error = error as? LedgerError else { return false }
            // Every parameter taken is named: the keepalives and application_name were taken and not listed.
            return error.code == .cannotOpen && error.message.contains(named) && error.message.contains("it reads host, port")
                && error.message.contains("keepalives_idle") && error.message.contains("tcp_user_timeout")
                && error.message.contains("application_name") && !error.message.contains("pw s3cret") && !error.message.contains("SSLMODE")
        }
        let harmless = "postgres://bo@db.example/ledger?application_name=desk&connect_timeout=5&keepalives=1&sslmode=require"
            + "&gssencmode=disable&channel_binding=prefer&target_session_attrs=any"
        #expect(try PostgresURL(harmless, environment: Self.bare).sslMode == .require)
        // The same parameters asking for what this client does not do are refused.
        for demanding in ["gssencmode=require", "channel_binding=require", "target_session_attrs=read-write"] {
            #expect(throws: LedgerError.self) { try PostgresURL("postgres://bo@db.example/ledger?" + demanding, environment: Self.bare) }
        }
    }

    @Test("keepalive: on by default (30 s idle, 10 s apart, 3 probes, 60 s user timeout); libpq's parameters over it, 0 the system's")
    func keepAliveParameters() throws {
        let base = "postgres://bo@db.example/ledger"
        #expect(try PostgresURL(base, environment: Self.bare).keepAlive == KeepAlive())
        let defaults = KeepAlive()
        #expect(defaults.enabled && defaults.idle == 30 && defaults.interval == 10 && defaults.count == 3 && defaults.userTimeout == 60_000)
        let given = try PostgresURL(
            base + "?keepalives_idle=7&keepalives_interval=2&keepalives_count=0&tcp_user_timeout=5000", environment: Self.bare
        ).keepAlive
        #expect(given.enabled && given.idle == 7 && given.interval == 2 && given.count == nil && given.userTimeout == 5000)
        #expect(try PostgresURL(base + "?keepalives=0", environment: Self.bare).keepAlive.enabled == false)
        #expect(try PostgresURL(base + "?keepalives=1", environment: Self.bare).keepAlive.enabled)
        for bad in ["keepalives_idle=soon", "keepalives_count=-1", "tcp_user_timeout=1.5", "keepalives=99999999999"] {
            #expect {
                _ = try PostgresURL(base + "?" + bad, environment: Self.bare)
            } throws: { error in
                (error as? LedgerError)?.message.contains("the \(bad.prefix { $0 != "=" }) parameter") == true
            }
        }
    }

    /// The directory is printed once, as the host parameter: printed as the host as well, it read as
    /// `postgres://bo@/run/postgresql/ledger?host=/run/postgresql`, a URL whose database is run/postgresql/ledger.
    @Test("a socket directory given as a percent-encoded host is the socket directory, and printed as one")
    func percentEncodedSocketHost() throws {
        let url = try PostgresURL("postgres://bo@%2Frun%2Fpostgresql/ledger", environment: Self.bare)
        #expect(url.socketDirectory == "/run/postgresql")
        #expect(url.host == "")
        #expect(url.database == "ledger")
        #expect(url.user == "bo")
        #expect(url.redacted == "postgres://bo@/ledger?host=/run/postgresql")
        // The same target written the other way prints the same.
        #expect(try PostgresURL("postgres://bo@/ledger?host=%2Frun%2Fpostgresql", environment: Self.bare).redacted == url.redacted)
    }

    /// Where a URL leads: everything but the password, which the printed form never holds. (`sslmode` is not
    /// printed either: it decides how, not where.)
    struct Target: Equatable, CustomStringConvertible {
        var user: String
        var passwordInURL: Bool
        var host: String
        var port: Int
        var database: String?
        var socketDirectory: String?

        init(_ url: PostgresURL) {
            user = url.user
            passwordInURL = url.passwordInURL
            host = url.host
            port = url.port
            database = url.database
            socketDirectory = url.socketDirectory
        }

        var description: String { "\(user)\(passwordInURL ? ":***" : "")@\(host):\(port)/\(database ?? "-") socket=\(socketDirectory ?? "-")" }
    }

    @Test(
        "the printed form is unambiguous: read back, it leads where the URL does, and it never holds the password",
        arguments: [
            // Sockets: as a parameter, as a percent-encoded host, on another port, with characters to escape.
            "postgres://bo:Pw-7xq@/ledger?host=/run/postgresql",
            "postgres://bo:Pw-7xq@%2Frun%2Fpostgresql/ledger",
            "postgresql://bo@%2Frun%2Fpostgresql:6543/ledger",
            "postgres://bo@:6543/led%2Fger?host=%2Ftmp%2Fpg%20dir%26more%3Dx%2B%23%25",
            "postgres://bo@db.example/ledger?host=/run/postgresql",
            // TCP: names, addresses, reserved and non-ASCII characters in the user and database.
            "postgres://bo:Pw-7xq@db.example:6543/ledger?sslmode=require",
            "postgres://b%40o%3Ax%2F%3F%23%25%20:Pw-7xq@db.example/l%3Fed%2Fg%23er%40%3A%25%20caf%C3%A9",
            "postgres://bo@db%2Fexample/ledger",
            "postgres://bo@10.0.0.7:5433/ledger",
            // IPv6: loopback, with a port, with a zone.
            "postgres://bo:Pw-7xq@[::1]/ledger",
            "postgres://bo@[2001:db8::7]:6543/ledger",
            "postgres://bo@[fe80::1%25eth0]/ledger",
            // Defaults: no port, no user, no host, no database, nothing at all.
            "postgres://bo:Pw-7xq@db.example/ledger",
            "postgres:///ledger",
            "postgres://db.example",
            "postgres://",
            "postgres://bo:@db.example/ledger",
        ])
    func printedFormReadsBack(url: String) throws {
        let parsed = try PostgresURL(url, environment: Self.bare)
        let printed = parsed.redacted
        #expect(!printed.contains("Pw-7xq"))
        let reparsed = try PostgresURL(printed, environment: Self.bare)
        #expect(Target(reparsed) == Target(parsed), "\(url) printed as \(printed)")
        #expect(reparsed.redacted == printed)
        #expect(!printed.contains(" ") && printed.allSatisfy(\.isASCII), "\(printed)")
    }

    @Test("a password or user holding reserved characters survives its percent-encoding")
    func reservedCharacters() throws {
        for password in ["p@ss:w/rd?#", "caf\u{E9} \u{1F511}", "a+b=c&d"] {
            let encoded = try #require(password.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let url = try PostgresURL("postgres://b%40o:\(encoded)@db.example/ledger", environment: Self.bare)
            #expect(url.password == password, "postgres://b%40o:\(encoded)@db.example/ledger")
            #expect(url.user == "b@o")
            #expect(url.redacted == "postgres://b%40o:***@db.example:5432/ledger")
        }
    }

    /// Each part is percent-decoded exactly once: a `%` written as `%25` is a `%`, and what follows it is
    /// never decoded again. (Decoding twice lost a password such as `50%`, so PGPASSWORD or ~/.pgpass was
    /// used without a word, and turned `a%41b` into `aAb`.)
    @Test("a user, password, host or database holding % survives its percent-encoding")
    func percentInPassword() throws {
        for password in ["50%", "a%41b", "100%sure", "%", "%25"] {
            let encoded = try #require(password.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let url = try PostgresURL("postgres://bo:\(encoded)@db.example/ledger", environment: ["PGPASSWORD": "from-env"])
            #expect(url.password == password, "postgres://bo:\(encoded)@db.example/ledger")
            #expect(url.passwordInURL)
            #expect(url.redacted == "postgres://bo:***@db.example:5432/ledger")
        }
        let user = try PostgresURL("postgres://50%25off@db.example/ledger", environment: Self.bare)
        #expect(user.user == "50%off")
        let database = try PostgresURL("postgres://bo@db.example/100%2541", environment: Self.bare)
        #expect(database.database == "100%41")
        let socket = try PostgresURL("postgres://bo@%2Ftmp%2Fpg%2541/ledger", environment: Self.bare)
        #expect(socket.socketDirectory == "/tmp/pg%41")
        let parameter = try PostgresURL("postgres://bo@/ledger?host=%2Ftmp%2Fpg%2541", environment: Self.bare)
        #expect(parameter.socketDirectory == "/tmp/pg%41")
    }

    @Test(
        "a malformed percent escape is refused, naming the part it is in and never echoing it",
        arguments: [
            ("postgres://bo:s3cret%zz@db.example/ledger", "password"),
            ("postgres://bo:s3cret%@db.example/ledger", "password"),
            ("postgres://bo:s3cret%4@db.example/ledger", "password"),
            ("postgres://bo:s3cret%00@db.example/ledger", "password"),
            ("postgres://bo:s3cret%FF@db.example/ledger", "password"),
            ("postgres://s3cret%zz:pw@db.example/ledger", "user"),
            ("postgres://bo@s3cret%zz/ledger", "host"),
            ("postgres://bo@db.example/s3cret%zz", "database"),
            ("postgres://bo@/ledger?host=/s3cret%zz", "host parameter"),
        ])
    func malformedEscape(url: String, part: String) {
        #expect {
            _ = try PostgresURL(url, environment: ["PGPASSWORD": "from-env"])
        } throws: { error in
            guard let error = error as? LedgerError else { return false }
            return error.code == .cannotOpen && error.message.hasPrefix("the \(part) in the postgres:// URL ")
                && !error.message.contains("s3cret")
        }
    }

    @Test(
        "a port that is not a number from 1 to 65535, or an @ left in the host, is refused without echoing the URL",
        arguments: [
            "postgres://bo:s3cret@db.example:s3cret/ledger", "postgres://bo:s3cret@db.example:0/ledger",
            "postgres://bo:s3cret@db.example:65536/ledger", "postgres://bo:s3cret@db.example:99999999999999999999/ledger",
            "postgres://bo:s3c@ret@db.example/ledger", "postgres://bo@[::1/ledger", "postgres://bo@[::1]x/ledger",
        ])
    func malformedHostOrPort(url: String) {
        #expect {
            _ = try PostgresURL(url, environment: Self.bare)
        } throws: { error in
            guard let error = error as? LedgerError else { return false }
            return error.code == .cannotOpen && !error.message.contains("s3c")
        }
    }
}

/// libpq's `sslmode` and `sslrootcert`, read from the URL (or `PGSSLMODE`, `PGSSLROOTCERT`) into what a connection
/// asks of TLS; and, against a throwaway server with `ssl = on` and a certificate from a test CA, what each mode
/// accepts and refuses.
@Suite("PostgreSQL TLS: sslmode and sslrootcert", .ownThreads)
struct PostgresTLSTests {
    static let testRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SampleData/test-root.pem").path

    static func plan(_ url: String, _ environment: [String: String] = [:]) throws -> TLSPlan {
        try PostgresURL(url, environment: environment).tlsPlan()
    }

    @Test("each sslmode asks for and checks what libpq's does")
    func modes() throws {
        let ca = RootCertificates.file("/etc/ca.pem", explicit: true)
        let base = "postgres://bo@db.example/ledger"
        #expect(try Self.plan(base + "?sslmode=disable") == TLSPlan(use: .off, check: .nothing))
        #expect(try Self.plan(base + "?sslmode=allow") == TLSPlan(use: .prefer, check: .nothing))
        #expect(try Self.plan(base + "?sslmode=prefer") == TLSPlan(use: .prefer, check: .nothing))
        #expect(try Self.plan(base + "?sslmode=require") == TLSPlan(use: .require, check: .nothing))
        // require with a root file given checks the chain, as verify-ca does (libpq, for backward compatibility).
        #expect(try Self.plan(base + "?sslmode=require&sslrootcert=/etc/ca.pem") == TLSPlan(use: .require, check: .chain, roots: ca))
        #expect(try Self.plan(base + "?sslmode=verify-ca&sslrootcert=/etc/ca.pem") == TLSPlan(use: .require, check: .chain, roots: ca))
        #expect(
            try Self.plan(base + "?sslrootcert=%2Fetc%2Fca.pem&sslmode=verify-full") == TLSPlan(use: .require, check: .chainAndHost, roots: ca))
        // sslrootcert=system: the system's roots, verify-full by default and nothing weaker.
        #expect(try Self.plan(base + "?sslrootcert=system") == TLSPlan(use: .require, check: .chainAndHost, roots: .system))
        // No sslmode: prefer, except on loopback, where TLS is off; a unix socket never uses TLS.
        #expect(try Self.plan(base) == TLSPlan(use: .prefer, check: .nothing))
        #expect(try Self.plan("postgres://bo@127.0.0.1/ledger") == TLSPlan(use: .off, check: .nothing))
        #expect(try Self.plan("postgres://bo@127.0.0.1/ledger?sslmode=prefer") == TLSPlan(use: .prefer, check: .nothing))
    }

    @Test("PGSSLMODE and PGSSLROOTCERT stand in for the parameters; the URL's win; the root file defaults to ~/.postgresql/root.crt")
    func environment() throws {
        let base = "postgres://bo@db.example/ledger"
        #expect(try PostgresURL(base, environment: ["PGSSLMODE": "require"]).sslMode == .require)
        #expect(try PostgresURL(base + "?sslmode=verify-ca", environment: ["PGSSLMODE": "disable", "HOME": "/h"]).sslMode == .verifyCA)
        #expect(try PostgresURL(base, environment: ["PGSSLROOTCERT": "/r.pem"]).rootCertificates == .file("/r.pem", explicit: true))
        #expect(try PostgresURL(base + "?sslrootcert=/u.pem", environment: ["PGSSLROOTCERT": "/r.pem"]).rootCertificates == .file("/u.pem", explicit: true))
        #expect(try PostgresURL(base, environment: ["HOME": "/h"]).rootCertificates == .file("/h/.postgresql/root.crt", explicit: false))
        // The default file is used by verify-* ...
        #expect(try Self.plan(base + "?sslmode=verify-full", ["HOME": "/h"]).roots == .file("/h/.postgresql/root.crt", explicit: false))
        // ... and by require only when it is there.
        #expect(try Self.plan(base + "?sslmode=require", ["HOME": "/nonexistent-home"]) == TLSPlan(use: .require, check: .nothing))
    }

    @Test(
        "an sslmode libpq does not know, sslrootcert=system with a weaker mode, or a client certificate is refused, naming the parameter",
        arguments: [
            ("postgres://bo:s3cret@db.example/ledger?sslmode=verify_full", [:], "the sslmode parameter"),
            ("postgres://bo:s3cret@db.example/ledger?sslmode=", [:], "the sslmode parameter"),
            ("postgres://bo:s3cret@db.example/ledger?sslmode=REQUIRE", [:], "the sslmode parameter"),
            ("postgres://bo:s3cret@db.example/ledger", ["PGSSLMODE": "on"], "PGSSLMODE"),
            ("postgres://bo:s3cret@db.example/ledger?sslmode=require&sslrootcert=system", [:], "sslrootcert=system"),
            ("postgres://bo:s3cret@db.example/ledger?sslrootcert=", [:], "sslrootcert"),
            ("postgres://bo:s3cret@db.example/ledger?sslcert=/c.pem&sslkey=/k.pem", [:], "sslcert"),
        ] as [(String, [String: String], String)])
    func refusedSettings(url: String, environment: [String: String], named: String) {
        #expect {
            _ = try PostgresURL(url, environment: environment)
        } throws: { error in
            guard let error = error as? LedgerError else { return false }
            return error.code == .cannotOpen && error.message.contains(named) && !error.message.contains("s3cret")
        }
    }

    @Test("verify-ca and verify-full need roots; a root file that is missing, a directory or not PEM is an error naming sslrootcert")
    func rootFiles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-roots-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notPEM = directory + "/not.pem"
        try "just some text\n".write(toFile: notPEM, atomically: false, encoding: .utf8)
        let base = "postgres://bo@db.example/ledger?sslmode=verify-full&sslrootcert="
        for (path, words) in [(directory + "/missing.pem", "does not exist"), (directory, "is a directory"), (notPEM, "PEM")] {
            #expect {
                _ = try PostgresURL(base + path, environment: [:]).tls()
            } throws: { error in
                guard let error = error as? LedgerError else { return false }
                return error.code == .cannotOpen && error.message.contains("sslrootcert file \(path)") && error.message.contains(words)
            }
            // The same through connect: refused before any connection is tried (db.example is never reached).
            do {
                let database = try await PostgresDatabase.connect(url: base + path, environment: [:])
                try await database.close()
                Issue.record("connected with sslrootcert \(path)")
            } catch let error as LedgerError {
                #expect(error.code == .cannotOpen && error.message.contains("sslrootcert file \(path)"), "\(error.message)")
            }
        }
        // No roots at all (no sslrootcert, no HOME): verify-ca says what it needs.
        #expect {
            _ = try PostgresURL("postgres://bo@db.example/ledger?sslmode=verify-ca", environment: [:]).tls()
        } throws: { error in
            (error as? LedgerError)?.message.contains("sslrootcert=PATH") ?? false
        }
        // A PEM certificate loads.
        let tls = try PostgresURL(base + Self.testRoot, environment: [:]).tls()
        #expect(tls.isEnforced)
        #expect(!(try PostgresURL("postgres://bo@db.example/ledger?sslmode=disable", environment: [:]).tls().isAllowed))
    }
}

/// A throwaway cluster that takes only TLS connections on 127.0.0.1: a private ``PostgresTestServer`` restarted
/// with `ssl = on`, a server certificate for `localhost` issued by a test CA made with `openssl`, and a
/// `pg_hba.conf` whose only TCP line is `hostssl` (so a connection without TLS is refused).
final class TLSTestServer {
    let server: PostgresTestServer
    let port: Int
    let certificates: String
    var caFile: String { certificates + "/ca.crt" }
    var otherCAFile: String { certificates + "/other-ca.crt" }

    init() throws {
        server = try PostgresTestServer.makePrivate()
        do {
            certificates = server.socketDirectory + "/certificates"
            try FileManager.default.createDirectory(atPath: certificates, withIntermediateDirectories: true)
            try Self.makeCertificates(in: certificates)
            try server.stopServer()
            let data = server.directory
            for name in ["server.crt", "server.key"] {
                try FileManager.default.copyItem(atPath: certificates + "/" + name, toPath: data + "/" + name)
            }
            try """

                ssl = on
                ssl_cert_file = 'server.crt'
                ssl_key_file = 'server.key'

                """.appendLine(toFile: data + "/postgresql.conf")
            let hba = data + "/pg_hba.conf"
            let rules = try String(contentsOfFile: hba, encoding: .utf8)
                .split(separator: "\n").filter { !$0.hasPrefix("host") }.joined(separator: "\n")
            try (rules + "\nhostssl all all 127.0.0.1/32 trust\n").write(toFile: hba, atomically: false, encoding: .utf8)
            if getuid() == 0 { try Self.run("/bin/chown", ["-R", "postgres:postgres", data]) }
            chmod(data + "/server.key", 0o600)
            port = try Self.freePort()
            try pgctl([
                "-D", data, "-l", server.socketDirectory + "/server.log", "-w", "-t", "60", "-o",
                "-c listen_addresses=127.0.0.1 -p \(port) -k \(server.socketDirectory) -c fsync=off", "start",
            ])
        } catch {
            server.stop()
            throw error
        }
    }

    func stop() { server.stop() }

    /// A URL to this server as `host` (127.0.0.1 or localhost) with `parameters`.
    func url(host: String = "127.0.0.1", _ parameters: String) -> String {
        "postgres://postgres@\(host):\(port)/postgres?\(parameters)"
    }

    private func pgctl(_ arguments: [String]) throws {
        guard let binaries = PostgresTestServer.binaries else { throw PostgresTestServer.ServerError(message: "no PostgreSQL") }
        if getuid() == 0 {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", binaries + "/pg_ctl"] + arguments)
        } else {
            try Self.run(binaries + "/pg_ctl", arguments)
        }
    }

    /// A CA, a server certificate it issued for DNS:localhost (not for 127.0.0.1), and a second CA that issued nothing.
    static func makeCertificates(in directory: String) throws {
        let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let openssl else { throw PostgresTestServer.ServerError(message: "openssl is not installed: it makes the test certificates") }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for ca in ["ca", "other-ca"] {
            try run(
                openssl,
                ["req", "-x509"] + ec + [
                    "-keyout", "\(directory)/\(ca).key", "-out", "\(directory)/\(ca).crt", "-days", "2", "-subj", "/CN=ReceiptDesk TLS test \(ca)",
                    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                ])
        }
        try run(openssl, ["req"] + ec + ["-keyout", "\(directory)/server.key", "-out", "\(directory)/server.csr", "-subj", "/CN=localhost"])
        try "subjectAltName = DNS:localhost\nbasicConstraints = CA:FALSE\nextendedKeyUsage = serverAuth\n".write(
            toFile: directory + "/server.ext", atomically: false, encoding: .utf8)
        try run(
            openssl,
            [
                "x509", "-req", "-in", "\(directory)/server.csr", "-CA", "\(directory)/ca.crt", "-CAkey", "\(directory)/ca.key",
                "-CAcreateserial", "-out", "\(directory)/server.crt", "-days", "2", "-extfile", "\(directory)/server.ext",
            ])
    }

    /// A TCP port nothing listens on now (the kernel's pick for port 0).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw PostgresTestServer.ServerError(message: "socket: \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw PostgresTestServer.ServerError(message: "cannot find a free port: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a command to its end, its output to a file (never a pipe: `pg_ctl start` leaves the server holding it).
    static func run(_ path: String, _ arguments: [String]) throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("rd-tls-cmd-\(getpid())-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw PostgresTestServer.ServerError(message: "cannot start \(path): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard (status & 0x7f) == 0, (status >> 8) & 0xff == 0 else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw PostgresTestServer.ServerError(message: "\(path) \(arguments.joined(separator: " ")) failed (\(status)): \(output.suffix(600))")
        }
    }
}

extension String {
    /// Appends the text to a file.
    fileprivate func appendLine(toFile path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(utf8))
    }
}

@Suite("PostgreSQL over TLS, against a server with ssl = on", .serialized, .ownThreads, .enabled(if: PostgresTestServer.enabled))
struct PostgresTLSServerTests {
    /// Whether the session the database's connection runs is encrypted, as the server sees it.
    static func encrypted(_ url: String) async throws -> Bool {
        let database = try await PostgresDatabase.connect(url: url, environment: [:])
        defer { Task { try? await database.close() } }
        let ssl = try await database.read { c in try c.scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")?.int }
        try await database.close()
        return ssl == 1
    }

    static func refused(_ url: String) async -> String? {
        do {
            let database = try await PostgresDatabase.connect(url: url, environment: [:])
            try await database.close()
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// The TCP sockets of this process connected to `port`, with their keepalive settings read back with getsockopt
    /// (found through /proc: the socket inodes of this process's descriptors, and /proc/net/tcp's connections).
    static func socketSettings(toPort port: Int) throws -> [(keepAlive: Int32, idle: Int32, interval: Int32, count: Int32, userTimeout: Int32)] {
        let table = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8).split(separator: "\n").dropFirst()
        var inodes = Set<String>()
        for line in table {
            let fields = line.split(separator: " ")
            // remote address hex IP:PORT, state 01 is ESTABLISHED, the inode is the tenth field.
            guard fields.count > 9, fields[3] == "01", let remote = fields[2].split(separator: ":").last,
                Int(remote, radix: 16) == port
            else { continue }
            inodes.insert(String(fields[9]))
        }
        var out: [(Int32, Int32, Int32, Int32, Int32)] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let fd = Int32(name), let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name),
                link.hasPrefix("socket:["), inodes.contains(String(link.dropFirst(8).dropLast()))
            else { continue }
            func option(_ level: Int32, _ option: Int32) -> Int32 {
                var value: Int32 = -1
                var size = socklen_t(MemoryLayout<Int32>.size)
                _ = getsockopt(fd, level, option, &value, &size)
                return value
            }
            let tcp = Int32(IPPROTO_TCP)
            out.append(
                (option(SOL_SOCKET, SO_KEEPALIVE), option(tcp, TCP_KEEPIDLE), option(tcp, TCP_KEEPINTVL), option(tcp, TCP_KEEPCNT),
                 option(tcp, TCP_USER_TIMEOUT)))
        }
        return out
    }

    @Test("a TCP connection probes a silent server: keepalive and the user timeout are set on its socket, as the URL says")
    func keepAliveOnTheSocket() async throws {
        let server = try TLSTestServer()
        defer { server.stop() }
        for (parameters, expected) in [
            ("sslmode=require", (Int32(1), Int32(30), Int32(10), Int32(3), Int32(60_000))),
            ("sslmode=require&keepalives_idle=7&keepalives_interval=2&keepalives_count=5&tcp_user_timeout=9000", (1, 7, 2, 5, 9000)),
        ] {
            let database = try await PostgresDatabase.connect(url: server.url(parameters), environment: [:])
            #expect(try await database.read { c in try c.scalar("SELECT 1")?.int } == 1)
            let sockets = try Self.socketSettings(toPort: server.port)
            try await database.close()
            #expect(sockets.count == 1, "\(parameters): \(sockets)")
            for socket in sockets {
                #expect(socket == expected, "\(parameters): \(socket)")
            }
        }
        let off = try await PostgresDatabase.connect(url: server.url("sslmode=require&keepalives=0"), environment: [:])
        let sockets = try Self.socketSettings(toPort: server.port)
        try await off.close()
        #expect(sockets.count == 1 && sockets.allSatisfy { $0.keepAlive == 0 }, "\(sockets)")
    }

    @Test("require encrypts; verify-ca checks the chain; verify-full the chain and the host name; disable is turned away")
    func modesAgainstAServer() async throws {
        let server = try TLSTestServer()
        defer { server.stop() }
        let ca = "sslrootcert=" + server.caFile
        let other = "sslrootcert=" + server.otherCAFile
        // Accepted, and encrypted (the server says so).
        for url in [
            server.url("sslmode=require"), server.url("sslmode=prefer"), server.url("sslmode=verify-ca&\(ca)"),
            server.url(host: "localhost", "sslmode=verify-full&\(ca)"), server.url("sslmode=require&\(ca)"),
        ] {
            #expect(try await Self.encrypted(url), "\(url)")
        }
        // Refused: no TLS where the server takes only TLS; a chain to another CA; a name the certificate does not hold.
        let disabled = await Self.refused(server.url("sslmode=disable"))
        #expect(disabled?.contains("no pg_hba.conf entry") == true, "\(disabled ?? "connected")")
        let untrusted = "the server's certificate does not chain to a trusted root"
        for (url, reason) in [
            (server.url("sslmode=verify-ca&\(other)"), untrusted), (server.url(host: "localhost", "sslmode=verify-full&\(other)"), untrusted),
            (server.url("sslmode=require&\(other)"), untrusted),
            // The certificate names localhost, not 127.0.0.1: verify-ca takes it, verify-full does not.
            (server.url("sslmode=verify-full&\(ca)"), "the server's certificate does not name the host in the URL"),
        ] {
            let failure = await Self.refused(url)
            #expect(failure != nil, "connected: \(url)")
            #expect(failure?.hasPrefix("cannot connect to the PostgreSQL ledger at postgres://postgres@") == true, "\(failure ?? "")")
            #expect(failure?.contains(reason) == true, "\(failure ?? "")")
        }
    }
}
