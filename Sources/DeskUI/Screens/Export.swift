import Entitlements
import LedgerQueries
import ReceiptModel

/// The fields of a transaction as the transaction screen lists them: every field it has, in Apple's order
/// (``Transaction/fields``), then the legacy fields as they came, then provenance.
public func transactionFields(_ transaction: Transaction?) -> [(key: String, value: String)] {
    guard let t = transaction else { return [] }
    var fields: [(key: String, value: String)] = []
    func add(_ key: String, _ value: String?) { if let value { fields.append((key, value)) } }
    for field in Transaction.fields {
        switch field.value(t) {
        case .text(let text)?: add(field.name, text)
        case .integer(let number)?: add(field.name, field.kind == .milliunits ? Money.format(number, currency: t.currency) : "\(number)")
        case .date(let date)?: add(field.name, "\(date.iso8601)  (\(date.millisecondsSince1970))")
        case .flag(let flag)?: add(field.name, flag ? "true" : "false")
        case .json(let json)?: add(field.name, jsonText(json))
        case nil: break
        }
    }
    add("verification", t.verification.rawValue)
    for member in t.legacy.members { add("legacy.\(member.key)", jsonText(member.value)) }
    for member in t.extra.members { add("extra.\(member.key)", jsonText(member.value)) }
    for (index, source) in t.sources.enumerated() { add("source[\(index)]", source.description) }
    return fields
}

/// A spreadsheet-safe CSV cell: quoted when needed, and a leading `=`, `+`, `-`, `@`, tab or CR made inert.
public func csvCell(_ text: String) -> String {
    var value = Sanitize.text(text)
    if let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) { value = "'" + value }
    if value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) {
        return "\"" + value.replacing("\"", with: "\"\"") + "\""
    }
    return value
}

/// The columns of a flag in CSV, the dashboard's export and `refunds --csv` alike.
public let flagCSVHeader = ["id", "rule", "severity", "status", "customer", "environment", "transactionId", "productId", "amount", "currency", "at", "detail"]

/// A flag's cells under ``flagCSVHeader`` (not yet quoted): the amount in units of its currency, as shown.
public func flagCSVRow(_ f: RefundFlag) -> [String] {
    [
        f.id, f.rule, f.severity.rawValue, f.status.rawValue, f.customerId.map { "C\($0)" } ?? "", f.environment?.rawValue ?? "",
        f.transactionId ?? "", f.productId ?? "", f.amount.map { Money.format($0, currency: f.currency) } ?? "", f.currency ?? "", f.at.iso8601, f.detail,
    ]
}

/// The current view as CSV: a header line naming the view, filter, instant and operator, then the rows.
public func exportCSV(_ state: AppState) -> String {
    var filter = "environment=\(state.screenEnvironment.rawValue)"
    var rows: [[String]] = []
    switch state.screen {
    case .overview:
        // The overview's own figures (it wrote the customer list, which the Overview does not show): the ledger's
        // counts, flags by severity and status, and refunds a day (UTC), one figure a row.
        rows.append(["figure", "key", "value"])
        if let data = state.overview {
            let c = data.counts
            for (name, value) in [
                ("customers", c.customers), ("transactions", c.transactions), ("refunded transactions", c.refundedTransactions),
                ("open flags", c.openFlags), ("sources", c.sources), ("raw records", c.rawRecords), ("rejected records", c.rejectedRecords),
                ("renewal infos", c.renewalInfos), ("notifications", c.notifications),
            ] {
                rows.append(["count", name, "\(value)"])
            }
            // The tile's figure, which the days below sum to (a reader had to add 30 rows to check it).
            rows.append(["count", "refunds 30d", "\(data.refunds30)"])
            rows.append(["last import", "", c.lastImport?.iso8601 ?? ""])
            for f in data.flagCounts { rows.append(["flags", "\(f.severity.rawValue) \(f.status.rawValue)", "\(f.count)"]) }
            for (day, count) in data.refunds90.counts.enumerated() {
                let start = data.refunds90.firstDay.adding(milliseconds: Int64(day) * 86_400_000)
                rows.append(["refunds per day", String(start.iso8601.prefix(10)), "\(count)"])
            }
        }
    case .customers:
        if let text = state.customerQuery.filter { filter += " filter=\(text)" }
        filter += " sort=\(state.customerQuery.sort.rawValue)"
        if let at = state.customerQuery.activeAt { filter += " subscribed-at=\(at.iso8601)" }
        if state.customerQuery.withOpenFlags { filter += " with-open-flags" }
        // The rows loaded, when they are not the whole list: which of how many (the file alone said nothing of it).
        let page = state.customerPage
        if page.next != nil || state.customerOffset > 0 {
            filter += " rows=\(state.customerOffset + 1)-\(state.customerOffset + page.rows.count)-of-\(page.total)\(page.totalIsLowerBound ? "+" : "")"
        }
        rows.append(["customer", "identifiers", "environments", "transactions", "last purchase", "latest expiry", "refunds", "open flags", "access"])
        for c in state.customerPage.rows {
            rows.append([
                c.displayId, c.identifiers.map { "\($0.kind):\($0.value)" }.joined(separator: " "), c.environments.joined(separator: " "),
                "\(c.transactionCount)", c.lastPurchase?.iso8601 ?? "", c.latestExpiry?.iso8601 ?? "", "\(c.refunds)", "\(c.openFlags)",
                // (As the list shows it: the engine's judgement once made, else what the list's figures know.)
                customerAccessCell(state, c).text.replacing(state.glyphs.ellipsis, with: ""),
            ])
        }
    case .customer:
        filter += " customer=C\(state.customer?.records.id ?? 0)"
        rows.append(["at", "seenAt", "kind", "productId", "transactionId", "detail"])
        for e in state.customerView?.timeline ?? [] {
            rows.append([e.at.iso8601, e.seenAt.iso8601, e.kind.rawValue, e.productId ?? "", e.transactionId ?? "", e.detail])
        }
    case .transaction:
        filter += " transaction=\(state.transaction?.transactionId ?? "")"
        rows.append(["field", "value"])
        // Values as Apple sent them, and a refund reversed since said on a row of its own after revocationDate, as the
        // screen says it beside it: the fields alone read as a refund that stands.
        let reversed = state.transaction.map { revocationReversed($0, state) } ?? false
        for field in transactionFields(state.transaction) {
            rows.append([field.key, field.value])
            if field.key == "revocationDate", reversed { rows.append(["revocationReversed", reversedRefundMeaning]) }
        }
    case .refunds:
        filter = queueScope(state)
        rows.append(flagCSVHeader)
        rows += visibleFlags(state).map(flagCSVRow)
    case .imports:
        rows.append(["record", "source", "index", "offset", "kind", "code", "message"])
        for r in state.rejected {
            rows.append(["\(r.id)", r.sourcePath, "\(r.index)", "\(r.offset)", r.kind, r.code, r.message])
        }
    }
    let header = "# receiptdesk export: view=\(state.screen.title.lowercased()) \(filter) as-of=\(state.instant.iso8601) operator=\(state.operatorName) ledger=\(state.ledgerName)\(state.isDemo ? " DEMO" : "")"
    return ([commentLine(header)] + rows.map { $0.map(csvCell).joined(separator: ",") }).joined(separator: "\n") + "\n"
}

/// What of the flag queue an export holds, as its first line and its message name it: the environment and status,
/// and the product, severity and `/` filter when they narrow it.
func queueScope(_ state: AppState) -> String {
    var scope = "environment=\(queueEnvironment(state).rawValue) status=\(state.flagStatus?.rawValue ?? "all")"
    if let product = state.flagProduct { scope += " product=\(product)" }
    if let severity = state.flagSeverity { scope += " severity=\(severity.rawValue)" }
    if let text = state.flagFilter { scope += " filter=\(text)" }
    return scope
}

/// The export's first line as a comment a CSV reader can skip (`#`, one column): never quoted, so its commas are
/// semicolons and its quotes and line breaks gone (the demo's ledger name made it a quoted cell a reader took for
/// its header).
func commentLine(_ text: String) -> String {
    String(text.map { character -> Character in
        switch character {
        case ",": ";"
        case "\"": "'"
        case "\n", "\r", "\r\n": " "
        default: character
        }
    })
}

/// A JSON value as one line of text.
func jsonText(_ value: JSONValue) -> String {
    switch value {
    case .null: "null"
    case .bool(let b): b ? "true" : "false"
    case .number(let n): n
    case .string(let s): "\"" + s + "\""
    case .array(let items): "[" + items.map(jsonText).joined(separator: ", ") + "]"
    case .object(let object): "{" + object.members.map { "\"\($0.key)\": " + jsonText($0.value) }.joined(separator: ", ") + "}"
    }
}
