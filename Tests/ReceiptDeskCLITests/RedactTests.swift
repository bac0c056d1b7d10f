import Testing

@testable import ReceiptDeskCLI

@Suite("ledger URLs as printed")
struct RedactTests {
    @Test(
        "a password never shows, wherever the URL held it; a URL that does not parse shows nothing of itself",
        arguments: [
            "postgres://admin:hunter2@db.example.com/ledger", "postgresql://admin:hunter2@db.example.com:6543/ledger",
            "postgres://admin@/ledger?host=/run/postgresql&password=hunter2", "Postgres://admin:hunter2@db/ledger",
            "postgres://admin:hunter2@db:99999/ledger",
        ])
    func noPassword(url: String) {
        let printed = redact(url)
        #expect(!printed.contains("hunter2"), "\(printed)")
        #expect(printed.hasPrefix("postgres://"))
    }

    @Test("a SQLite URL prints as it is")
    func sqlite() {
        #expect(redact("sqlite:/var/lib/ledger.sqlite") == "sqlite:/var/lib/ledger.sqlite")
    }
}
