import ArgumentParser
import DeskUI
import Entitlements
import Foundation
import Ledger
import LedgerQueries
import ReceiptDecoding
import ReceiptModel

/// `receiptdesk refunds`: the flag queue.
struct Refunds: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List refund flags: the on-call queue.",
        discussion: "Rules: \(FlagRules.ruleIds.joined(separator: ", ")). Statuses: open, acknowledged, resolved."
    )

    @Option(help: ArgumentHelp("Only flags from this recent: 24h, 7d, 30m (before --at's instant when given), or an instant as --at takes it (2025-03-01, ISO 8601, milliseconds).", valueName: "DUR"))
    var since: String?

    @Option(help: ArgumentHelp("The queue at an instant: only the flags whose refund or request came by then, by the records' own times (one imported later counts from its own time), with the status each has now (now, a date, ISO 8601 or milliseconds; a negative one as --at=-5).", valueName: "TIME"))
    var at: String?

    @Option(help: ArgumentHelp("Only this rule.", valueName: "ID"))
    var rule: String?

    @Option(help: ArgumentHelp("Only this status: open, acknowledged or resolved.", valueName: "S"))
    var status: FlagStatus?

    @Option(help: "At most this many flags (the text's default is the newest 1000; --json and --csv list every flag unless given).")
    var limit: Int?

    /// The text's list when no `--limit` is given: a screenful of pages, said to be cut. JSON and CSV are read by
    /// programs, which got the newest 1000 with exit 0 and a line on standard error only.
    static let textLimit = 1000

    @Flag(help: "One JSON object per flag.")
    var json = false

    @Flag(help: "CSV with a header line.")
    var csv = false

    @Flag(help: "Run the refund rules again and store what they find first (a write; import and triage already do).")
    var refresh = false

    @Option(help: ArgumentHelp("List the refunds, not flags, that the dashboard's bar of this UTC day counts (2025-05-17), each with the records it came from; with --at, those that stood then.", valueName: "DATE"))
    var day: String?

    @OptionGroup var data: DataOptions

    func validate() throws {
        if let rule, !FlagRules.ruleIds.contains(rule) {
            throw ValidationError("--rule takes one of \(FlagRules.ruleIds.joined(separator: ", "))")
        }
        if json && csv { throw ValidationError("choose --json or --csv, not both") }
        if let day {
            // A day, as the dashboard's chart has them (years 1 to 9999): `20250517` or `2025`, which read as
            // milliseconds in 1970, listed nothing with exit 0.
            if let meant = likelyMeant(day) { throw ValidationError("--day takes a date; \(day) would be milliseconds in 1970: \(meant)") }
            let start = try parseInstant(day, option: "--day", warn: false)
            guard start >= Timestamp.utc(year: 1, month: 1, day: 1), start < Timestamp.utc(year: 10000, month: 1, day: 1) else {
                throw ValidationError("--day takes a day of the years 1 to 9999, as the dashboard's chart has them, not \(day)")
            }
            let flagOptions = [since.map { _ in "--since" }, rule.map { _ in "--rule" }, status.map { _ in "--status" }, limit.map { _ in "--limit" }, refresh ? "--refresh" : nil]
                .compactMap { $0 }
            if !flagOptions.isEmpty {
                throw ValidationError("--day lists a day's refunds, not flags: it takes --at, --json or --csv, not \(flagOptions.joined(separator: ", "))")
            }
        }
        if let limit, limit < 1 || limit > Self.maximumLimit { throw ValidationError("--limit takes a number of flags from 1 to \(Self.maximumLimit)") }
        if let at { _ = try parseInstant(at, option: "--at", warn: false) }
        if let since, Self.duration(since) == nil && InstantParser.parse(since) == nil {
            throw ValidationError("--since takes a duration (24h, 7d, 30m) or an instant (2025-03-01, ISO 8601, milliseconds)")
        }
    }

    /// `24h`, `7d`, `30m`, `2w` in milliseconds; nil for anything else, a negative or an overflowing one.
    static func duration(_ text: String) -> Int64? {
        guard let unit = text.last, let value = Int64(text.dropLast()), value >= 0 else { return nil }
        let scale: Int64
        switch unit {
        case "m": scale = 60_000
        case "h": scale = 3_600_000
        case "d": scale = 86_400_000
        case "w": scale = 7 * 86_400_000
        default: return nil
        }
        let (milliseconds, overflow) = value.multipliedReportingOverflow(by: scale)
        return overflow ? nil : milliseconds
    }

    /// The most flags one call lists.
    static let maximumLimit = 1_000_000

    func run() async throws {
        if refresh && data.source.readOnly { throw LedgerOptions.refuse("refunds --refresh") }
        let now = currentTimestamp()
        try await data.withLedger(now: now, readsRules: true) { ledger in try await run(ledger, now: now) }
    }

    private func run(_ ledger: SQLLedger, now: Timestamp) async throws {
        if let day { return try await listDay(day, ledger, now: now) }
        let rules = try data.loadRules()
        if refresh { try await ledger.refuseUnlessRoleMay(.refreshingFlags) }
        let until = try at.map { try parseInstant($0, option: "--at", now: now) }
        // The whole ledger's outcomes now (a refund reversed since is reversed, not refunded, whatever --at says); the
        // consumption requests awaiting data those at the instant the list is of: --at's, or now.
        var outcomes: RefundOutcomes
        if refresh {
            outcomes = try await ledger.refreshFlags(rules: rules, now: now).outcomes
        } else {
            outcomes = try await ledger.refundOutcomes(rules: rules, now: now)
        }
        if let until { outcomes.pendingConsumptionRequests = try await ledger.pendingConsumptionRequests(at: until) }
        // (An instant as `--at` takes it, a bare number's likelier meaning said: `--since 20250601` was 1970. A duration
        // counts back from the instant answered for: --at's, or now.)
        let from = try since.map { text in
            try Self.duration(text).map { (until ?? now).adding(milliseconds: -$0) } ?? parseInstant(text, option: "--since", now: now)
        }
        let query = FlagQuery(status: status, rule: rule, since: from, until: until)
        let output = Output()
        var listed = 0
        let write: ([RefundFlag]) -> Void
        if json {
            var w = JSONWriter()
            write = { flags in
                for flag in flags {
                    w.reset()
                    w.flag(flag, full: true)
                    w.newline()
                    output.write(w.bytes)
                }
            }
        } else if csv {
            // The dashboard's export's columns and units (the amount in its currency's units, not milliunits).
            output.line(flagCSVHeader.joined(separator: ","))
            write = { flags in
                for f in flags { output.line(flagCSVRow(f).map(csvCell).joined(separator: ",")) }
            }
        } else {
            // The ledger's outcomes whatever the filters (they choose flags); said so, or it reads as the list's.
            output.line("refunds in the whole ledger: \(outcomes.refunded) refunded, \(outcomes.declined) declined, \(outcomes.reversed) reversed, \(outcomes.pendingConsumptionRequests) consumption requests awaiting data\(until.map { " at \($0.iso8601)" } ?? "")")
            if let until { output.line("the queue at \(until.iso8601): the flags whose refund or request came by then (by the records' times, whenever imported), each with its status now") }
            write = { flags in
                for f in flags {
                    output.line("\(f.at.iso8601)  \(f.severity.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(f.status.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)) \(safe(f.id))")
                    output.line("    \(safe(f.detail))\(consumptionDue(f, at: until ?? now))\(f.customerId.map { "  customer C\($0)" } ?? "")")
                }
            }
        }
        // A page at a time, each written before the next is read: a list of a million flags is never held whole.
        let more: Bool
        let limit = limit ?? (json || csv ? nil : Self.textLimit)
        do {
            more = try await ledger.forEachFlagPage(query, limit: limit) { page in
                listed += page.count
                write(page)
                // (Output that cannot be written stops the reading: the rest would be lost too.)
                try output.check()
            }
        } catch {
            // (What was written is kept, and said to be the start of the list only, before the error is; an output
            // that failed is that error.)
            try output.finish()
            if listed > 0 {
                FileHandle.standardError.write(Data("receiptdesk: the list stops after \(listed) flags: the ledger failed reading the next page\n".utf8))
            }
            throw error
        }
        let cut = more ? "showing the newest \(limit ?? listed) flags; more match (--limit raises it)" : nil
        if !json && !csv {
            // The options given, named as given ("no flags match --since 7d", not every filter the command has).
            let given = [
                since.map { "--since \(safe($0))" }, at.map { "--at \(safe($0))" }, status.map { "--status \($0.rawValue)" },
                rule.map { "--rule \(safe($0))" },
            ].compactMap { $0 }
            if listed == 0 { output.line(given.isEmpty ? "no flags" : "no flags match \(given.joined(separator: " "))") }
            if let cut { output.line(cut) }
        }
        try output.finish()
        // JSON and CSV stay data only; the notice goes to standard error.
        if let cut, json || csv { FileHandle.standardError.write(Data("receiptdesk: \(cut)\n".utf8)) }
    }
}

extension Refunds {
    /// The columns of `--day --csv`.
    static let dayCSVHeader = ["transactionId", "productId", "environment", "price", "currency", "refunded", "refundedAt", "sources"]

    /// `--day`: the refunds a day's bar of the dashboard counts (those that stand now, or those by `--at` that stood
    /// then), oldest first, each with the records it came from: a figure of the Overview down to its records, for a
    /// script too.
    private func listDay(_ text: String, _ ledger: SQLLedger, now: Timestamp) async throws {
        let start = try parseInstant(text, option: "--day", now: now).startOfUTCDay
        // Without --at, as the dashboard's live bar: to the end of today (a refund dated later today is in it), and
        // those that stand then (a refund reversed since is not among them).
        let until = try at.map { try parseInstant($0, option: "--at", now: now) } ?? now.endOfUTCDay
        let refunds = try await ledger.refunds(onDayOf: start, until: until, environment: .all, limit: Self.maximumLimit)
        let output = Output()
        func share(_ r: DayRefund) -> String { r.share < 100_000 ? FlagEvaluation.percent(r.share) : "100%" }
        if json {
            var w = JSONWriter()
            for r in refunds {
                w.reset()
                w.beginObject()
                w.string("transactionId", r.transactionId)
                w.string("productId", r.productId)
                w.string("environment", r.environment)
                w.int("price", r.price)
                w.string("currency", r.currency)
                w.int("refundedShare", r.share)
                w.int("refundedAt", r.refundedAt.millisecondsSince1970)
                w.beginArray("sources")
                for source in r.sources { w.string(nil, source.description) }
                w.endArray()
                w.endObject()
                w.newline()
                output.write(w.bytes)
            }
        } else if csv {
            output.line(Self.dayCSVHeader.joined(separator: ","))
            for r in refunds {
                let cells = [
                    r.transactionId, r.productId ?? "", r.environment ?? "", r.price.map { Money.format($0, currency: r.currency) } ?? "",
                    r.currency ?? "", share(r), r.refundedAt.iso8601, r.sources.map(\.description).joined(separator: "; "),
                ]
                output.line(cells.map(csvCell).joined(separator: ","))
            }
        } else {
            let asOf = at == nil ? "" : " as of \(until.iso8601)"
            output.line("refunds on \(start.iso8601.prefix(10)) (UTC)\(asOf): \(refunds.count), as the dashboard's bar counts them")
            for r in refunds {
                let price = r.price.map { Money.withCurrency($0, currency: r.currency) } ?? "-"
                let refunded = r.share < 100_000 ? " (\(share(r)) refunded)" : ""
                output.line(safe("\(r.refundedAt.iso8601)  \(r.transactionId)  \(r.productId ?? "-")  \(r.environment ?? "-")  \(price)\(refunded)"))
                output.line(safe("    from \(r.sources.map(\.description).joined(separator: ", "))"))
            }
        }
        try output.finish()
    }
}

extension FlagStatus: ExpressibleByArgument {}
