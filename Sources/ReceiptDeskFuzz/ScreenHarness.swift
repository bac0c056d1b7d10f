import DeskUI
import Entitlements
import LedgerQueries
import ReceiptModel

/// The dashboard drawing data that comes from the input, on every screen, at a size the input chooses: the
/// promise is that no control character, escape or bidi override from data reaches the screen (DESIGN
/// section 8), and that no text, size or instant makes drawing trap.
///
/// The input: a width byte (20 + its value mod 221 columns: 0x3C is 80), a height byte (8 + its value mod 63
/// rows: 0x10 is 24; below 60x16 the dashboard only says the terminal is too small), a flags byte (bit 0 the
/// demo badge, bit 1 an instant from the input, bit 2 ASCII lines, bits 3 up the screen), then up to eight
/// fields separated by NUL bytes: a product id, a detail or reason, a customer identifier, a source path, a
/// rejection message, a transaction id, a `/` filter, and a rejected record's raw bytes. A missing field is
/// empty, but for the raw bytes: without them the whole input is the rejected record. The instant from the
/// input is its bytes 3 to 10 read as a big-endian Int64 (the start of the first field too).
enum ScreenHarness {
    static func run(_ bytes: [UInt8]) {
        guard bytes.count >= 3 else { return }
        let width = 20 + Int(bytes[0]) % 221
        let height = 8 + Int(bytes[1]) % 63
        let flags = bytes[2]
        let parts = bytes.dropFirst(3).split(separator: 0, maxSplits: 7, omittingEmptySubsequences: false)
        func field(_ index: Int) -> String { index < parts.count ? String(decoding: parts[index], as: UTF8.self) : "" }
        let product = field(0), detail = field(1), identifier = field(2), path = field(3)
        let message = field(4), transactionId = field(5), filter = field(6)
        let raw = parts.count > 7 ? Array(parts[7]) : Array(bytes)

        let now = Timestamp(millisecondsSince1970: 1_751_328_000_000)
        // An instant from the input when asked (any Int64, the ends included), else one near "now".
        let wild = bytes.count >= 11 && flags & 2 != 0
            ? Timestamp(millisecondsSince1970: bytes[3..<11].reduce(Int64(0)) { $0 << 8 | Int64($1) })
            : now.adding(milliseconds: -86_400_000)

        var state = AppState(
            width: width, height: height, now: now, isDemo: flags & 1 != 0, ledgerName: path, operatorName: identifier,
            ascii: flags & 4 != 0)
        let flag = RefundFlag(
            id: "rule:" + transactionId, rule: product, severity: .high, customerId: 7, transactionId: transactionId, productId: product,
            amount: 1990, currency: identifier, at: wild, detail: detail)
        state.overview = OverviewData(
            counts: LedgerOverview(transactions: 3, customers: 1, sources: 1, rawRecords: 3, rejectedRecords: 1, lastImport: wild),
            refunds90: RefundSeries(firstDay: wild, counts: raw.prefix(90).map { Int($0) }),
            flagCounts: [FlagCount(severity: .high, status: .open, count: 1)], spikes: [flag], consumptionRequests: [flag])
        state.customerPage = CustomerPage(
            rows: [
                CustomerSummary(
                    id: 7, identifiers: [CustomerIdentifier(kind: .external, value: identifier)], lastPurchase: wild, latestExpiry: wild,
                    liveExpiry: raw.count % 2 == 0 ? wild : nil)
            ],
            next: nil, total: 1)
        state.flags = [flag]
        state.flagFilter = filter.isEmpty ? nil : filter
        // Read by the ledger under it (the read filter's title and empty-list text), or typed over the loaded flags.
        if raw.count % 2 == 0 { state.flagsReadFilter = state.flagFilter }
        state.sources = [
            SourceSummary(id: 1, path: path, sha256: detail, size: Int64(raw.count), startedAt: wild, completedAt: wild, counts: ImportCounts(read: 1))
        ]
        state.rejected = [
            RejectedRecord(id: 1, sourcePath: path, index: 0, offset: 0, kind: product, code: transactionId, message: message, size: raw.count)
        ]

        var bought = Transaction(transactionId: transactionId)
        bought.productId = product
        bought.originalTransactionId = transactionId
        bought.subscriptionGroupIdentifier = identifier
        bought.purchaseDate = wild
        bought.expiresDate = now.adding(milliseconds: 86_400_000)
        bought.type = .autoRenewableSubscription
        var refunded = bought
        refunded.transactionId = transactionId + "-2"
        refunded.revocationDate = wild
        refunded.revocationReason = .appIssue
        // An expiry at the far side of time from the wild instant (the grace end below): their distance may not fit.
        refunded.expiresDate = Timestamp(millisecondsSince1970: ~wild.millisecondsSince1970)
        refunded.sources = [Provenance(path: path, index: 1, location: detail)]
        refunded.storefront = message
        refunded.appAccountToken = identifier
        // Renewal info: billing failed, grace until the wild instant, renewing to the product from the input.
        var renewal = RenewalInfo()
        renewal.originalTransactionId = transactionId
        renewal.productId = product
        renewal.autoRenewProductId = filter
        renewal.isInBillingRetryPeriod = true
        renewal.gracePeriodExpiresDate = wild
        renewal.offerIdentifier = detail
        let records = CustomerRecords(
            id: 7, identifiers: [CustomerIdentifier(kind: .external, value: identifier)], transactions: [bought, refunded],
            firstSeen: [bought.transactionId: wild], renewalInfos: [(info: renewal, seenAt: wild)], notifications: [])
        // A note an agent left, in the operator's name, both from the input.
        let note = TriageEntry(
            flagId: nil, customerId: 7, at: wild, operatorName: path, action: .note, note: message, fromStatus: nil, toStatus: nil)
        // The flag's last triage, the same words: on the queue's selected line and column, and the customer's flags pane.
        let triage = TriageEntry(
            flagId: flag.id, customerId: nil, at: wild, operatorName: path, action: .resolve, note: message, fromStatus: .open,
            toStatus: .resolved)
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: records, flags: [flag], log: [note, triage])))
        _ = reduce(&state, .flagTriageLoaded([flag.id: triage]))
        // The Customers list's access cell as the engine judged the customer (its wild dates), or by the list's figures.
        if raw.count % 3 != 0, let view = state.customerView {
            _ = reduce(
                &state,
                .customerAccessLoaded([7: ListedAccess(view.entitlements, instant: state.instant, generation: state.customerAccessGeneration)]))
        }
        _ = reduce(&state, .transactionLoaded(refunded, id: refunded.transactionId))

        // One screen per input (the flags byte chooses it), so that an input runs in milliseconds under ASan.
        var buffer = ScreenBuffer(width: 0, height: 0)
        let screens: [ScreenID] = [.overview, .customers, .customer, .transaction, .refunds, .imports]
        let choice = Int(flags >> 3) % (screens.count + 1)
        if choice < screens.count {
            state.screen = screens[choice]
            draw(state, &buffer)
            // The selection moved to the end, and the next pane (on a customer, also the flags pane after it).
            _ = reduce(&state, .key(.char("G")))
            _ = reduce(&state, .key(.tab))
            draw(state, &buffer)
            if state.screen == .customer {
                _ = reduce(&state, .key(.tab))
                draw(state, &buffer)
            }
            if state.screen == .overview {
                // A day of the chart chosen and its refunds listed, their words and amounts from the input; then the
                // overview read again with its series a day on, and a narrower terminal.
                _ = reduce(&state, .key(.char("h")))
                _ = reduce(&state, .key(.enter))
                if let day = state.dayRefunds?.day {
                    let refund = DayRefund(
                        transactionId: transactionId, productId: product, environment: identifier, price: Int64(raw.count) * 1000,
                        currency: identifier, refundedAt: wild, share: Int64(raw.first ?? 0) * 1000)
                    _ = reduce(&state, .dayRefundsLoaded(day: day, [refund, refund]))
                    draw(state, &buffer)
                    if var moved = state.overview {
                        moved.refunds90.firstDay = moved.refunds90.firstDay.adding(milliseconds: 86_400_000)
                        _ = reduce(&state, .overviewLoaded(moved))
                    }
                    _ = reduce(&state, .resize(width: max(20, width - 40), height: height))
                    draw(state, &buffer)
                }
            }
        } else {
            // The rejected record's raw view, scrolled to its end, then at another size.
            state.screen = .imports
            _ = reduce(&state, .rawLoaded(id: 1, bytes: raw))
            draw(state, &buffer)
            _ = reduce(&state, .key(.char("G")))
            _ = reduce(&state, .resize(width: height + 12, height: max(8, width / 3)))
            draw(state, &buffer)
        }
    }

    /// Renders, and traps when a drawn cell holds a character that would move the cursor, change colours or
    /// reorder the line.
    private static func draw(_ state: AppState, _ buffer: inout ScreenBuffer) {
        render(state, theme: .builtin, into: &buffer)
        for y in 0..<buffer.height {
            for scalar in buffer.line(y).unicodeScalars where isControl(scalar.value) {
                fatalError("U+\(String(scalar.value, radix: 16)) from data reached row \(y) of \(state.screen)")
            }
        }
    }

    private static func isControl(_ value: UInt32) -> Bool {
        switch value {
        case 0x00..<0x20, 0x7F..<0xA0, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFFF9...0xFFFB: true
        default: false
        }
    }
}
