import Foundation
import Ledger
@testable import LedgerPostgres
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
            sslMode = url.sslMode
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
        ])
    func fields(url: String, expected: Parsed) throws {
        #expect(Parsed(try PostgresURL(url, environment: Self.bare)) == expected)
    }

    @Test(
        "what is not a postgres:// URL is refused as cannotOpen, without echoing it",
        arguments: ["mysql://bo:secret@db/x", "sqlite:/tmp/ledger.sqlite", "postgres//bo:secret@db/x", "", "http://bo:secret@db/x"])
    func refused(url: String) {
        #expect {
            _ = try PostgresURL(url, environment: Self.bare)
        } throws: { error in
            guard let error = error as? LedgerError else { return false }
            return error.code == "cannotOpen" && !error.message.contains("secret")
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
            return error.code == "cannotOpen" && error.message.hasPrefix("the \(part) in the postgres:// URL ")
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
            return error.code == "cannotOpen" && !error.message.contains("s3c")
        }
    }
}
