import Foundation
import Ledger
@testable import LedgerPostgres
import Testing

/// A password need not be in the `postgres://` URL (where `ps` shows it): `PGPASSWORD` or a libpq password
/// file give it, and no form of the URL a person sees ever holds it.
@Suite("PostgreSQL credentials: PGPASSWORD and the password file", .ownThreads)
struct PostgresCredentialsTests {
    static func passwordFile(_ text: String, mode: mode_t = 0o600) throws -> String {
        let path = testScratchDirectory.appendingPathComponent("rd-pgpass-\(UUID().uuidString)").path
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    @Test("a password file's lines match host, port, database and user, with * and escapes; the first match wins")
    func passwordFileMatching() {
        let file = PasswordFile(
            """
            # a comment line
            db.example:5432:ledger:ana:first
            db.example:5432:ledger:ana:second
            *:*:*:bob:pa\\:ss\\\\word
            localhost:6543:*:*:socket
            short:line
            """)
        #expect(file.password(host: "db.example", port: 5432, database: "ledger", user: "ana") == "first")
        #expect(file.password(host: "db.example", port: 5433, database: "ledger", user: "ana") == nil)
        #expect(file.password(host: "anywhere", port: 1, database: "x", user: "bob") == "pa:ss\\word")
        #expect(file.password(host: "localhost", port: 6543, database: "d", user: "eve") == "socket")
        #expect(file.password(host: "short", port: 5432, database: "line", user: "x") == nil)
    }

    @Test("the URL's password wins, then PGPASSWORD, then the password file (only when no one else can read it)")
    func passwordOrder() throws {
        let file = try Self.passwordFile("db.example:5432:ledger:ana:from-file\n")
        let open = try Self.passwordFile("db.example:5432:ledger:ana:from-open-file\n", mode: 0o644)
        let url = "postgres://ana@db.example/ledger"
        #expect(try PostgresURL("postgres://ana:in-url@db.example/ledger", environment: ["PGPASSWORD": "env"]).password == "in-url")
        #expect(try PostgresURL(url, environment: ["PGPASSWORD": "env", "PGPASSFILE": file]).password == "env")
        #expect(try PostgresURL(url, environment: ["PGPASSFILE": file]).password == "from-file")
        #expect(try PostgresURL(url, environment: ["PGPASSFILE": open]).password == nil)
        // libpq's password and passfile parameters: the password parameter is the URL's own (printed as ***), over
        // the user part's as the query's user, port and dbname are; the passfile parameter before PGPASSFILE.
        let given = try PostgresURL(url + "?password=p%40ram", environment: ["PGPASSWORD": "env"])
        #expect(given.password == "p@ram")
        #expect(given.redacted == "postgres://ana:***@db.example:5432/ledger")
        #expect(try PostgresURL("postgres://ana:in-url@db.example/ledger?password=param", environment: [:]).password == "param")
        #expect(try PostgresURL(url + "?passfile=" + file, environment: ["PGPASSFILE": open]).password == "from-file")
        // An empty password parameter is none: PGPASSWORD still counts.
        #expect(try PostgresURL(url + "?password=", environment: ["PGPASSWORD": "env"]).password == "env")
        #expect(try PostgresURL(url + "?passfile=" + open, environment: ["PGPASSFILE": file]).password == nil)
        #expect(try PostgresURL(url, environment: [:]).password == nil)
        // An empty PGPASSFILE is no file: ~/.pgpass is read. A socket or no host matches "localhost".
        let socketFile = try Self.passwordFile("localhost:5432:ledger:ana:via-localhost\n")
        #expect(try PostgresURL("postgres://ana@/ledger?host=/run/pg", environment: ["PGPASSFILE": socketFile]).password == "via-localhost")
        #expect(try PostgresURL("postgres://ana@/ledger", environment: ["PGPASSFILE": socketFile]).password == "via-localhost")
        #expect(try PostgresURL(url, environment: ["PGPASSFILE": socketFile]).password == nil)
        let home = testScratchDirectory.appendingPathComponent("rd-home-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: file, toPath: home + "/.pgpass")
        #expect(try PostgresURL(url, environment: ["HOME": home]).password == "from-file")
        // Whatever gave the password, the printable form never holds it.
        for environment in [["PGPASSWORD": "env"], ["HOME": home]] {
            let redacted = try PostgresURL(url, environment: environment).redacted
            #expect(redacted == "postgres://ana@db.example:5432/ledger")
        }
        #expect(try PostgresURL("postgres://ana:in-url@db.example/ledger").redacted == "postgres://ana:***@db.example:5432/ledger")
    }

    @Test("a server that asks for a password accepts PGPASSWORD or the password file, and refuses without one", .enabled(if: PostgresTestServer.enabled))
    func realServer() async throws {
        let server = try PostgresTestServer.get()
        let role = "pw_\(UInt32.random(in: 0...UInt32.max))"
        try server.createPasswordRole(role, password: "s3cret-word")
        let url = "postgres://\(role)@/postgres?host=\(server.socketDirectory)"
        do {
            let refused = try await PostgresDatabase.connect(url: url, environment: [:])
            try await refused.close()
            Issue.record("connected without a password")
        } catch let error as LedgerError {
            #expect(error.code == .cannotOpen)
            #expect(!error.message.contains("s3cret"))
            #expect(error.message.contains("the server asks this role for a password and none was given"), "\(error.message)")
        }
        // A password file others may read is not read (as libpq does), and the refusal says so.
        let open = try Self.passwordFile("localhost:5432:postgres:\(role):s3cret-word\n", mode: 0o644)
        do {
            let refused = try await PostgresDatabase.connect(url: url, environment: ["PGPASSFILE": open])
            try await refused.close()
            Issue.record("read a password file others may read")
        } catch let error as LedgerError {
            #expect(error.message.contains("the password file \(open) was not read: others may read it (chmod 600"), "\(error.message)")
        }
        let viaEnvironment = try await PostgresDatabase.connect(url: url, environment: ["PGPASSWORD": "s3cret-word"])
        try await viaEnvironment.close()
        let file = try Self.passwordFile("localhost:5432:postgres:\(role):s3cret-word\n")
        let viaFile = try await PostgresDatabase.connect(url: url, environment: ["PGPASSFILE": file])
        try await viaFile.close()
        do {
            let wrong = try await PostgresDatabase.connect(url: url, environment: ["PGPASSWORD": "Xq7-not-it"])
            try await wrong.close()
            Issue.record("connected with a wrong password")
        } catch let error as LedgerError {
            #expect(error.code == .cannotOpen)
            #expect(!error.message.contains("Xq7-not-it"), "\(error.message)")
        }
    }
}
