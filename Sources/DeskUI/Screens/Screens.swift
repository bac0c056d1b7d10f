import Entitlements
import LedgerQueries
import ReceiptModel

typealias Body = (y: Int, height: Int)

/// What a screen with nothing to show says while the ledger cannot be reached or a slow read of it is on its way,
/// rather than that the ledger holds nothing (a screen read before keeps its rows).
func notLoaded(_ state: AppState) -> String? {
    if state.unavailable != nil { return "the ledger is unavailable: this screen is read again when it answers" }
    if state.reading { return "reading the ledger…" }
    // (Not "no flags" or "nothing imported yet" under a read that timed out: the ledger was never asked.)
    return state.readFailed.map { "not read: \($0)" }
}

/// Whether a list shows nothing because it was not read (the ledger went away first): its title then gives no count,
/// which would read as none.
func notRead(_ state: AppState, empty: Bool) -> Bool { empty && notLoaded(state) != nil }

// MARK: Overview

func drawOverview(_ state: AppState, _ p: inout Painter, _ body: Body) {
    guard let data = state.overview else {
        _ = p.text(notLoaded(state) ?? "loading the overview…", x: 1, y: body.y + 1, role: "ui.text.muted")
        return
    }
    let c = data.counts
    var y = body.y + 1
    let refunds30 = data.refunds30
    let openFlags = data.flagCounts.filter { $0.status == .open }.reduce(0) { $0 + $1.count }
    // Each tile's label, and a shorter one for a tile too narrow for it (at 60 columns "transacti…").
    let tiles: [(label: String, short: String, value: String, role: String)] = [
        ("customers", "customers", Format.count(c.customers), "ui.accent"),
        ("transactions", "txs", Format.count(c.transactions), "ui.accent"),
        ("refunds 30d", "refund 30d", Format.count(refunds30), refunds30 > 0 ? "status.warn" : "status.ok"),
        ("open flags", "open flags", Format.count(openFlags), openFlags > 0 ? "status.danger" : "status.ok"),
        ("rejected", "rejected", Format.count(c.rejectedRecords), c.rejectedRecords > 0 ? "status.warn" : "status.ok"),
    ]
    let tileWidth = max(10, (state.width - 2) / tiles.count)
    for (index, tile) in tiles.enumerated() {
        let x = 1 + index * tileWidth
        _ = p.text(tile.value, x: x, y: y, role: tile.role, width: tileWidth - 1)
        let label = DisplayWidth.of(tile.label) < tileWidth ? tile.label : tile.short
        _ = p.text(label, x: x, y: y + 1, role: "ui.text.muted", width: tileWidth - 1)
    }
    // Under time travel the refunds move to the instant; the counts and the flags are the ledger's now.
    if let asOf = state.asOf {
        _ = p.text(
            "refunds as of \(Format.day(asOf)); counts and flags are the ledger's now", x: 1, y: y + 2, role: "status.warn",
            width: state.width - 2)
    }
    y += 3
    // The last 90 days, a cell each, from 104 columns; else the last 30 (the tile's window), as wide as there is room
    // for: a window of its own, not however many days the width happens to hold.
    let chartRoom = max(1, state.width - 14)
    let days = overviewChartDays(state)
    let cellsPerDay = max(1, min(chartRoom, 90) / max(1, days))
    let sparkWidth = days * cellsPerDay
    // Focused (Tab, or h/l), a day is chosen: its cells marked, and what its bar counts said under it.
    let chosen = state.overviewPane == 3 || state.dayRefunds != nil ? chosenSeriesDay(state) : nil
    p.section("Refunds per day (UTC), last \(days) days", x: 0, y: y, width: state.width, focused: state.overviewPane == 3)
    y += 1
    // A taller terminal gets a taller chart (a spike stands out of the days around it), the lists below keeping
    // the rows they had at 24.
    let sparkHeight = overviewSparkHeight(state)
    let shownDays = data.refunds90.counts.suffix(days).flatMap { Array(repeating: $0, count: cellsPerDay) }
    let maximum = p.sparkline(shownDays, x: 1, y: y, width: min(sparkWidth, chartRoom), height: sparkHeight, role: "status.warn")
    _ = p.text("max \(maximum)/day", x: min(sparkWidth, chartRoom) + 2, y: y, role: "ui.text.muted")
    if chosen != nil {
        let x = 1 + (days - 1 - min(state.seriesDay, days - 1)) * cellsPerDay
        for row in 0..<sparkHeight { p.markSelected(x: x, y: y + row, width: cellsPerDay) }
    }
    y += sparkHeight
    if let chosen {
        let keys = state.dayRefunds == nil ? "; h/l another day, Enter lists its refunds" : "; h/l another day"
        _ = p.text("\(Format.day(chosen.day)): \(Format.counted(chosen.count, "refund"))\(keys)", x: 1, y: y, role: "ui.text", width: state.width - 2)
    } else {
        // Pinned at the end of Int64 rather than trapping: the series starts at a day from the instant asked about.
        let first = Timestamp(
            millisecondsSince1970: clampedSum(
                data.refunds90.firstDay.millisecondsSince1970, Int64(max(0, data.refunds90.counts.count - days)) * 86_400_000))
        _ = p.text(Format.day(first), x: 1, y: y, role: "ui.text.muted")
        let lastLabel = "today " + Format.day(state.instant)
        _ = p.text(lastLabel, x: max(1, 1 + sparkWidth - DisplayWidth.of(lastLabel)), y: y, role: "ui.text.muted")
    }
    // Shorter than 24 rows: no blank line here, so the panes below keep their rows.
    y += body.height < 21 ? 1 : 2
    if let list = state.dayRefunds {
        drawDayRefunds(state, list, &p, y: y, bottom: body.y + body.height)
        return
    }
    let half = state.width / 2
    // The lists take what the panes below leave: their titles, the spike's detail line and three rows (a pending
    // consumption request and the count past deadline; the import health's three lines).
    let listHeight = max(1, body.y + body.height - y - 6)
    p.section("Spike alarms", x: 0, y: y, width: half - 1, focused: state.overviewPane == 0)
    p.section("Open flags by severity", x: half, y: y, width: state.width - half, focused: state.overviewPane == 1)
    y += 1
    if data.spikes.isEmpty {
        _ = p.text("no refund spike open", x: 1, y: y, role: "status.ok", width: half - 2)
    }
    // The selected spike stays in view (j/k move it; Enter opens its product's flags).
    let selectedSpike = state.spikeList.selected
    let firstSpike = firstShownRow(selected: selectedSpike, count: data.spikes.count, rows: listHeight)
    for (offset, flag) in data.spikes.dropFirst(firstSpike).prefix(listHeight).enumerated() {
        let rowY = y + offset
        let line = "\(Format.day(flag.at)) \(flag.productId ?? "-")\(environmentMark(state, flag))  \(flag.detail)"
        _ = p.text(line, x: 1, y: rowY, role: "status.danger", width: half - 2)
        if state.overviewPane == 0, firstSpike + offset == selectedSpike { p.markSelected(y: rowY, width: half - 1) }
    }
    // Every severity with an open flag (high, medium and low always), so the lines add up to the tile above;
    // bars scaled to the largest count. j/k select one while the pane has focus; Enter opens its open flags.
    let listed = overviewSeverities(data).map { ($0.severity, $0.open) }
    let selectedSeverity = state.overviewPane == 1 ? listed[safe: state.severityList.selected]?.0 : nil
    // As many as the lists' rows hold: the selected one, the most severe with open flags, a zero line before none.
    // When severities with open flags do not all fit, the last row counts the rest, so the lines still add up to
    // the tile ("+ info 1"); on a single row (unless one is selected) every count, without bars.
    // (A selected severity with none open takes a row of its own.)
    let withOpen = listed.filter { $0.1 > 0 || $0.0 == selectedSeverity }.count
    let rows =
        withOpen <= listHeight ? listHeight
        : listHeight > 1 ? listHeight - 1
        : selectedSeverity == nil ? 0 : 1
    let kept = Set(
        ([selectedSeverity].compactMap { $0 } + listed.filter { $0.1 > 0 }.map(\.0) + listed.filter { $0.1 == 0 }.map(\.0)).prefix(rows))
    let severities = listed.filter { kept.contains($0.0) }
    let rest = listed.filter { !kept.contains($0.0) && $0.1 > 0 }
    let barRoom = max(0, state.width - half - 19)
    let largest = severities.map(\.1).max() ?? 0
    for (index, (severity, count)) in severities.enumerated() {
        let role = severityRole(severity)
        _ = p.text(severity.rawValue, x: half + 1, y: y + index, role: role, width: 8)
        _ = p.text(Format.count(count), x: half + 10, y: y + index, role: role, width: 8)
        let length = count == 0 || largest == 0 ? 0 : max(1, Int((Double(count) / Double(largest) * Double(barRoom)).rounded()))
        _ = p.text(String(repeating: p.glyphs.blockFull, count: min(barRoom, length)), x: half + 18, y: y + index, role: role)
        if severity == selectedSeverity { p.markSelected(x: half, y: y + index, width: state.width - half) }
    }
    if rows < listHeight {
        let prefix = rows == 0 ? "" : "+ "
        let full = prefix + rest.map { "\($0.0.rawValue) \(Format.count($0.1))" }.joined(separator: ", ")
        let short = prefix + rest.map { "\(severityCell($0.0, short: true).text):\(Format.count($0.1))" }.joined(separator: " ")
        let line = DisplayWidth.of(full) <= state.width - half - 2 ? full : short
        _ = p.text(line, x: half + 1, y: y + severities.count, role: "ui.text.muted", width: state.width - half - 2)
    }
    y += max(severities.count + (rows < listHeight ? 1 : 0), min(listHeight, data.spikes.count))
    // The selected spike's detail whole on the row under the lists (its row has half the width) while its pane
    // has focus.
    if state.overviewPane == 0, let spike = data.spikes[safe: selectedSpike] {
        _ = p.text(spike.detail, x: 1, y: y, role: "ui.text.muted", width: state.width - 2)
    }
    y += 1
    // The title whole: without its window when the half is narrow (at 60 columns it was cut inside the brackets).
    let consumptionTitle = DisplayWidth.of("Consumption requests (12 h)") + 4 <= half - 1 ? "Consumption requests (12 h)" : "Consumption requests"
    p.section(consumptionTitle, x: 0, y: y, width: half - 1, focused: state.overviewPane == 2)
    p.section("Import health", x: half, y: y, width: state.width - half)
    y += 1
    let room = max(1, body.y + body.height - y)
    // Pending requests, soonest deadline first (j/k select one while the pane has focus, Enter opens its customer);
    // those whose deadline passed are one line, not a list.
    let instant = state.instant.millisecondsSince1970
    let pending = pendingConsumptionRequests(data, at: state.instant)
    let missed = data.consumptionPastDeadline ?? data.consumptionRequests.filter { consumptionDeadline($0) <= instant }.count
    if pending.isEmpty {
        _ = p.text("none pending", x: 1, y: y, role: "status.ok", width: half - 2)
    }
    let pendingRows = missed > 0 ? max(0, room - 1) : room
    let selectedRequest = state.consumptionList.selected
    let firstRequest = firstShownRow(selected: selectedRequest, count: pending.count, rows: pendingRows)
    for (offset, flag) in pending.dropFirst(firstRequest).prefix(pendingRows).enumerated() {
        let rowY = y + offset
        let left = clampedDifference(consumptionDeadline(flag), instant)
        let role = left < 3 * 3_600_000 ? "status.danger" : "status.warn"
        _ = p.text(
            "\(Format.span(left)) left  C\(flag.customerId ?? 0) \(flag.productId ?? "-")\(environmentMark(state, flag))"
                + (flag.status == .acknowledged ? " (ack)" : ""), x: 1, y: rowY,
            role: role, width: half - 2)
        if state.overviewPane == 2, firstRequest + offset == selectedRequest { p.markSelected(y: rowY, width: half - 1) }
    }
    if missed > 0 {
        // (Open or acknowledged: someone looking at a request is no answer to it.)
        let full = "\(Format.count(missed)) past deadline, in the queue (5)"
        let line = DisplayWidth.of(full) <= half - 2 ? full : "\(Format.count(missed)) past deadline: queue (5)"
        _ = p.text(line, x: 1, y: y + max(1, min(pending.count, pendingRows)), role: "ui.text.muted", width: half - 2)
    }
    let health = [
        "last import \(Format.minute(c.lastImport))", "\(Format.counted(c.sources, "source")), \(Format.counted(c.rawRecords, "record"))",
        // (The key after the screen it opens, as "in the queue (5)" above: "(6 shows them)" read as a count.)
        c.rejectedRecords == 0 ? "no record rejected" : "\(Format.count(c.rejectedRecords)) rejected, on Imports (6)",
    ]
    for (index, line) in health.prefix(room).enumerated() {
        _ = p.text(line, x: half + 1, y: y + index, role: index == 2 && c.rejectedRecords > 0 ? "status.warn" : "ui.text", width: state.width - half - 2)
    }
}

/// How many days the overview's chart shows: 90 from 104 columns, else 30 (the tile's window).
func overviewChartDays(_ state: AppState) -> Int {
    let chartRoom = max(1, state.width - 14)
    return max(1, min(chartRoom >= 90 ? 90 : 30, state.overview?.refunds90.counts.count ?? 30))
}

/// The chart's rows: a taller terminal gets a taller chart, the lists below keeping the rows they had at 24.
func overviewSparkHeight(_ state: AppState) -> Int {
    let bodyHeight = state.height - 3
    return bodyHeight >= 34 ? 4 : bodyHeight >= 28 ? 2 : 1
}

/// The rows of a day's refunds the overview has room for under its chart (as ``drawOverview`` lays it out).
func dayRefundsRows(_ state: AppState) -> Int {
    let bodyHeight = state.height - 3
    // Tiles (and the as-of line), the chart's title, its rows and the day's line, the gap, the list's title and header.
    let top = 1 + 1 + 3 + 1 + overviewSparkHeight(state) + (bodyHeight < 21 ? 1 : 2)
    return max(1, 1 + bodyHeight - top - 2)
}

/// A day's refunds, under the chart: each one's time, transaction, product, environment and amount; Enter opens
/// the transaction (its sources say which records it came from).
func drawDayRefunds(_ state: AppState, _ list: DayRefundsList, _ p: inout Painter, y: Int, bottom: Int) {
    let rows = list.rows ?? []
    var title = "Refunds on \(Format.day(list.day))"
    if list.rows != nil {
        // (Cut only at the list's limit; another difference is a refund imported between the two reads, which the
        // next refresh brings.)
        let cut = rows.count >= DayRefundsList.limit && list.count > rows.count
        title += cut ? ": the first \(Format.count(rows.count)) of \(Format.count(list.count))" : " (\(Format.count(rows.count)))"
        title += "; Enter opens one, Esc closes"
    }
    p.section(title, x: 0, y: y, width: state.width, focused: true)
    guard !rows.isEmpty else {
        let empty = list.rows == nil ? "reading the ledger…" : "none"
        _ = p.text(notLoaded(state) ?? empty, x: 1, y: y + 1, role: "ui.text.muted", width: state.width - 2)
        return
    }
    p.table(
        x: 0, y: y + 1, width: state.width, height: max(2, bottom - y - 1),
        columns: [
            Column("refunded", 8, keepsWidth: true), Column("transaction", max(11, rows.map { DisplayWidth.of(Sanitize.text($0.transactionId)) }.max() ?? 11), keepsWidth: true),
            Column("product", 20, flex: true, keepEnd: true), Column("env", 5, drops: 2),
            Column("price (refunded)", 22, right: true, drops: 1),
        ],
        rows: rows.count, position: list.list
    ) { row, column in
        let r = rows[row]
        switch column {
        case 0: return TableCell(String(r.refundedAt.iso8601.dropFirst(11).prefix(8)), role: "ui.text.muted")
        case 1: return TableCell(r.transactionId, role: "ui.accent")
        case 2: return TableCell(r.productId ?? "-")
        case 3: return TableCell(r.environment.map { environmentLabel(Environment(rawValue: $0)) } ?? "-")
        default:
            // The price, and the share refunded when it was not all of it (as the customer's transactions say it).
            let share = r.share < 100_000 ? " (\(r.share / 1000)%)" : ""
            return TableCell(r.price.map { Money.withCurrency($0, currency: r.currency) + share } ?? "-", role: "status.warn")
        }
    }
}

// MARK: Customers

/// Why the customer list is empty: a filter that matches no one, or a ledger that holds no one.
func customersNone(_ state: AppState) -> String {
    let query = state.customerQuery
    let filtered = query.filter != nil || query.activeAt != nil || query.withOpenFlags || query.environment != .all || state.environment != .all
    return filtered ? "no customers match" : "no customers in this ledger yet (receiptdesk import adds them)"
}

/// What the Customers list's access column says of a customer: what their own screen says of their access at the
/// instant, by the entitlement engine, once the runtime has judged them (``ListedAccess``). Until then, what the list's
/// figures know: the latest expiry whose access stands, or "revoked" when the latest expiry's access was taken back and
/// nothing else stands (its date in green read as a customer covered); under time travel, an ellipsis (those figures
/// are the ledger's now). A date passed says "expired" in words, not by its colour alone. Live, a judgement of a minute
/// before stays shown while it is judged again (the clock's minute moved every row back to the figures meanwhile).
func customerAccessCell(_ state: AppState, _ c: CustomerSummary) -> TableCell {
    if let known = state.customerAccess[c.id], known.instant == state.instant || (known.live && state.asOf == nil),
        let access = known.state
    {
        let day = known.date.map { " " + Format.day($0) } ?? ""
        return switch access {
        case .active: TableCell(known.date.map { Format.day($0) } ?? "active", role: role(.active))
        case .gracePeriod: TableCell("grace" + day, role: role(.gracePeriod))
        case .billingRetry: TableCell("billing retry", role: role(.billingRetry))
        case .owned: TableCell("owned", role: role(.owned))
        case .revoked: TableCell("revoked" + day, role: role(.revoked))
        case .expired: TableCell("expired" + day, role: "ui.text.muted")
        case .none: TableCell("-", role: "ui.text.muted")
        }
    }
    // (Not judged yet: under time travel nothing of the figures is of the instant; with no expiry, what was bought
    // may be owned or a consumable, which the figures do not say.)
    if c.transactionCount == 0 { return TableCell("-", role: "ui.text.muted") }
    guard let latest = c.latestExpiry, state.asOf == nil else { return TableCell(state.glyphs.ellipsis, role: "ui.text.muted") }
    if let live = c.liveExpiry, live.millisecondsSince1970 > state.instant.millisecondsSince1970 {
        return TableCell(Format.day(live), role: "entitlement.active")
    }
    if c.liveExpiry == latest { return TableCell("expired \(Format.day(latest))", role: "ui.text.muted") }
    return TableCell("revoked", role: role(.revoked))
}

func drawCustomers(_ state: AppState, _ p: inout Painter, _ body: Body) {
    let page = state.customerPage
    let count = max(page.total, page.rows.count)
    // Not read yet (loading, or the ledger unavailable): no count, which would read as none.
    let unread = notRead(state, empty: page.rows.isEmpty) || (page.rows.isEmpty && state.customersLoading)
    var title =
        (unread ? "Customers" : page.totalIsLowerBound ? "\(Format.count(count))+ customers" : Format.counted(count, "customer"))
        + "  sorted by \(state.customerQuery.sort.label)"
    if let filter = state.customerQuery.filter { title += "  filter \"\(filter)\"" }
    // What A and F narrowed it to (an empty list said nothing of why).
    if let at = state.customerQuery.activeAt { title += "  subscribed at \(Format.instant(at))" }
    if state.customerQuery.withOpenFlags { title += "  with open flags" }
    // The list's figures are the ledger's now whatever instant the header shows (the Overview says as much); the access
    // column is judged at the instant. (Short: at 80 columns a longer note was cut to "other figure…".)
    if state.asOf != nil { title += "  access as of then, the rest now" }
    p.section(title, x: 0, y: body.y, width: state.width, focused: true)
    // The access column (``customerAccessCell(_:_:)``): as wide as "expired 2025-06-28" always (as wide as the cells on
    // screen, the columns beside it came and went as a page or a judgement arrived).
    let accessWidth = 18
    // Narrow, the count of transactions leaves first, then the environments, then the last purchase (not while
    // the list is sorted by it).
    var columns = [
        Column("id", 8, keepsWidth: true), Column("identifier", 20, flex: true), Column("env", 5, drops: 2),
        Column("txs", countWidth(page.rows.map(\.transactionCount), atLeast: 5), right: true, drops: 3),
        Column("purchased", 10, drops: 1), Column("access", accessWidth, right: true, keepsWidth: true),
        Column("refunds", 7, right: true), Column("flags", 5, right: true),
    ]
    let sortColumn: Int = switch state.customerQuery.sort {
    case .id: 0
    case .lastActivity: 4
    case .refunds: 6
    }
    columns[sortColumn].drops = 0
    let rows = page.rows
    if rows.isEmpty {
        _ = p.text(
            notLoaded(state) ?? (state.customersLoading ? "loading…" : customersNone(state)), x: 1, y: body.y + 2, role: "ui.text.muted")
        return
    }
    p.table(x: 0, y: body.y + 1, width: state.width, height: body.height - 2, columns: columns, rows: rows.count, total: page.total, totalIsLowerBound: page.totalIsLowerBound, offset: state.customerOffset, position: state.customerList, sortColumn: sortColumn) { row, column in
        let c = rows[row]
        switch column {
        case 0: return TableCell(c.displayId, role: "ui.accent")
        case 1:
            let id = c.identifiers.first { $0.kind == .external } ?? c.identifiers.first { $0.kind == .originalTransactionId } ?? c.identifiers.first
            return TableCell(id.map { $0.value } ?? "-")
        case 2: return TableCell(c.environments.map { environmentLabel(Environment(rawValue: $0)) }.joined(separator: "+"))
        case 3: return TableCell(Format.count(c.transactionCount))
        case 4: return TableCell(Format.day(c.lastPurchase))
        case 5: return customerAccessCell(state, c)
        case 6: return TableCell(c.refunds == 0 ? "-" : "\(c.refunds)", role: c.refunds > 0 ? "status.danger" : "ui.text.muted")
        default: return TableCell(c.openFlags == 0 ? "-" : "\(c.openFlags)", role: c.openFlags > 0 ? "status.warn" : "ui.text.muted")
        }
    }
}

// MARK: Customer

/// The role of an entitlement state.
func role(_ state: EntitlementState) -> String {
    switch state {
    case .active: "entitlement.active"
    case .gracePeriod: "entitlement.grace"
    case .billingRetry: "entitlement.retry"
    case .expired: "entitlement.expired"
    case .revoked: "entitlement.revoked"
    case .owned: "entitlement.owned"
    case .none: "entitlement.none"
    }
}

func drawCustomer(_ state: AppState, _ p: inout Painter, _ body: Body) {
    guard let detail = state.customer, let view = state.customerView else {
        _ = p.text(notLoaded(state) ?? "no customer open", x: 1, y: body.y + 1, role: "ui.text.muted")
        return
    }
    let records = detail.records
    var y = body.y
    // Identity: every id a person could paste, flowing over up to two lines; the rest counted.
    let order: [IdentifierKind: Int] = [.originalTransactionId: 0, .external: 1, .appAccountToken: 2]
    let identifiers = records.identifiers.enumerated().sorted {
        (order[$0.element.kind] ?? 3, $0.offset) < (order[$1.element.kind] ?? 3, $1.offset)
    }.map(\.element)
    var x = p.text("C\(records.id)", x: 1, y: y, role: "ui.accent") + 3
    let lastIdentityLine = y + 1
    var shown = 0
    for identifier in identifiers {
        let kind = switch identifier.kind {
        case .originalTransactionId: "original"
        case .appAccountToken: "token"
        case .external: "external"
        }
        let width = DisplayWidth.of(kind) + 1 + DisplayWidth.of(identifier.value)
        let more = identifiers.count - shown > 1 ? 10 : 0
        if x + width + more >= state.width - 1 {
            guard y < lastIdentityLine, 3 + width + more < state.width - 1 else { break }
            y += 1
            x = 3
        }
        x += p.text("\(kind) ", x: x, y: y, role: "ui.text.muted")
        x += p.text(identifier.value, x: x, y: y, role: "ui.text", width: state.width - x - 1) + 2
        shown += 1
    }
    if shown < identifiers.count {
        _ = p.text("+\(identifiers.count - shown) more", x: x, y: y, role: "ui.text.muted", width: max(0, state.width - x - 1))
    }
    y += 1
    let facts = view.facts
    let spend = facts.netSpend.sorted { $0.key < $1.key }.map { "\(Money.format($0.value, currency: $0.key)) \($0.key)" }.joined(separator: ", ")
    let openFlags = detail.flags.filter { $0.status == .open }
    // Transactions the data gives no price (verifyReceipt's do not carry one) are not in the net: said, not hidden.
    // (Nor are purchases a family member shared: the purchaser paid for them.)
    let net: String
    if !spend.isEmpty {
        net = spend + (facts.unpricedCount > 0 ? " + \(facts.unpricedCount) unpriced" : "")
            + (facts.sharedCount > 0 ? " + \(facts.sharedCount) shared by family" : "")
    } else if !facts.unrepresentableCurrencies.isEmpty {
        net = "too large to sum"
    } else if facts.unpricedCount == 0 && facts.sharedCount > 0 {
        net = "none (shared by family)"
    } else if facts.transactionCount == 0 {
        // Before the first purchase (time travel): nothing spent, not "unknown".
        net = "none"
    } else {
        net = "unknown (no prices in the data)"
    }
    // The transactions the panes list, and, when a restore gave a period another id, the purchases they are
    // (the customer list counts transactions too: 157 there and 61 here read as a contradiction).
    let listed = records.transactionCount(at: state.instant)
    let count = listed > facts.transactionCount
        ? "\(Format.count(listed)) txs, \(Format.counted(facts.transactionCount, "purchase"))" : Format.counted(facts.transactionCount, "tx")
    let figures = "\(count)  \(facts.refundCount) refunded  net \(net)"
    let environments = facts.environments.joined(separator: "+")
    // The figures matter most: on a narrow screen the first-seen day goes first, then the environments.
    // (Where no price is known, "net unknown" says it before the environments give way.)
    let shortFigures = figures.replacing("net unknown (no prices in the data)", with: "net unknown")
    let lines = [
        "first seen \(Format.day(facts.firstSeen))  \(environments)  \(figures)", "\(environments)  \(figures)",
        "\(environments)  \(shortFigures)", figures, shortFigures,
    ]
    // Open flags at the right end (their rules when they fit, else the count); the facts take the rest.
    var flagText = ""
    if !openFlags.isEmpty {
        // Flags and their statuses are the ledger's now, whatever instant the screen shows: said under time travel.
        let count = Format.counted(openFlags.count, "open flag") + (state.asOf == nil ? "" : " now")
        let full = " \(count): \(Set(openFlags.map(\.rule)).sorted().joined(separator: ", ")) "
        flagText = DisplayWidth.of(lines[0]) + DisplayWidth.of(full) + 4 <= state.width ? full : " \(count) "
        _ = p.text(flagText, x: max(1, state.width - DisplayWidth.of(flagText) - 1), y: y, role: "status.danger", width: state.width - 2)
    }
    let room = max(0, state.width - DisplayWidth.of(flagText) - 3)
    let line = lines.first { DisplayWidth.of($0) <= room } ?? shortFigures
    _ = p.text(line, x: 1, y: y, role: "ui.text.muted", width: room)
    y += 1
    // The latest note an agent left (`receiptdesk note`, or a note on one of the customer's flags: a resolve's; an
    // undo's own "undo of ..." is no one's note), how many there are, and the flag it was about (cut first on a
    // narrow screen).
    // (One note resolving several flags is in the log once per flag: counted once.)
    var seenNotes = Set<String>()
    let notes = detail.log.filter { entry in
        guard let note = entry.note, !note.isEmpty, !isUndoNote(note) else { return false }
        return seenNotes.insert("\(entry.at.millisecondsSince1970)\u{1F}\(entry.operatorName)\u{1F}\(note)").inserted
    }
    if let latest = notes.last {
        let more = notes.count > 1 ? "  (\(notes.count) notes)" : ""
        // A resolve undone since (or a flag moved on) says so: "batch reviewed (resolve …)" beside "3 open flags" read as
        // resolved.
        let about = latest.flagId.map { flagId in
            // (The log is in the order it was written.)
            let written = detail.log.lastIndex(of: latest) ?? detail.log.endIndex
            let later = detail.log[written...].dropFirst().first { $0.flagId == flagId }
            let now = detail.flags.first { $0.id == flagId }?.status
            // (First, where a narrow screen cuts the flag's id.)
            let since =
                if let later, let note = later.note, isUndoNote(note) { "undone: " }
                else if let now, let set = latest.toStatus, now != set { "now \(now.rawValue): " }
                else { "" }
            return "  (\(since)\(latest.action.rawValue) \(flagId))"
        } ?? ""
        let text = "note \(Format.minute(latest.at)) \(latest.operatorName): \(latest.note ?? "")\(more)\(about)"
        _ = p.text(text, x: 1, y: y, role: "ui.text", width: state.width - 2)
        y += 1
    }
    // Entitlements with the state and why.
    // At most four rows; more scroll with the selection, and the title says how many there are.
    let entitlementRows = min(max(1, view.entitlements.count), 4)
    let selectedEntitlement = state.customerPositions[0].selected
    let firstEntitlement = firstShownRow(selected: selectedEntitlement, count: view.entitlements.count, rows: entitlementRows)
    // (Now, over a ledger, is the wall clock's instant: shown to the minute, as the header's clock is; a time-travel
    // instant as it was typed.)
    var entitlementTitle = "Entitlements as of \(state.asOf == nil ? Format.minute(view.instant) : Format.instant(view.instant))"
    if view.entitlements.count > entitlementRows {
        entitlementTitle += "  \(firstEntitlement + 1)-\(firstEntitlement + entitlementRows) of \(view.entitlements.count)"
    }
    p.section(entitlementTitle, x: 0, y: y, width: state.width, focused: state.customerPane == 0)
    y += 1
    if view.entitlements.isEmpty { _ = p.text("nothing bought", x: 1, y: y, role: "ui.text.muted") }
    // Names (entitlements', and the coverage strips' below, a group's id when no entitlement names it) take what
    // the longest needs (7 to 18 cells), so that the why has the rest of the line.
    let groups = coverageGroups(records, view: view, catalog: state.catalog)
    let stripNames = groups.prefix(2).map(\.name)
    let nameWidth = min(18, max(7, (view.entitlements.map(\.name) + stripNames).map { DisplayWidth.of(Sanitize.text($0)) }.max() ?? 0))
    let column = nameWidth + 2
    // The state column as wide as the widest state shown ("GRACE PERIOD" is 12 cells, "ACTIVE" 6): the rest is the why's.
    let shownEntitlements = view.entitlements.dropFirst(firstEntitlement).prefix(entitlementRows)
    let stateWidth = view.entitlements.map { DisplayWidth.of($0.state.label) }.max() ?? 0
    let whyX = column + stateWidth + 1
    for (offset, e) in shownEntitlements.enumerated() {
        let index = firstEntitlement + offset
        let rowY = y + offset
        _ = p.text(e.name, x: 1, y: rowY, role: "ui.text", width: nameWidth, keepEnd: TableCell.isDotted(e.name))
        _ = p.text(e.state.label, x: column, y: rowY, role: role(e.state), width: stateWidth)
        let renewal = renewalNote(e)
        // Seconds and milliseconds give way before whether it renews does.
        let room = state.width - whyX - 1
        // The product first, where the name is not it (a subscription group's id, an entitlement the catalog
        // names); it gives way first, then the instants' seconds and milliseconds, before whether it renews does.
        let product = e.productId.flatMap { $0 == e.name ? nil : $0 + ": " } ?? ""
        let full = Format.instants(in: e.reason) + renewal
        let short = Format.instants(in: e.reason, toMinute: true) + renewal
        let why = [product + full, product + short, full].first { DisplayWidth.of($0) <= room } ?? short
        _ = p.text(why, x: whyX, y: rowY, role: "ui.text", width: room)
        if state.customerPane == 0, index == state.customerPositions[0].selected { p.markSelected(y: rowY, width: state.width) }
    }
    y += entitlementRows
    // Coverage strip per subscription: what covered the customer, day by day.
    if let coverage = coverageStrips(records, view: view, groups: groups, width: state.width - column - 2) {
        for strip in coverage.strips.prefix(2) {
            _ = p.text(strip.name, x: 1, y: y, role: "ui.text.muted", width: nameWidth, keepEnd: TableCell.isDotted(strip.name))
            // (Blank before the group's first purchase: not a gap, nothing yet.)
            for (index, kind) in strip.cells.enumerated() {
                guard let kind else { continue }
                p.buffer.put(kind.glyph(p.glyphs), x: column + index, y: y, style: p.theme.style(kind.role))
            }
            y += 1
        }
        // (A strip that ends before the instant, nothing bought for a long while, says so: its end is when the last
        // coverage ran out, not an event.)
        let since = coverage.end < view.instant ? " (coverage ended)" : ""
        let span = "\(Format.day(coverage.start)) … \(Format.day(coverage.end))\(since)"
        // The legend names what the strips shown hold.
        let shownKinds = Set(coverage.strips.prefix(2).flatMap(\.cells).compactMap { $0 })
        let kinds = CoverageKind.allCases.filter(shownKinds.contains).map { "\($0.glyph(p.glyphs)) \($0.rawValue)" }
            .joined(separator: "  ")
        // Under the strips; too wide for that (60 columns), from the line's start, which the strips' names leave empty.
        var legend = "\(span)   \(kinds)"
        var x = column
        if DisplayWidth.of(legend) > state.width - column - 1 {
            legend = "\(span)  \(kinds)"
            x = 1
        }
        _ = p.text(legend, x: x, y: y, role: "ui.text.muted", width: state.width - x - 1)
        y += 1
    }
    // The timeline, the transactions and the flags below, in that order: the pane Tab chose, and each other one the
    // screen has room for every row of (a support agent's tall terminal shows the customer's whole story at once; the
    // keys move in the pane in focus). The pane Tab chose, too long for that, takes every row alone.
    let rows = max(1, body.y + body.height - y - 1)
    let chosen = max(1, state.customerPane)
    // (Each pane takes its title's line and its rows.)
    var paneLines = [chosen: customerPaneHeight(chosen, state, detail, view, within: rows) + 1]
    for pane in detail.flags.isEmpty ? [1, 2] : [1, 2, 3] where pane != chosen && paneLines[chosen]! <= rows + 1 {
        let needs = customerPaneHeight(pane, state, detail, view, within: rows) + 1
        if paneLines.values.reduce(needs, +) <= rows + 1 { paneLines[pane] = needs }
    }
    guard paneLines.count > 1 else {
        drawCustomerPane(chosen, state, detail, view, &p, y: y, rows: rows, showsSelection: true)
        return
    }
    var paneY = y
    for (pane, height) in paneLines.sorted(by: { $0.key < $1.key }) {
        // Only the pane in focus shows a selected row: the keys act on it, and the others' keys act on all of theirs (a
        // flag underlined out of focus read as the one `a` acknowledges, where `a` acknowledged every flag).
        drawCustomerPane(pane, state, detail, view, &p, y: paneY, rows: height - 1, showsSelection: pane == state.customerPane)
        paneY += height
    }
}

/// The rows a pane under the customer's entitlements needs to show all of its rows, under its title: its table's
/// header and rows, and the lines under the table about a selected row, as many as the longest of those takes, so that
/// moving the selection or the focus moves no pane. `within`: the rows there are (a pane longer is not measured whole).
func customerPaneHeight(_ pane: Int, _ state: AppState, _ detail: CustomerDetail, _ view: CustomerView, within rows: Int) -> Int {
    switch pane {
    case 1:
        // The selected event's (or, the entitlements in focus, the selected entitlement's) line under the events, and up
        // to two more where it is too long for one. (The pane draws it from four rows on.)
        let texts = view.timeline.prefix(rows).map(timelineLine) + view.entitlements.prefix(rows).map(entitlementLine)
        let lines = texts.map { wrapped($0, width: state.width - 2, words: true).count }.max() ?? 1
        return max(4, 1 + max(1, view.timeline.count) + min(3, max(1, lines)))
    case 2:
        return 1 + max(1, view.transactions.count)
    default:
        // A flag's line, and who last moved it on one more. (The pane draws the first from four rows on, the second
        // from six.)
        let footer = detail.flags.prefix(rows).contains { detail.lastTriage(of: $0.id) != nil } ? 2 : 1
        return max([0, 4, 6][footer], 1 + max(1, detail.flags.count) + footer)
    }
}

/// Draws a pane under the customer's entitlements: 1 the timeline, 2 the transactions, 3 the flags; its title at `y`,
/// its rows under it (`rows` lines); in focus when Tab chose it.
func drawCustomerPane(
    _ pane: Int, _ state: AppState, _ detail: CustomerDetail, _ view: CustomerView, _ p: inout Painter, y: Int, rows: Int,
    showsSelection: Bool
) {
    let focused = pane == state.customerPane
    // (No row is selected in a position past every row.)
    let position = showsSelection ? state.customerPositions[pane] : ListPosition(selected: -1)
    switch pane {
    case 1: drawTimeline(state, view, &p, y: y, rows: rows, position: position)
    case 2: drawTransactions(state, detail, view, &p, y: y, rows: rows, focused: focused, position: position)
    default: drawCustomerFlags(state, detail, &p, y: y, rows: rows, focused: focused, position: position)
    }
}

/// The customer's transactions, newest first.
private func drawTransactions(
    _ state: AppState, _ detail: CustomerDetail, _ view: CustomerView, _ p: inout Painter, y: Int, rows: Int, focused: Bool,
    position: ListPosition
) {
    let next = !focused ? "" : detail.flags.isEmpty ? "  Tab: entitlements" : "  Tab: flags"
    // Under time travel, those bought by the instant, and how many after it are not listed.
    let later = view.transactionsLater > 0 ? "  \(Format.count(view.transactionsLater)) bought later not listed" : ""
    p.section("Transactions (newest first)\(later)\(next)", x: 0, y: y, width: state.width, focused: focused)
    let transactions = view.transactions
    // The purchase minute when every column has room for it, else its day: a time cut to "2025-06-01 0…" says
    // less than the day alone.
    // Narrow, the price leaves first, then the environment (the header says it when there is one). The price and the
    // status are as wide as their widest cell (a currency, "refunded 35%", "family revoked"), the product gives way.
    let prices = transactions.map(priceText)
    let statuses = transactions.map { transactionStatusCell($0, view) }
    let priceWidth = min(16, prices.reduce(5) { max($0, DisplayWidth.of($1)) })
    let statusWidth = min(16, statuses.reduce(6) { max($0, DisplayWidth.of($1.text)) })
    var columns = [
        Column("transaction", 16, keepsWidth: true), Column("env", 4, drops: 1), Column("product", 12, flex: true),
        Column("purchased", 16), Column("expires", 10), Column("price", priceWidth, right: true, drops: 2),
        Column("status", statusWidth, keepsWidth: true),
    ]
    let purchaseMinutes = state.width >= columns.reduce(columns.count - 1) { $0 + $1.width }
    if !purchaseMinutes { columns[3].width = 10 }
    p.table(
        x: 0, y: y + 1, width: state.width, height: rows, columns: columns,
        rows: transactions.count, position: position, focused: focused
    ) { row, column in
        let t = transactions[row]
        switch column {
        case 0: return TableCell(t.transactionId)
        case 1: return TableCell(environmentLabel(t.environment), role: t.environment == .production ? "ui.text" : "status.warn")
        case 2: return TableCell.id(t.productId ?? "-")
        case 3: return TableCell(purchaseMinutes ? Format.minute(t.purchaseDate) : Format.day(t.purchaseDate))
        case 4: return TableCell(Format.day(t.expiresDate))
        case 5: return TableCell(prices[row])
        default: return statuses[row]
        }
    }
}

/// A transaction's price with its currency, as the transactions pane shows it ("-" without one).
private func priceText(_ t: Transaction) -> String {
    t.price.map { Money.withCurrency($0, currency: t.currency) } ?? "-"
}

/// The transactions pane's status: what revoked it, or how its signature stands.
private func transactionStatusCell(_ t: Transaction, _ view: CustomerView) -> TableCell {
    // "Refunded" only for a refund that stands at the instant: a family revoke, an upgrade's
    // prorated cancellation and a reversed refund are not refunds (Revocation.swift).
    if let revoked = view.revocations[t.transactionId] {
        switch revoked {
        case .refund(_, let share)?:
            return TableCell(share < 100_000 ? "refunded \(share / 1000)%" : "refunded", role: "status.danger")
        case .familyRevoke?: return TableCell("family revoked", role: "status.warn")
        case nil:
            if t.isUpgraded == true { return TableCell("upgraded", role: "ui.text.muted") }
            if (t.revocationDate?.millisecondsSince1970 ?? .max) <= view.instant.millisecondsSince1970 {
                return TableCell("reversed", role: "status.ok")
            }
        }
    }
    if t.isUpgraded == true { return TableCell("upgraded", role: "ui.text.muted") }
    return verificationCell(t.verification)
}

/// The line under the timeline: the selected event in full, as the flag queue does (at 80 columns the detail column
/// holds about twenty characters, and "Apple refunded it: ..." is the part that answers a question); with the
/// entitlements in focus, the selected one's why whole (its row cuts it); nil with another pane in focus.
func timelineLastText(_ state: AppState, _ view: CustomerView) -> String? {
    switch state.customerPane {
    case 1: view.timeline[safe: state.customerPositions[1].selected].map(timelineLine)
    case 0: view.entitlements[safe: state.customerPositions[0].selected].map(entitlementLine)
    default: nil
    }
}

/// An event in full, under the timeline: the detail first, which is what is cut at the right edge when the line is short.
func timelineLine(_ e: TimelineEvent) -> String { timelineDetail(e) + (e.transactionId.map { "  (transaction \($0))" } ?? "") }

/// An entitlement's why whole, under the timeline (its row cuts it).
func entitlementLine(_ e: Entitlement) -> String { "\(e.name): \(Format.instants(in: e.reason))\(renewalNote(e))" }

/// The customer's timeline, with the selected event (or entitlement, the entitlements in focus) in full under it.
private func drawTimeline(_ state: AppState, _ view: CustomerView, _ p: inout Painter, y: Int, rows: Int, position: ListPosition) {
    // The longest that leaves room for the scroll hint (" 16/16 "): the key to the next pane outlasts the note on
    // the columns.
    let counted = Format.counted(view.timeline.count, "event")
    // (Where Tab goes from here, while it is here: from the entitlements it comes here.)
    let next = state.customerPane == 1 ? "  Tab: transactions" : ""
    let title =
        ["Timeline (\(counted); at, then when learned if later)\(next)", "Timeline (\(counted))\(next)"]
        .first { DisplayWidth.of($0) + 14 <= state.width } ?? "Timeline (\(counted))"
    p.section(title, x: 0, y: y, width: state.width, focused: state.customerPane == 1)
    let events = view.timeline
    let lastText = rows > 3 ? timelineLastText(state, view) : nil
    // Too long for one line, it takes up to two more of the rows the events leave empty (at 60 columns a
    // consumption request's deadline was cut off).
    let lastLines = lastText.map { wrapped($0, width: state.width - 2, words: true) } ?? []
    let extra = max(0, min(lastLines.count - 1, rows - 2 - events.count, 2))
    p.table(
        x: 0, y: y + 1, width: state.width, height: lastText != nil ? rows - 1 - extra : rows,
        columns: [Column("at", 16, keepsWidth: true), Column("event", 20), Column("product", 17), Column("detail", 20, flex: true)],
        rows: events.count, position: position, focused: state.customerPane == 1
    ) { row, column in
        let e = events[row]
        switch column {
        case 0: return TableCell(Format.minute(e.at))
        case 1: return TableCell(e.kind.rawValue, role: "event.\(e.kind.rawValue)")
        case 2: return TableCell.id(e.productId ?? "-")
        default: return TableCell(timelineDetail(e))
        }
    }
    if !lastLines.isEmpty {
        for index in 0...extra {
            // The last row, with more to say than the rows hold, is cut at the edge.
            let text = index < extra || index == lastLines.count - 1 ? lastLines[index] : lastLines[index] + " " + lastLines[index + 1]
            _ = p.text(text, x: 1, y: y + rows - extra + index, role: "ui.text.muted", width: state.width - 2)
        }
    }
}

/// What is said of renewal after an entitlement's why ("; renews", "; renewal off", "; renewal stopped: billing
/// failed"), as `lookup` says it (``Entitlement/renewalWords``); empty when unknown. (Only of one still covered, it
/// was: an expired subscription gave no word of the customer turning renewal off, which `lookup` and the timeline said.)
func renewalNote(_ e: Entitlement) -> String { e.renewalWords.map { "; " + $0 } ?? "" }

/// How a transaction's signature stands, in the ten cells of the transactions' status column (`notApplicable` is
/// 13): plain JSON (verifyReceipt, V1 notifications) carries none by design; a failed one is the one to see.
func verificationCell(_ verification: Verification) -> TableCell {
    switch verification {
    case .verified: TableCell("verified", role: "ui.text.muted")
    case .unsigned: TableCell("unsigned", role: "ui.text.muted")
    case .skipped: TableCell("unchecked", role: "ui.text.muted")
    case .failed: TableCell("sig failed", role: "status.danger")
    case .notApplicable: TableCell("plain JSON", role: "ui.text.muted")
    }
}

/// The customer's flags, every status (the queue shows one at a time), with the selected one's detail and its last
/// triage on the last line; the triage keys act on the selected flag here.
private func drawCustomerFlags(
    _ state: AppState, _ detail: CustomerDetail, _ p: inout Painter, y: Int, rows: Int, focused: Bool, position: ListPosition
) {
    let flags = detail.flags
    let open = flags.filter { $0.status == .open }.count
    // Flags and their statuses are the ledger's now; under time travel, those raised after the instant are counted.
    let later = flags.filter { $0.at > state.instant }.count
    let after = later > 0 ? "; \(later) raised after \(Format.minute(state.instant))" : ""
    // (The triage keys act on the selected flag here, not on all of the customer's: said where they can be used. Out of
    // focus, shown under another pane, they act on every flag the key moves: said too, or `a` read as this list's first.)
    let keys = state.readOnly ? "" : focused ? "  a r o: this flag" : "  a r o: every flag"
    let next = focused ? "  Tab: entitlements" : ""
    p.section(
        "Flags (\(Format.counted(flags.count, "flag")), \(open) open\(after))\(keys)\(next)", x: 0, y: y,
        width: state.width, focused: focused)
    // The selected flag under the table, in focus: what it found and its id, then (with room) who last moved it and
    // their note.
    let selected = rows > 3 && focused ? flags[safe: position.selected] : nil
    let triage = selected.flatMap { detail.lastTriage(of: $0.id) }
    let footer = selected == nil ? 0 : triage != nil && rows > 5 ? 2 : 1
    let short = state.width < narrowFlagTable
    let columns = [
        Column("sev", severityWidth(flags, short: short)), Column("rule", 19), Column("status", 8), Column("product", 8, flex: true),
        Column("amount", 10, right: true, keepsWidth: true), Column("age", 4, right: true), Column("due", 6),
    ]
    let instant = state.instant
    p.table(
        x: 0, y: y + 1, width: state.width, height: rows - footer, columns: columns, rows: flags.count,
        position: position, focused: focused
    ) { row, column in
        let f = flags[row]
        switch column {
        case 0: return severityCell(f, short: short)
        case 1: return TableCell(f.rule)
        case 2: return statusCell(f)
        case 3: return TableCell.id(f.productId ?? "-")
        case 4: return amountCell(f)
        case 5: return ageCell(f, at: instant)
        default: return dueCell(f, at: instant)
        }
    }
    guard let f = selected else { return }
    // With room, who last moved it on a line of its own under what it found; else all on one.
    let lines = footer == 2 ? [flagLine(f, triage: nil), triage.map(triageSummary) ?? ""] : [flagLine(f, triage: triage)]
    for (offset, line) in lines.enumerated() {
        _ = p.text(line, x: 1, y: y + rows - footer + 1 + offset, role: "ui.text.muted", width: state.width - 2)
    }
}

/// Who last moved a flag, when, and their note: "resolved 2025-07-01 10:59 by ana: told them".
func triageSummary(_ entry: TriageEntry) -> String {
    let done = switch entry.action {
    case .ack: "acknowledged"
    case .resolve: "resolved"
    case .reopen: "reopened"
    case .note: "noted"
    }
    return "\(done) \(Format.minute(entry.at)) by \(triageWho(entry))"
}

/// Who wrote a triage entry and their note: "ana: told them".
func triageWho(_ entry: TriageEntry) -> String { entry.operatorName + (entry.note.map { ": \($0)" } ?? "") }

/// How long ago a triage entry was written, who wrote it and their note, as the queue's column has room for:
/// "2h bo: asked the bank" ("later" for an entry after the instant shown under time travel; without it, an entry
/// written since the screen's now last moved, or by a machine whose clock is ahead, is "0m").
func triageAgo(_ entry: TriageEntry, at instant: Timestamp, travelled: Bool) -> String {
    let age = clampedDifference(instant.millisecondsSince1970, entry.at.millisecondsSince1970)
    return "\(age >= 0 ? Format.span(age) : travelled ? "later" : "0m") \(triageWho(entry))"
}

/// A flag's line under a list of flags: what it found, who last moved it (when given), and its id (`y` copies it; a
/// V2 flag's id is its rule and a notification's UUID, 57 cells that would push the detail off an 80-column line).
func flagLine(_ f: RefundFlag, triage: TriageEntry?) -> String {
    "\(Format.instants(in: f.detail))\(triage.map { "  " + triageSummary($0) } ?? "")  id \(f.id)"
}

func timelineDetail(_ e: TimelineEvent) -> String {
    Format.instants(in: e.detail) + (e.learnedLate ? "  (learned \(Format.minute(e.seenAt)))" : "")
}

/// What covered a customer in one slice of time.
enum CoverageKind: String, CaseIterable {
    case paid, trial, grace, retry, gap, refund
    /// Family sharing access taken away (the purchaser stopped sharing, or left the family): no refund, no access.
    case revoked

    var role: String { self == .revoked ? "entitlement.revoked" : "coverage.\(rawValue)" }

    func glyph(_ glyphs: Glyphs) -> String {
        let ascii = glyphs == .ascii
        switch self {
        case .paid: return ascii ? "#" : "█"
        case .trial: return ascii ? "t" : "▒"
        case .grace: return ascii ? "g" : "▓"
        case .retry: return "!"
        case .gap: return ascii ? "." : "·"
        case .refund: return "x"
        case .revoked: return "-"
        }
    }
}

struct CoverageStrip {
    var name: String
    /// nil before the group's first purchase.
    var cells: [CoverageKind?]
}

/// The strips of a customer's subscription groups over one shared span, `width` slices each.
struct CoverageStrips {
    var start: Timestamp
    var end: Timestamp
    var strips: [CoverageStrip]
}

/// A customer's subscriptions by group as of the instant shown (bought by then), in the order first bought, each
/// named by the entitlement one of its transactions decided, else the one the catalog gives its latest (else the
/// group's id).
struct CoverageGroup {
    var name: String
    var transactions: [Transaction]
}

func coverageGroups(_ records: CustomerRecords, view: CustomerView, catalog: Catalog) -> [CoverageGroup] {
    var groups: [String: [Transaction]] = [:]
    var order: [String] = []
    let instant = view.instant.millisecondsSince1970
    // A product is in one subscription group: a sighting that does not name it (an in_app entry, a V1 notification's
    // receipt) is in the group other sightings of the product name, not a strip of its own beside it.
    var groupOfProduct: [String: String] = [:]
    for t in records.transactions {
        if let product = t.productId, let group = t.subscriptionGroupIdentifier, groupOfProduct[product] == nil { groupOfProduct[product] = group }
    }
    for t in records.transactions where t.expiresDate != nil && (t.purchaseDate?.millisecondsSince1970 ?? .max) <= instant {
        let key = t.subscriptionGroupIdentifier ?? t.productId.flatMap { groupOfProduct[$0] } ?? t.productId ?? "?"
        if groups[key] == nil { order.append(key) }
        groups[key, default: []].append(t)
    }
    return order.map { key in
        let transactions = groups[key] ?? []
        let decided = view.entitlements.first { e in transactions.contains { $0.transactionId == e.transactionId } }?.name
        let name = decided ?? transactions.reversed().lazy.compactMap(catalog.entitlement(of:)).first ?? key
        return CoverageGroup(name: name, transactions: transactions)
    }
}

/// One strip per subscription group over a shared span: from the first purchase to the instant, or, when
/// everything lapsed long before the instant, to a quarter of the span past the last expiry, so the
/// history stays readable instead of shrinking into a few cells of a long gap.
func coverageStrips(_ records: CustomerRecords, view: CustomerView, groups: [CoverageGroup], width: Int) -> CoverageStrips? {
    let subscriptions = groups.flatMap(\.transactions)
    guard width > 4, !subscriptions.isEmpty else { return nil }
    let instant = view.instant.millisecondsSince1970
    guard let start = subscriptions.compactMap(\.purchaseDate).min()?.millisecondsSince1970, start < instant else { return nil }
    let known = records.renewalInfos.filter { $0.seenAt.millisecondsSince1970 <= instant }.sorted { $0.seenAt < $1.seenAt }
    let graceEnds = known.compactMap(\.info.gracePeriodExpiresDate?.millisecondsSince1970)
    let day: Int64 = 86_400_000
    // A billing retry covers nothing, yet the strip runs through it: to the renewal info that ended it, else as long
    // as Apple retries (a strip that stopped a week past the expiry hid a retry given up after 60 days).
    let latestExpiry = subscriptions.compactMap(\.expiresDate?.millisecondsSince1970).max()
    let retryEnd = known.lastIndex { $0.info.isInBillingRetryPeriod == true }.map { last in
        known[(last + 1)...].first?.seenAt.millisecondsSince1970 ?? min(instant, clampedSum(latestExpiry ?? start, 60 * day))
    }
    let lastCovered = ([latestExpiry, retryEnd].compactMap { $0 } + graceEnds).max() ?? start
    let margin = max(clampedDifference(lastCovered, start) / 4, 7 * day)
    let pastLast = clampedSum(lastCovered, margin)
    let end = lastCovered < instant && pastLast < instant ? pastLast : instant
    let slice = max(1, clampedDifference(end, start) / Int64(width))
    // Apple's longest grace period: a grace end further than this past an expiry is not that expiry's.
    let longestGrace: Int64 = 28 * day
    // How long Apple retries billing after an expiry.
    let longestRetry: Int64 = 60 * day
    let strips = groups.map { group in
        let transactions = group.transactions
        // The group's renewal infos as the ledger knew them at the instant: the last says whether billing is being
        // retried; each one's grace end marks the grace period that followed an expiry, also one since recovered.
        let renewals = records.renewalInfos.filter { seen in
            seen.seenAt.millisecondsSince1970 <= instant && transactions.contains { $0.originalTransactionId == seen.info.originalTransactionId }
        }
        let groupGraceEnds = renewals.compactMap(\.info.gracePeriodExpiresDate?.millisecondsSince1970)
        // The group's periods by their end, once (a cell asks which ended last before it).
        let byExpiry = transactions.filter { $0.expiresDate != nil }
            .sorted { ($0.expiresDate?.millisecondsSince1970 ?? 0) < ($1.expiresDate?.millisecondsSince1970 ?? 0) }
        let expiries = byExpiry.compactMap(\.expiresDate?.millisecondsSince1970)
        let lastExpiry = expiries.last ?? start
        let firstPurchase = transactions.compactMap(\.purchaseDate?.millisecondsSince1970).min() ?? start
        // Where each period's cover ends: its expiry; an upgraded one's at the upgrade (its revocation, else the next
        // purchase of the group: legacy data marks it upgraded and gives no date), so its days until then are paid.
        let purchases = transactions.compactMap(\.purchaseDate?.millisecondsSince1970).sorted()
        let coverEnds = transactions.map { t -> Int64 in
            let expires = t.expiresDate?.millisecondsSince1970 ?? .min
            guard t.isUpgraded == true else { return expires }
            if let revoked = t.revocationDate?.millisecondsSince1970 { return min(revoked, expires) }
            let bought = t.purchaseDate?.millisecondsSince1970 ?? .max
            return min(purchases.first { $0 > bought } ?? bought, expires)
        }
        let cells: [CoverageKind?] = (0..<width).map { index in
            let cellStart = start + slice * Int64(index)
            let t = cellStart + slice / 2
            // A cell is the span it stands for, not its middle instant: periods shorter than a cell (a sandbox's
            // five-minute months) cover the cells they fall in, or a strip of gaps sat under an active entitlement.
            let cellEnd = min(cellStart + slice, clampedSum(instant, 1))
            if cellEnd <= firstPurchase { return nil }
            let covering = transactions.indices.filter {
                (transactions[$0].purchaseDate?.millisecondsSince1970 ?? .max) < cellEnd && cellStart < coverEnds[$0]
            }.map { transactions[$0] }
            // A refund standing in this span of the strip (not one Apple reversed); a family revoke, no refund, ends
            // access all the same.
            let revoked = covering.compactMap { c in
                (c.revocationDate?.millisecondsSince1970 ?? .max) < cellEnd ? view.revocations[c.transactionId] ?? nil : nil
            }
            if revoked.contains(where: \.isRefund) { return .refund }
            if !revoked.isEmpty { return .revoked }
            if let paid = covering.last {
                return paid.offerDiscountType == .freeTrial ? .trial : .paid
            }
            let expired = expiries.last { $0 <= t }
            // A period whose access was taken back (refunded, revoked) is followed by no grace and no billing retry,
            // whatever a renewal info says: the entitlement reads "refunded", and the strip ran two months of retry.
            let ended = byExpiry.last { ($0.expiresDate?.millisecondsSince1970 ?? .max) <= t }
            if let ended, let taken = view.revocations[ended.transactionId] ?? nil, taken.date.millisecondsSince1970 <= t { return .gap }
            if let expired, groupGraceEnds.contains(where: { t < $0 && clampedDifference($0, expired) <= longestGrace }) {
                return .grace
            }
            // Billing retry as it stood then: the renewal info known at that point (a retry since recovered, or since
            // given up, stays a retry on the days it ran, whatever the instant shown), and for the current gap, before
            // any was known, the first learned; only infos seen after that gap's own expiry (a retry of an earlier
            // period says nothing of a later lapse), and no longer than Apple retries (60 days).
            let sinceExpiry = renewals.filter { $0.seenAt.millisecondsSince1970 >= clampedDifference(expired ?? .min, 86_400_000) }
            let then = sinceExpiry.last { $0.seenAt.millisecondsSince1970 <= t }?.info ?? (t >= lastExpiry ? sinceExpiry.first?.info : nil)
            let retrying = clampedDifference(t, expired ?? .min) <= longestRetry
            if then?.isInBillingRetryPeriod == true, retrying { return .retry }
            return .gap
        }
        return CoverageStrip(name: group.name, cells: cells)
    }
    return CoverageStrips(start: Timestamp(millisecondsSince1970: start), end: Timestamp(millisecondsSince1970: end), strips: strips)
}

// MARK: Transaction

func drawTransaction(_ state: AppState, _ p: inout Painter, _ body: Body) {
    guard let t = state.transaction else {
        _ = p.text(notLoaded(state) ?? "no transaction open", x: 1, y: body.y + 1, role: "ui.text.muted")
        return
    }
    // (Its verification in the words the customer's transactions pane uses: "plain JSON", not the enum's name.)
    p.section("Transaction \(t.transactionId)  \(verificationCell(t.verification).text)", x: 0, y: body.y, width: state.width, focused: true)
    // A refund reversed since (a REFUND_REVERSED notification) leaves the revocation fields as Apple sent them: the
    // customer's view knows it no longer stands, and the fields say so rather than read as a refund.
    let reversed = revocationReversed(t, state)
    let fields = transactionFields(t).map { field in
        let meaning = field.key == "revocationDate" && reversed ? reversedRefundMeaning : fieldMeaning(field.key, of: t)
        return (key: field.key, value: meaning.map { "\(field.value)  (\($0))" } ?? field.value)
    }
    // The selected field whole on the last line; a value too long for it (a long product id, a source's path) takes up
    // to three more lines from the list's rows, so that every field can be read in full.
    let selected = fields[safe: state.transactionScroll.selected]
    // (Cut at the edge, not between words: a value is mostly one long word. A source keeps its one line, its end
    // shown: what tells sources apart is the file, the record and the place.)
    let selectedLines = selected.map { wrapped("\($0.key): \($0.value)", width: state.width - 2) } ?? []
    let extra = selected?.key.hasPrefix("source[") == true ? 0 : max(0, min(selectedLines.count - 1, 3, body.height - 6))
    p.table(
        x: 0, y: body.y + 1, width: state.width, height: body.height - 2 - extra,
        columns: [Column("field", 28), Column("value", 20, flex: true)], rows: fields.count, position: state.transactionScroll
    ) { row, column in
        let field = fields[row]
        if column == 0 { return TableCell(field.key, role: field.key.hasPrefix("legacy.") ? "ui.text.muted" : "ui.text") }
        let danger = field.key.hasPrefix("revocation") && !reversed
        // A source's path is alike from row to row: what tells them apart is the record and where in it.
        return TableCell(field.value, role: danger ? "status.danger" : "ui.text", keepEnd: field.key.hasPrefix("source["))
    }
    if extra > 0 {
        for index in 0...extra {
            // The last line, with more to say than the lines hold, is cut at the edge.
            let text = index < extra ? selectedLines[index] : selectedLines[index...].joined(separator: " ")
            _ = p.text(text, x: 1, y: body.y + body.height - 1 - extra + index, role: "ui.text.muted", width: state.width - 2)
        }
    } else if let field = selected {
        // One line: as far as it fits. A source (`path#record location`) too long for the line keeps its end: the
        // file's name, the record and where in it.
        drawSelectedLine("\(field.key): \(field.value)", &p, body, width: state.width, keepEnd: field.key.hasPrefix("source["))
    }
}

/// What the Transaction screen says beside `revocationDate`, and its export on a row after it, when the refund was
/// reversed.
let reversedRefundMeaning = "the refund was reversed: access restored"

/// Whether the customer's view, at its instant, holds this transaction's refund reversed: revoked by its fields, no
/// revocation standing, and not an upgrade's cancellation (the rule the Transactions pane's "reversed" follows).
func revocationReversed(_ t: Transaction, _ state: AppState) -> Bool {
    guard let view = state.customerView, let revocation = view.revocations[t.transactionId], revocation == nil,
        t.isUpgraded != true, let date = t.revocationDate
    else { return false }
    return date.millisecondsSince1970 <= view.instant.millisecondsSince1970
}

/// What a numeric code Apple sends means, shown beside it on the transaction screen (the export keeps the code).
func fieldMeaning(_ key: String, of t: Transaction) -> String? {
    switch key {
    case "revocationReason":
        switch t.revocationReason {
        case .other?: "other reason, such as an accidental purchase"
        case .appIssue?: "an issue in the app"
        default: nil
        }
    case "offerType":
        switch t.offerType {
        case .introductory?: "introductory offer"
        case .promotional?: "promotional offer"
        case .offerCode?: "offer code"
        case .winBack?: "win-back offer"
        default: nil
        }
    default: nil
    }
}

// MARK: Refunds

/// What the flag queue says when it shows no row: none of this status (of this product), or, when flags were read
/// and the `/` filter matches none of them, that and the key that reads more of the queue.
private func emptyQueueText(_ state: AppState) -> String {
    let status = state.flagStatus.map { "\($0.rawValue) " } ?? ""
    if state.flags.isEmpty, let text = notLoaded(state) { return text }
    if state.flags.isEmpty, state.flagFilter == nil || flagFilterPreviewed(state) {
        let severity = state.flagSeverity.map { "\($0.rawValue) " } ?? ""
        if let product = state.flagProduct { return "no \(status)\(severity)flags of \(product) here (5 shows every product's)" }
        if !severity.isEmpty { return "no \(status)\(severity)flags here (5 shows every severity)" }
        // Back in time the queue holds the flags raised by then, in their statuses now: said, or "none here" read as
        // none at all while the Overview counted hundreds.
        if let asOf = state.asOf {
            let now = status.isEmpty ? "" : " are \(status)now (f changes the status;"
            return "no flags raised by \(Format.instant(asOf))\(now)\(now.isEmpty ? " (" : " ")t, then now, shows every flag)"
        }
        return "no flags \(status)here (f changes the status shown)"
    }
    // A filter being typed, of the flags loaded; else the ledger found none (the queue's scope is in the title).
    if flagFilterPreviewed(state) {
        return "none of the \(Format.count(state.flags.count)) flags loaded matches; Enter searches the whole queue"
    }
    return "no flags of the queue match \"\(state.flagFilter ?? "")\" (Esc clears the filter)"
}

func drawRefunds(_ state: AppState, _ p: inout Painter, _ body: Body) {
    let flags = visibleFlags(state)
    var title = "Refund flags: \(state.flagStatus?.rawValue ?? "all")"
    if let severity = state.flagSeverity { title += ", \(severity.rawValue)" }
    if let product = state.flagProduct { title += " of \(product)" }
    if state.environment == .all, let environment = state.flagEnvironment?.stored { title += " in \(environment)" }
    // Of how many the query matches (its `/` filter the ledger's), once more are there than are loaded (the rest
    // load as the list scrolls); while a filter is typed, of the loaded flags, which are all it has looked at yet.
    let previewed = flagFilterPreviewed(state)
    // Not read (the ledger went away before the queue could be): no count, which would read as none ("0 shown of 988").
    let unread = notRead(state, empty: state.flags.isEmpty)
    if !unread { title += "  \(flags.count) shown" }
    if !unread, previewed, state.flagsNext != nil || state.flagsPrevious != nil || state.flagsReadFilter != nil {
        title += " of \(Format.count(state.flags.count)) loaded (Enter searches the queue)"
    } else if !unread, let total = state.flagTotal, total > state.flags.count {
        title += " of \(Format.count(total))"
    }
    if !state.marked.isEmpty {
        title += "  \(state.marked.count) marked"
        let aside = state.markedAside.filter { state.marked.contains($0.id) }.count
        // (Marked, then left out by a `/` filter read since: the triage keys act on them too.)
        if aside > 0 { title += " (\(aside) not shown)" }
    }
    if let filter = shownFlagFilter(state) { title += "  filter \"\(filter)\"" }
    p.section(title, x: 0, y: body.y, width: state.width, focused: true)
    if flags.isEmpty {
        _ = p.text(emptyQueueText(state), x: 1, y: body.y + 2, role: "ui.text.muted")
        return
    }
    // Money cut loses its currency ("119.99 …"): the amount keeps its width, as ids do.
    let short = state.width < narrowFlagTable
    // The severity and customer columns as wide as the widest shown (a demo's C208 needs 4 cells, a large ledger's
    // C225607 7): at 80 columns the product gets what they would leave empty.
    let customerWidth = max(4, flags.map { $0.customerId.map { "C\($0)".count } ?? 1 }.max() ?? 4)
    var columns = [
        Column(" ", 1), Column("sev", severityWidth(flags, short: short)), Column("rule", 19), Column("status", 8),
        Column("cust", customerWidth, keepsWidth: true), Column("env", 4, drops: 1),
        Column("product", 8, flex: true), Column("amount", 10, right: true, keepsWidth: true), Column("age", 4, right: true),
        Column("due", 6),
    ]
    // From 120 columns, who last moved each flag and their note, in the room the product would have taken.
    let triageShown = flagQueueHasTriageColumn(state)
    if triageShown { columns.append(Column("last triage", 24, flex: true)) }
    let whoOnItsOwnLine = flagQueueRows(state) < state.listRows
    // A queue of one status (the title names it) gives the rule the status column's room.
    let statusShown = state.flagStatus == nil
    if !statusShown { columns.remove(at: 3) }
    let instant = state.instant
    p.table(
        x: 0, y: body.y + 1, width: state.width, height: body.height - (whoOnItsOwnLine ? 3 : 2), columns: columns, rows: flags.count,
        position: state.flagList,
        marked: { state.marked.contains(flags[$0].id) }
    ) { row, shownColumn in
        let f = flags[row]
        let column = statusShown || shownColumn < 3 ? shownColumn : shownColumn + 1
        switch column {
        case 0: return TableCell(state.marked.contains(f.id) ? "*" : " ", role: "ui.mark")
        case 1: return severityCell(f, short: short)
        case 2: return TableCell(f.rule)
        case 3: return statusCell(f)
        case 4: return TableCell(f.customerId.map { "C\($0)" } ?? "-", role: "ui.accent")
        case 5: return TableCell(environmentLabel(f.environment), role: f.environment == .production ? "ui.text" : "status.warn")
        case 6: return TableCell.id(f.productId ?? "-")
        case 7: return amountCell(f)
        case 8: return ageCell(f, at: instant)
        case 9: return dueCell(f, at: instant)
        default:
            return TableCell(
                state.flagTriage[f.id].map { triageAgo($0, at: instant, travelled: state.asOf != nil) } ?? "", role: "ui.text.muted")
        }
    }
    // The selected flag's detail whole on the last line, then who last moved it, then its id.
    guard let f = flags[safe: state.flagList.selected] else { return }
    if whoOnItsOwnLine {
        _ = p.text(flagLine(f, triage: nil), x: 1, y: body.y + body.height - 2, role: "ui.text.muted", width: state.width - 2)
        drawSelectedLine(state.flagTriage[f.id].map(triageSummary) ?? "", &p, body, width: state.width)
    } else {
        drawSelectedLine(flagLine(f, triage: state.flagTriage[f.id]), &p, body, width: state.width)
    }
}

// A flag's cells, on the queue and on the customer's flags pane.

/// A flag's severity, in four cells when `short` (on a narrow screen the rule needs them more).
func severityCell(_ f: RefundFlag, short: Bool = false) -> TableCell { severityCell(f.severity, short: short) }

func severityCell(_ severity: Severity, short: Bool = false) -> TableCell {
    let text = !short ? severity.rawValue : severity == .critical ? "crit" : severity == .medium ? "med" : severity.rawValue
    return TableCell(text, role: severityRole(severity))
}

/// The severity column's width: four cells when `short`, else the widest severity among `flags` ("critical" 8,
/// "medium" 6), so the product keeps the cells no flag shown needs.
func severityWidth(_ flags: [RefundFlag], short: Bool) -> Int {
    short ? 4 : max(3, flags.map { $0.severity.rawValue.count }.max() ?? 3)
}

/// A severity's colour, wherever one is shown: the worst two in danger's, medium in warning's, info muted.
func severityRole(_ severity: Severity) -> String {
    severity >= .high ? "status.danger" : severity == .medium ? "status.warn" : severity == .low ? "ui.text" : "ui.text.muted"
}

/// Under this many columns the flag tables give the severity four cells, and the rule the rest.
let narrowFlagTable = 72

func statusCell(_ f: RefundFlag) -> TableCell {
    switch f.status {
    case .open: TableCell("open", role: "status.warn")
    case .acknowledged: TableCell("acked", role: "ui.text")
    case .resolved: TableCell("resolved", role: "status.ok")
    }
}

func amountCell(_ f: RefundFlag) -> TableCell {
    TableCell(f.amount.map { Money.withCurrency($0, currency: f.currency) } ?? "-")
}

/// How long ago the flag was raised. (As of an instant before that: it had no age, and no deadline ran.)
func ageCell(_ f: RefundFlag, at instant: Timestamp) -> TableCell {
    let age = clampedDifference(instant.millisecondsSince1970, f.at.millisecondsSince1970)
    return TableCell(age < 0 ? "-" : Format.span(age), role: "ui.text.muted")
}

/// A consumption request's time left to answer (12 hours from the request), open or acknowledged.
func dueCell(_ f: RefundFlag, at instant: Timestamp) -> TableCell {
    guard let left = consumptionTimeLeft(f, at: instant) else { return TableCell("") }
    return TableCell(left < 0 ? "passed" : Format.span(left), role: left < 3 * 3_600_000 ? "status.danger" : "status.warn")
}

/// How long a consumption request's flag has left before Apple's deadline at an instant (negative: passed); nil for
/// another flag, a resolved one, or one raised after the instant. (Acknowledged, the clock still runs: someone looking
/// is not an answer.)
public func consumptionTimeLeft(_ f: RefundFlag, at instant: Timestamp) -> Int64? {
    let now = instant.millisecondsSince1970
    guard f.rule == "consumption-request", f.status != .resolved, f.at.millisecondsSince1970 <= now else { return nil }
    return clampedDifference(consumptionDeadline(f), now)
}

/// The same, as the commands' text says it after the flag's detail: "  (deadline passed)", "  (2h left)"; empty for no
/// deadline.
public func consumptionDue(_ f: RefundFlag, at instant: Timestamp) -> String {
    guard let left = consumptionTimeLeft(f, at: instant) else { return "" }
    return left < 0 ? "  (deadline passed)" : "  (\(Format.span(left)) left)"
}

// MARK: Imports

/// How many sources / rejected records there are: the ledger's running total when the overview has it,
/// else what is loaded, with "+" while more pages remain.
func importsCount(_ state: AppState, pane: Int) -> String {
    let loaded = pane == 0 ? state.sources.count : state.rejected.count
    if let counts = state.overview?.counts {
        let total = pane == 0 ? counts.sources : counts.rejectedRecords
        if total >= loaded { return Format.count(total) }
    }
    return Format.count(loaded) + (state.importsMore[pane] ? "+" : "")
}

/// The lines of the Imports screen's two lists under their titles: the sources' table (its header and rows), and the
/// rejected records' table with the selected record's reason under it (or the line saying there are none). Half the
/// body each, but a list whose every row is loaded and fits in less gives what it leaves to the other: at 60x16 a
/// fifth source was hidden above six empty lines under "none".
func importsSplit(_ state: AppState) -> (sources: Int, rejected: Int) {
    let bodyHeight = state.height - 3
    let half = max(3, bodyHeight / 2)
    var sources = half - 1
    var rejected = bodyHeight - half - 1
    let unbounded = Int.max / 4
    let sourcesWant = state.sources.isEmpty ? 1 : state.importsMore[0] ? unbounded : 1 + state.sources.count
    let rejectedWant = state.rejected.isEmpty ? 1 : state.importsMore[1] ? unbounded : 2 + state.rejected.count
    if rejectedWant < rejected, sourcesWant > sources {
        let moved = min(rejected - rejectedWant, sourcesWant - sources)
        sources += moved
        rejected -= moved
    } else if sourcesWant < sources, rejectedWant > rejected {
        let moved = min(sources - sourcesWant, rejectedWant - rejected)
        sources -= moved
        rejected += moved
    }
    return (sources, rejected)
}

/// The rows of one Imports list on screen (its table's header, and the rejected list's reason line, left out).
func importsRows(_ state: AppState, pane: Int) -> Int {
    let split = importsSplit(state)
    return max(1, pane == 0 ? split.sources - 1 : split.rejected - 2)
}

func drawImports(_ state: AppState, _ p: inout Painter, _ body: Body) {
    let split = importsSplit(state)
    // A list not read before the ledger went away has no count (the Overview's, read earlier, is of then).
    let sourcesCount = notRead(state, empty: state.sources.isEmpty) ? "" : "\(importsCount(state, pane: 0)), "
    p.section("Sources (\(sourcesCount)newest first)", x: 0, y: body.y, width: state.width, focused: state.importsPane == 0)
    let sources = state.sources
    if sources.isEmpty {
        _ = p.text(notLoaded(state) ?? "nothing imported yet: receiptdesk import FILE...", x: 1, y: body.y + 1, role: "ui.text.muted")
    } else {
        p.table(
            x: 0, y: body.y + 1, width: state.width, height: split.sources,
            // (A time cut to "2026-11-26 2…" says nothing: the source's path gives way first.)
            // (Counts as wide as the widest shown: a source of a million records read "1,000,…".)
            columns: [
                Column("source", 20, flex: true, keepEnd: true), Column("first imported", 16, keepsWidth: true),
                Column("read", countWidth(sources.map(\.counts.read), atLeast: 7), right: true, drops: 1),
                Column("new", countWidth(sources.map(\.counts.imported), atLeast: 7), right: true),
                Column("dup", countWidth(sources.map(\.counts.duplicate), atLeast: 7), right: true),
                Column("rej", countWidth(sources.map(\.counts.rejected), atLeast: 5), right: true), Column("sum", 3),
            ],
            rows: sources.count, position: state.importPositions[0], focused: state.importsPane == 0
        ) { row, column in
            let s = sources[row]
            switch column {
            case 0: return TableCell(s.path)
            // Not finished: an import running now, or one cut short (the same import again resumes it); its counts are
            // its committed batches'.
            // When it was first imported, the order of the list ("newest first"): a later run that retried its
            // rejected records moves its completion time, and the list read out of order by it (16:14 above 16:15).
            case 1: return TableCell(s.completedAt == nil ? "unfinished" : Format.minute(s.startedAt), role: s.completedAt == nil ? "status.warn" : "ui.text")
            case 2: return TableCell(Format.count(s.counts.read))
            case 3: return TableCell(Format.count(s.counts.imported))
            case 4: return TableCell(Format.count(s.counts.duplicate), role: "ui.text.muted")
            case 5: return TableCell(Format.count(s.counts.rejected), role: s.counts.rejected > 0 ? "status.warn" : "ui.text.muted")
            default:
                // Whether read = new + dup + rej: every record of the source accounted for.
                let ok = s.completedAt == nil || s.counts.reconciles
                return TableCell(ok ? "ok" : "bad", role: ok ? "status.ok" : "status.danger")
            }
        }
    }
    let y = body.y + 1 + split.sources
    let rejectedCount = notRead(state, empty: state.rejected.isEmpty) ? "" : " (\(importsCount(state, pane: 1)))"
    p.section("Rejected records\(rejectedCount); Enter shows the raw bytes", x: 0, y: y, width: state.width, focused: state.importsPane == 1)
    let rejected = state.rejected
    if rejected.isEmpty {
        // (Not read, during an outage: not "none", which would say something of the ledger that was never read.)
        if let why = notLoaded(state) {
            _ = p.text(why, x: 1, y: y + 1, role: "ui.text.muted")
        } else {
            _ = p.text("none: every record was imported or a duplicate", x: 1, y: y + 1, role: "status.ok")
        }
        return
    }
    // The last line holds the selected record's reason whole while the list has focus (the list keeps its
    // height on Tab).
    p.table(
        x: 0, y: y + 1, width: state.width, height: split.rejected - 1,
        // The code as wide as the widest loaded ("legacyTransactionReceipt" was cut at 16): the reason gives way, and
        // the last line holds it whole.
        columns: [
            Column("record", 24, keepEnd: true), Column("code", min(26, max(4, rejected.map { DisplayWidth.of(Sanitize.text($0.code)) }.max() ?? 4)), keepsWidth: true),
            Column("reason", 20, flex: true), Column("bytes", countWidth(rejected.map(\.size), atLeast: 7), right: true, drops: 1),
        ],
        rows: rejected.count, position: state.importPositions[1], focused: state.importsPane == 1
    ) { row, column in
        let r = rejected[row]
        switch column {
        case 0: return TableCell("\(r.sourcePath)#\(r.index)")
        case 1: return TableCell(r.code, role: "status.warn")
        case 2: return TableCell(r.message)
        default: return TableCell(Format.count(r.size), role: "ui.text.muted")
        }
    }
    if state.importsPane == 1, let r = rejected[safe: state.importPositions[1].selected] {
        drawSelectedLine("\(r.code): \(r.message)", &p, body, width: state.width, role: "status.warn")
    }
}

/// The selected item whole on the body's last line, as far as the line holds it: a list's cells cut it at 80
/// columns.
func drawSelectedLine(_ text: String, _ p: inout Painter, _ body: Body, width: Int, role: String = "ui.text.muted", keepEnd: Bool = false) {
    _ = p.text(text, x: 1, y: body.y + body.height - 1, role: role, width: width - 2, keepEnd: keepEnd)
}

/// The flag queue's rows on screen: under 120 columns, once any flag shown has been moved by someone, who last moved
/// the selected one goes on a line of its own under its detail (after it, on one line, it was cut at 80 columns), and
/// the list has one row fewer. (A click finds its row by this.)
func flagQueueRows(_ state: AppState) -> Int {
    !flagQueueHasTriageColumn(state) && !state.flagTriage.isEmpty ? max(1, state.listRows - 1) : state.listRows
}

/// Whether the flag queue is wide enough (120 columns) for a "last triage" column.
func flagQueueHasTriageColumn(_ state: AppState) -> Bool { state.width >= 120 }

/// A column of counts as wide as the widest of `values` written with separators (at least `atLeast`): a figure cut
/// with an ellipsis ("40,0…") reads as another figure.
func countWidth(_ values: [Int], atLeast: Int) -> Int {
    max(atLeast, values.map { Format.count($0).count }.max() ?? 0)
}

/// The first row a list of `rows` rows shows so that the selected one is in view, scrolled no further than needed.
func firstShownRow(selected: Int, count: Int, rows: Int) -> Int {
    min(max(0, selected - rows + 1), max(0, count - rows))
}

/// `a + b`, pinned at the ends of Int64 instead of trapping: instants from data can be anything.
func clampedSum(_ a: Int64, _ b: Int64) -> Int64 {
    let (sum, overflow) = a.addingReportingOverflow(b)
    return overflow ? (b > 0 ? .max : .min) : sum
}

/// `a - b`, pinned at the ends of Int64 instead of trapping.
func clampedDifference(_ a: Int64, _ b: Int64) -> Int64 {
    let (difference, overflow) = a.subtractingReportingOverflow(b)
    return overflow ? (b < 0 ? .max : .min) : difference
}

/// " sbx" after an overview line's product while every environment is shown and the flag is not about production (a
/// sandbox spike is a test, and the same product and day can alarm in both).
func environmentMark(_ state: AppState, _ flag: RefundFlag) -> String {
    guard state.environment == .all, let environment = flag.environment, environment != .production else { return "" }
    return " " + environmentLabel(environment)
}

/// An environment as a list column shows it: `prod`, `sbx`, `xc` (Xcode), `lt` (local testing), the first letters
/// of another, `-` when unknown. (Cut to four, "Xcod" and "Loca" read as words cut short.)
func environmentLabel(_ environment: Environment?) -> String {
    switch environment {
    case .production?: "prod"
    case .sandbox?: "sbx"
    case .xcode?: "xc"
    case .localTesting?: "lt"
    case let other?: String(other.rawValue.prefix(4))
    case nil: "-"
    }
}
