import ArgumentParser
import DeskUI
import Entitlements
import Foundation
import Ledger
import ReceiptDecoding
import ReceiptModel

/// `receiptdesk lookup ID`: who the customer is, what they have at an instant, what happened, which flags.
struct Lookup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Look up a customer by any id: entitlements, timeline and refund flags.",
        discussion: """
            ID is an external account id, appAccountToken, transactionId, originalTransactionId, \
            webOrderLineItemId or a customer id (C12). --at answers for another instant ("what did they have \
            on the day they complained"). Exits 1 when nothing matches.
            """
    )

    @Argument(help: ArgumentHelp("Any id the customer gave.", valueName: "id"))
    var given: String?

    /// The id to look up (``validate()`` makes sure there is one).
    private var id: String { given ?? "" }

    @Option(help: ArgumentHelp("The instant to answer for: now, ISO 8601 or milliseconds (default: now; a negative one as --at=-5).", valueName: "TIME"))
    var at: String?

    @Flag(help: "Print one JSON object (DESIGN section 12).")
    var json = false

    @OptionGroup var data: DataOptions

    mutating func validate() throws {
        if let at { _ = try parseInstant(at, option: "--at", warn: false) }
        // `--files` takes every word after it, so `lookup --files DIR ID` gave the id to it: a last "path" that is no
        // file is the id.
        if given == nil, let last = data.source.files.last, data.source.files.count > 1, !FileManager.default.fileExists(atPath: last) {
            given = data.source.files.removeLast()
        }
        guard let given else {
            throw ValidationError("give the id to look up: receiptdesk lookup ID [--files PATH...] (--files takes every word after it)")
        }
        // (An empty id is no search that found no one: it was exit 1, "no customer matches ".)
        if given.allSatisfy(\.isWhitespace) { throw ValidationError("the id to look up is empty: receiptdesk lookup ID") }
    }

    func run() async throws {
        let now = currentTimestamp()
        // (The catalog read first: a wrong one was said after --files had all been read into a ledger.)
        let catalog = try data.loadCatalog()
        try await data.withLedger(now: now) { ledger in try await run(ledger, catalog: catalog, now: now) }
    }

    private func run(_ ledger: SQLLedger, catalog: Catalog, now: Timestamp) async throws {
        let instant = try at.map { try parseInstant($0, option: "--at", now: now) } ?? now
        let customer = try await Self.customer(pasted: id, in: ledger).customer
        let records = try await ledger.customerRecords(customer)
        let history = records.history
        let entitlements = history.entitlements(at: instant, catalog: catalog)
        let timeline = history.timeline(upTo: instant, catalog: catalog)
        // Every flag of the customer, page by page: none is left out.
        var flags: [RefundFlag] = []
        _ = try await ledger.forEachFlagPage(FlagQuery(customerId: records.id), pageSize: 500) { flags += $0 }
        // Only the flags raised by the instant (their status stays the ledger's now, as the dashboard's): a lookup
        // --at the day of the purchase listed the refund flags of a month later. The text counts those left out.
        let raisedAfter = flags.filter { $0.at > instant }.count
        flags.removeAll { $0.at > instant }
        let notes = try await ledger.triageLog(flagId: nil, customerId: records.id).filter { $0.action == .note }
        let output = Output()
        if json {
            var w = JSONWriter()
            w.beginObject()
            w.beginObject("customer")
            w.string("id", "C\(records.id)")
            w.beginArray("identifiers")
            for identifier in records.identifiers {
                w.beginObject()
                w.string("kind", identifier.kind.rawValue)
                w.string("value", identifier.value)
                w.endObject()
            }
            w.endArray()
            w.endObject()
            w.int("at", instant.millisecondsSince1970)
            w.facts(history.facts(at: instant), records: records.transactionCount(at: instant))
            w.beginArray("entitlements")
            for e in entitlements { w.entitlement(e) }
            w.endArray()
            w.beginArray("timeline")
            for event in timeline { w.event(event) }
            w.endArray()
            w.beginArray("flags")
            for flag in flags { w.flag(flag, full: false) }
            w.endArray()
            // How many of the customer's flags were raised after the instant, left out of `flags` (the text says so too).
            w.int("flagsRaisedAfter", raisedAfter)
            w.beginArray("notes")
            for note in notes {
                w.beginObject()
                w.int("at", note.at.millisecondsSince1970)
                w.string("operator", note.operatorName)
                w.string("note", note.note)
                w.endObject()
            }
            w.endArray()
            w.endObject()
            w.newline()
            output.write(w.bytes)
        } else {
            output.line("customer C\(records.id)  at \(instant.iso8601)")
            for identifier in records.identifiers { output.line("  \(identifier.kind)  \(safe(identifier.value))") }
            let facts = history.facts(at: instant)
            let spend = facts.netSpend.sorted { $0.key < $1.key }.map { "\(Money.format($0.value, currency: $0.key)) \(safe($0.key))" }.joined(separator: ", ")
            output.line("  first seen \(facts.firstSeen?.iso8601 ?? "-")  environments \(facts.environments.joined(separator: ", "))")
            // (A purchase a family member shared is the purchaser's spend: counted, not summed.)
            let shared = facts.sharedCount > 0 ? " (\(facts.sharedCount) shared by family, not theirs)" : ""
            let net = spend.isEmpty ? (facts.unpricedCount == 0 && (facts.sharedCount > 0 || facts.transactionCount == 0) ? "none" : "unknown (no prices)") : spend
            // Restores give a period another transaction id: the records and the purchases they are, when they differ.
            let listed = records.transactionCount(at: instant)
            let purchases = listed > facts.transactionCount ? " (\(facts.transactionCount) \(facts.transactionCount == 1 ? "purchase" : "purchases"))" : ""
            output.line(
                "  \(listed) \(listed == 1 ? "transaction" : "transactions")\(purchases), \(facts.refundCount) refunded, net spend \(net)\(shared)")
            // Those no signature vouched for, said (the JSON has each one's verification; the text said nothing of it).
            let bought = records.transactions.filter { CustomerRecords.bought($0, by: instant) }
            let unchecked = [
                (bought.count { $0.verification == .skipped }, "not verified (imported with --no-verify)"),
                (bought.count { $0.verification == .unsigned }, "unsigned (Xcode or local-testing data)"),
            ].filter { $0.0 > 0 }
            if !unchecked.isEmpty {
                output.line("  of them " + unchecked.map { "\($0.0) \($0.1)" }.joined(separator: ", "))
            }
            output.line("")
            output.line("entitlements")
            // Names are cut to their column on a terminal only: piped or redirected, the text is read by programs
            // and searched, and a cut name ("…utcallalert.inapp.pro") matched nothing.
            let terminal = isatty(STDOUT_FILENO) == 1
            for e in entitlements {
                // A name too long for its 22 columns keeps its end when dotted (three products of one app read
                // "com.ideasoncanvas.mind" alike), else its start.
                let name = safe(e.name)
                let shown = !terminal || name.count <= 22 ? name : name.contains(".") ? "…" + name.suffix(21) : name.prefix(21) + "…"
                let column = shown.count < 22 ? shown.padding(toLength: 22, withPad: " ", startingAt: 0) : shown
                var line = "  \(column) \(e.state.label.padding(toLength: 14, withPad: " ", startingAt: 0)) \(safe(e.productId ?? "-"))"
                if let renewal = e.renewalWords { line += "  " + renewal }
                output.line(line)
                output.line("      \(safe(e.reason))\(e.transactionId.map { "  [transaction \(safe($0))]" } ?? "")")
            }
            output.line("")
            output.line("timeline")
            // The instants padded to one width: one with milliseconds ("...36.569Z") shifted its line's columns.
            let atWidth = timeline.map(\.at.iso8601.count).max() ?? 0
            for event in timeline {
                let at = event.at.iso8601.padding(toLength: atWidth, withPad: " ", startingAt: 0)
                var line = "  \(at)  \(event.kind.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)) \(safe(event.productId ?? "-"))  \(safe(event.detail))"
                if event.learnedLate { line += "  (learned \(event.seenAt.iso8601))" }
                output.line(line)
            }
            output.line("")
            // The agents' notes, a section of their own (under "flags", after its "none", they read as flags), every
            // one whatever the instant: one written after it says so, as the timeline says what was learned late.
            if !notes.isEmpty {
                output.line("notes")
                for note in notes {
                    let after = note.at > instant ? "  (written after \(instant.iso8601))" : ""
                    output.line("  \(note.at.iso8601) \(safe(note.operatorName)): \(safe(note.note ?? ""))\(after)")
                }
                output.line("")
            }
            output.line("flags")
            if flags.isEmpty { output.line("  none") }
            for flag in flags {
                output.line("  \(flag.status.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)) \(flag.severity.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(safe(flag.id))  \(safe(flag.detail))\(consumptionDue(flag, at: instant))")
            }
            if raisedAfter > 0 { output.line("  (\(raisedAfter) more raised after \(instant.iso8601), not shown)") }
        }
        try output.finish()
    }
}

extension Lookup {
    /// The customer a pasted id names (`lookup` and `note` alike), or `notFound`. How it was found, when not as given
    /// (the punctuation around a pasted id taken off, a display id merged into another, an id that names others too),
    /// is said on standard error: the output stays data. A write (`single`) refuses a text that names more than one
    /// customer rather than choose one.
    static func customer(pasted id: String, in ledger: SQLLedger, single: Bool = false) async throws -> PastedMatch {
        guard let found = try await ledger.customerId(pasted: id) else {
            throw CLIError.notFound("no customer matches \(safe(id))")
        }
        if single, !found.others.isEmpty {
            let all = ["C\(found.customer) (by \(found.matched))"] + found.others.map { "C\($0.customer) (by \($0.id))" }
            throw CLIError.usage("\(safe(id)) names \(all.count) customers, \(safe(all.joined(separator: ", "))): give one id (nothing was written)")
        }
        if found.matched != id.trimmingCharacters(in: .whitespacesAndNewlines) {
            FileHandle.standardError.write(Data("receiptdesk: no id is \(safe(id)) as given; found by \(safe(found.matched))\n".utf8))
        }
        if let merged = found.mergedSaid { FileHandle.standardError.write(Data("receiptdesk: \(merged)\n".utf8)) }
        if let others = found.othersSaid {
            FileHandle.standardError.write(Data("receiptdesk: \(safe(others)); this is C\(found.customer), by \(safe(found.matched))\n".utf8))
        }
        return found
    }

}

extension JSONWriter {
    /// The customer's figures; `transactions` counts the records, as the text and the dashboard do, and `purchases`
    /// what they are once a restore's second id for a period is told apart (it was `transactions`, unlike the text).
    mutating func facts(_ facts: CustomerFacts, records: Int) {
        beginObject("summary")
        beginObject("netSpend")
        for (currency, amount) in facts.netSpend.sorted(by: { $0.key < $1.key }) { int(currency, amount) }
        endObject()
        beginObject("refunded")
        for (currency, amount) in facts.refunded.sorted(by: { $0.key < $1.key }) { int(currency, amount) }
        endObject()
        int("firstSeen", facts.firstSeen?.millisecondsSince1970)
        beginArray("environments")
        for environment in facts.environments { string(nil, environment) }
        endArray()
        int("transactions", records)
        int("purchases", facts.transactionCount)
        int("refunds", facts.refundCount)
        endObject()
    }

    mutating func entitlement(_ e: Entitlement) {
        beginObject()
        string("name", e.name)
        string("state", e.state.rawValue)
        string("productId", e.productId)
        int("expiresDate", e.expiresDate?.millisecondsSince1970)
        bool("willRenew", e.willRenew)
        string("transactionId", e.transactionId)
        string("autoRenewProductId", e.autoRenewProductId)
        int("expirationIntent", e.expirationIntent?.rawValue)
        int("gracePeriodExpiresDate", e.gracePeriodExpiresDate?.millisecondsSince1970)
        int("revocationDate", e.revocationDate?.millisecondsSince1970)
        int("revocationReason", e.revocationReason?.rawValue)
        string("revocationType", e.revocationType?.rawValue)
        string("reason", e.reason)
        endObject()
    }

    mutating func event(_ event: TimelineEvent) {
        beginObject()
        int("at", event.at.millisecondsSince1970)
        int("seenAt", event.seenAt.millisecondsSince1970)
        string("kind", event.kind.rawValue)
        string("productId", event.productId)
        string("transactionId", event.transactionId)
        string("detail", event.detail)
        endObject()
    }

    mutating func flag(_ flag: RefundFlag, full: Bool) {
        beginObject()
        string("id", flag.id)
        string("rule", flag.rule)
        string("severity", flag.severity.rawValue)
        string("status", flag.status.rawValue)
        string("transactionId", flag.transactionId)
        if full {
            string("customerId", flag.customerId.map { "C\($0)" })
            string("environment", flag.environment?.rawValue)
            string("productId", flag.productId)
            int("amount", flag.amount)
            string("currency", flag.currency)
            int("at", flag.at.millisecondsSince1970)
            string("detail", flag.detail)
        }
        endObject()
    }
}
