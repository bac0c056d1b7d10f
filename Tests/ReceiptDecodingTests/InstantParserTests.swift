import ReceiptDecoding
import ReceiptModel
import Testing

/// Instants as people type them: `--at`, the dashboard's `t` and `:at`.
@Suite("instants typed by people")
struct InstantParserTests {
    static let noon = Timestamp(millisecondsSince1970: 1_740_830_400_000)  // 2025-03-01T12:00:00Z

    @Test(
        "milliseconds, a date, RFC 3339, and an instant as the dashboard shows one (UTC)",
        arguments: [
            ("1740830400000", noon), ("2025-03-01", Timestamp(millisecondsSince1970: 1_740_787_200_000)),
            ("2025-03-01T12:00:00Z", noon), ("2025-03-01T13:00:00+01:00", noon), ("2025-03-01 12:00", noon),
            ("2025-03-01T12:00", noon), ("2025-03-01t12:00", noon), ("2025-03-01 12:00:05", noon.adding(milliseconds: 5_000)),
            ("2024-02-29", Timestamp(millisecondsSince1970: 1_709_164_800_000)), ("2000-02-29T00:00:00Z", Timestamp(millisecondsSince1970: 951_782_400_000)),
            ("2025-03-01T12:00:00-23:59", noon.adding(milliseconds: 86_340_000)), ("2025-04-30", Timestamp(millisecondsSince1970: 1_745_971_200_000)),
        ])
    func accepted(text: String, instant: Timestamp) {
        #expect(InstantParser.parse(text) == instant, "\(text)")
    }

    @Test(
        "what is not an instant",
        arguments: [
            "", "yesterday", "2025-03-01 12", "2025-03-01 12:00 PST", "2025-13-01 12:00", "2025/03/01 12:00", "2025-03-01 25:00",
            "2025-03-01T12:00+1", "2025-03-01 12:60", "2025-03-01x12:00", "2025-03-01 1:00Z", "2025-03-01 12:0Z",
            // Days a month does not have, and offsets no zone has (they were read as other instants).
            "2025-02-29", "2025-02-30", "2100-02-29", "2025-04-31", "2025-06-31T00:00:00Z", "2025-11-31 12:00",
            "2025-07-01T00:00:00+25:00", "2025-07-01T00:00:00-24:00", "2025-07-01T00:00:00+01:60",
        ])
    func refused(text: String) {
        #expect(InstantParser.parse(text) == nil, "\(text)")
    }

    @Test("now is the instant given, in any case; without one it is no instant")
    func now() {
        #expect(InstantParser.parse("now", now: Self.noon) == Self.noon)
        #expect(InstantParser.parse("NOW", now: Self.noon) == Self.noon)
        #expect(InstantParser.parse("2025-03-01", now: Self.noon) == InstantParser.parse("2025-03-01"))
        #expect(InstantParser.parse("now") == nil)
        #expect(InstantParser.parse("nowish", now: Self.noon) == nil)
    }

    @Test(
        "a bare integer before 1973 that as seconds falls in 2000-2099 is said, as seconds; others are not",
        arguments: [
            ("1740830400", Optional(noon)), ("946684800", Optional(Timestamp(millisecondsSince1970: 946_684_800_000))),
            ("1740830400000", nil), ("5", nil), ("-1740830400", nil), ("2025-03-01", nil), ("99999999999", nil), ("4102444800", nil),
        ])
    func secondsMisread(text: String, seconds: Timestamp?) {
        #expect(InstantParser.secondsMisread(text) == seconds, "\(text)")
    }
}
