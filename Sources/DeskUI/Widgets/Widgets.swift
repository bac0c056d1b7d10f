import Entitlements
import LedgerQueries
import ReceiptModel

/// A table column: title, width (fixed cells, or a share of what is left), alignment.
public struct Column: Sendable {
    public var title: String
    public var width: Int
    public var flex: Bool
    public var alignRight: Bool
    /// Whether a cut cell keeps its end (`…/app-receipts.ndjson`) rather than its start.
    public var keepEnd: Bool
    /// Whether the column keeps its width while any other can give a cell: an id a person reads out or
    /// compares is worth nothing cut, a time or a product name cut still says most of what it says.
    public var keepsWidth: Bool
    /// Whether, and in which order, the column leaves a table too narrow for all of them: 0 never, else the
    /// highest first. A table cut in every column says nothing whole; without its price a transaction's row still
    /// does.
    public var drops: Int

    public init(
        _ title: String, _ width: Int, flex: Bool = false, right: Bool = false, keepEnd: Bool = false,
        keepsWidth: Bool = false, drops: Int = 0
    ) {
        self.title = title
        self.width = width
        self.flex = flex
        self.alignRight = right
        self.keepEnd = keepEnd
        self.keepsWidth = keepsWidth
        self.drops = drops
    }

    /// The cells a table may take from its columns' widths (cutting their text) before one of them leaves.
    static let cutBeforeDropping = 4

    /// Which of `columns` a table `width` cells wide shows: all while their widths fit, give or take
    /// ``cutBeforeDropping``; else without those that drop, the highest ``drops`` first, until the rest fit.
    static func shown(_ columns: [Column], width: Int) -> [Int] {
        var shown = Array(columns.indices)
        func natural() -> Int { shown.reduce(max(0, shown.count - 1)) { $0 + columns[$1].width } }
        while natural() > width + cutBeforeDropping,
            let leaving = shown.filter({ columns[$0].drops > 0 }).max(by: { columns[$0].drops < columns[$1].drops })
        {
            shown.removeAll { $0 == leaving }
        }
        return shown
    }
}

/// One table cell: its text and, optionally, a role that colours it.
public struct TableCell: Sendable {
    public var text: String
    public var role: String?
    /// Whether this cell, cut, keeps its end whatever its column does (a source's file and record).
    public var keepEnd: Bool

    public init(_ text: String, role: String? = nil, keepEnd: Bool = false) {
        self.text = text
        self.role = role
        self.keepEnd = keepEnd
    }

    /// A product id or entitlement name: a dotted one (`org.getpure.pure-iphone.week`) is cut at its start, where
    /// the ids of one app are alike, so that the week and the month stay told apart.
    public static func id(_ text: String, role: String? = nil) -> TableCell {
        TableCell(text, role: role, keepEnd: isDotted(text))
    }

    /// Whether a name reads from its end, as reverse-DNS ids do.
    public static func isDotted(_ text: String) -> Bool { text.contains(".") }
}

/// Drawing helpers over a buffer with a theme: every widget names roles, never colours.
public struct Painter {
    public var buffer: ScreenBuffer
    public let theme: Theme
    public let glyphs: Glyphs

    public init(buffer: ScreenBuffer, theme: Theme, glyphs: Glyphs) {
        self.buffer = buffer
        self.theme = theme
        self.glyphs = glyphs
    }

    /// Text from `x`; cut to `width` cells (and the screen's edge) with the ellipsis where it is longer, so a cut
    /// line says it was cut.
    /// `keepEnd` cuts the start instead (`…/notifications-v2.ndjson#20 data.signedTransactionInfo`).
    public mutating func text(
        _ text: String, x: Int, y: Int, role: String = "ui.text", width: Int? = nil, keepEnd: Bool = false
    ) -> Int {
        let room = min(width ?? buffer.width - x, buffer.width - max(0, x))
        let safe = Sanitize.text(text, ascii: glyphs == .ascii)
        let shown =
            DisplayWidth.of(safe) <= room
            ? safe
            : keepEnd
                ? DisplayWidth.truncateHead(safe, to: room, ellipsis: glyphs.ellipsis)
                : DisplayWidth.truncate(safe, to: room, ellipsis: glyphs.ellipsis)
        return buffer.put(shown, x: x, y: y, style: theme.style(role), width: width)
    }

    /// A section title across the width: `── Title ─────`.
    public mutating func section(_ title: String, x: Int, y: Int, width: Int, focused: Bool = false) {
        let border = theme.style("ui.border")
        buffer.put(String(repeating: glyphs.horizontal, count: max(0, width)), x: x, y: y, style: border, width: width)
        guard width > 6 else { return }
        buffer.put(glyphs.horizontal + " ", x: x, y: y, style: border)
        let used = buffer.put(title, x: x + 2, y: y, style: theme.style(focused ? "ui.accent" : "ui.title"), width: width - 4)
        buffer.put(" ", x: x + 2 + used, y: y, style: border)
    }

    /// A table with a sticky header, a sort marker, `…` truncation and the selected row highlighted.
    /// Returns the column widths used. The hardware cursor is put on the selected row.
    @discardableResult
    public mutating func table(
        x: Int, y: Int, width: Int, height: Int, columns: [Column], rows: Int, total: Int? = nil, totalIsLowerBound: Bool = false,
        offset: Int = 0, position: ListPosition, sortColumn: Int? = nil, focused: Bool = true, marked: (Int) -> Bool = { _ in false },
        cell: (Int, Int) -> TableCell
    ) -> [Int] {
        guard height > 0, width > 0 else { return [] }
        // A scroll hint at the right end of the header, where in the list the window is out of all rows
        // (`total`, when only a page of them is loaded; `+` when that is a lower bound; `offset` rows above the
        // loaded ones); the columns give it room.
        let visible = height - 1
        let count = max(rows + offset, total ?? rows)
        let plus = totalIsLowerBound ? "+" : ""
        let hint = count > visible ? " \(min(count, position.selected + 1 + offset))/\(count)\(plus)" : ""
        // The hint sits at the right end of the section line above the table, where a panel's border would say
        // it, so the columns have the whole width; a table at the top of the screen gives it room in its header
        // (for the widest hint, so columns keep their place as the selection moves).
        let hintAbove = y > 0
        let room = width - (hint.isEmpty || hintAbove ? 0 : DisplayWidth.of(" \(count)/\(count)\(plus)"))
        // The columns shown, by their index in `columns` (what `cell` and `sortColumn` count by).
        let shown = Column.shown(columns, width: room)
        let shownWidths = layout(shown.map { columns[$0] }, width: room)
        var widths = [Int](repeating: 0, count: columns.count)
        for (place, index) in shown.enumerated() { widths[index] = shownWidths[place] }
        let header = theme.style("ui.header")
        buffer.fill(x: x, y: y, width: width, height: 1, style: header)
        var column = x
        for index in shown {
            let c = columns[index]
            var title = c.title
            // The sort arrow stays when the column is narrow: the title gives up its last letters instead.
            if index == sortColumn {
                title = DisplayWidth.truncate(title, to: max(0, widths[index] - DisplayWidth.of(glyphs.arrowDown)), ellipsis: "")
                    + glyphs.arrowDown
            }
            buffer.putFitted(title, x: column, y: y, width: widths[index], style: header, alignRight: c.alignRight, ascii: glyphs == .ascii)
            column += widths[index] + 1
        }
        // The window as drawn: the selection inside it, and no empty rows at its bottom while rows above are hidden
        // (the reducer sizes some windows before the layout knows its room).
        var window = position
        if rows > 0, (0..<rows).contains(position.selected) {
            window.move(by: 0, count: rows, visible: visible)
        } else {
            window.top = max(0, min(position.top, rows - visible))
        }
        for line in 0..<visible {
            let row = window.top + line
            let rowY = y + 1 + line
            guard row < rows else { break }
            let selected = row == position.selected
            var col = x
            for index in shown {
                let c = columns[index]
                let value = cell(row, index)
                var style = theme.style(value.role ?? "ui.text")
                if index == 0, marked(row) { style = theme.style("ui.mark") }
                buffer.putFitted(
                    value.text, x: col, y: rowY, width: widths[index], style: style, alignRight: c.alignRight, ascii: glyphs == .ascii,
                    keepEnd: c.keepEnd || value.keepEnd)
                col += widths[index] + 1
            }
            if selected {
                let selection = theme.style("ui.selection")
                buffer.restyle(x: x, y: rowY, width: width) { old in
                    var style = old
                    if selection.bg != .default { style.bg = selection.bg }
                    if selection.fg != .default { style.fg = selection.fg }
                    style.attributes.formUnion(selection.attributes)
                    if !focused { style.attributes.remove(.reverse); style.attributes.insert(.underline) }
                    return style
                }
                if focused { buffer.cursor = (x, rowY) }
            }
        }
        if !hint.isEmpty {
            if hintAbove {
                let text = hint + " "
                let hintX = max(x, x + width - DisplayWidth.of(text) - 1)
                // A section title that runs under the hint is cut where it starts, and says so ("Tab: transaction
                // 16/16" read as a word).
                let before = hintX - 1
                if before > x, buffer.width > before, y - 1 < buffer.height,
                    ![glyphs.horizontal, " "].contains(buffer[before, y - 1].text)
                {
                    buffer.put(glyphs.ellipsis, x: before, y: y - 1, style: theme.style("ui.title"))
                }
                _ = buffer.put(text, x: hintX, y: y - 1, style: theme.style("ui.text.muted"))
            } else {
                _ = buffer.put(hint, x: x + width - DisplayWidth.of(hint), y: y, style: theme.style("ui.text.muted"))
            }
        }
        return widths
    }

    func layout(_ columns: [Column], width: Int) -> [Int] {
        let gaps = max(0, columns.count - 1)
        let fixed = columns.filter { !$0.flex }.reduce(0) { $0 + $1.width }
        let flexCount = columns.filter(\.flex).count
        var remaining = width - gaps - fixed
        var widths = columns.map { $0.flex ? 0 : $0.width }
        if flexCount > 0 {
            let share = max(0, remaining / flexCount)
            for (i, c) in columns.enumerated() where c.flex { widths[i] = max(c.width, share) }
            remaining = 0
        }
        // Too narrow: take a cell at a time from the widest column (its text is cut with …), so narrow columns
        // such as an age keep what they show, and columns that keep their width (ids) give none; below three
        // cells each, from the right, whatever the column.
        var total = widths.reduce(0, +) + gaps
        while total > width,
            let widest = widths.indices.filter({ !columns[$0].keepsWidth }).max(by: { widths[$0] < widths[$1] }),
            widths[widest] > 3
        {
            widths[widest] -= 1
            total -= 1
        }
        var index = widths.count - 1
        while total > width, index >= 0 {
            let cut = min(widths[index] - 1, total - width)
            if cut > 0 {
                widths[index] -= cut
                total -= cut
            }
            index -= 1
        }
        return widths
    }

    /// A sparkline of counts in `width` cells (the newest at the right) and `height` rows from `y` down, eight
    /// steps a row; returns the maximum shown. A zero is the baseline, any other count at least one step above it.
    @discardableResult
    public mutating func sparkline(_ values: [Int], x: Int, y: Int, width: Int, height: Int = 1, role: String = "ui.accent") -> Int {
        let shown = Array(values.suffix(max(0, width)))
        let maximum = shown.max() ?? 0
        let rows = max(1, height)
        let steps = 8 * rows - 1
        for (index, value) in shown.enumerated() {
            // Steps filled from the bottom: 0 (the baseline) for a zero, 1...steps for the rest (in Double: counts
            // come from the data, and their product with the steps may not fit in an Int; exact below 2^53).
            let level = value <= 0 || maximum <= 0 ? 0 : max(1, min(steps, Int(Double(value) * Double(steps) / Double(maximum))))
            for below in 0..<rows {
                // The bottom row holds steps 1...7 over the baseline glyph's place (as a one-row sparkline does),
                // each row above eight more.
                let glyph: String
                if below == 0 {
                    guard value > 0 || glyphs != .ascii else { continue }
                    glyph = glyphs.sparks[min(7, level)]
                } else {
                    let fill = level - 7 - 8 * (below - 1)
                    guard fill >= 1 else { break }
                    glyph = glyphs.sparks[min(7, fill - 1)]
                }
                buffer.put(glyph, x: x + index, y: y + rows - 1 - below, style: theme.style(value <= 0 ? "ui.text.muted" : role))
            }
        }
        return maximum
    }

    /// Marks the selected row of a list drawn by hand (not by ``table``): reversed, with the hardware cursor on it.
    public mutating func markSelected(x: Int = 0, y: Int, width: Int) {
        buffer.restyle(x: x, y: y, width: width) { var s = $0; s.attributes.insert(.reverse); return s }
        buffer.cursor = (x, y)
    }

    /// A badge: ` DEMO ` in its role.
    @discardableResult
    public mutating func badge(_ text: String, x: Int, y: Int, role: String = "ui.badge") -> Int {
        buffer.put(" \(text) ", x: x, y: y, style: theme.style(role))
    }

    /// The inner rectangle of an ``overlay(title:width:height:)`` of that size on a screen of this size: a
    /// reducer that scrolls what an overlay shows learns its room here, from the same arithmetic.
    public static func overlayInside(
        width: Int, height: Int, screenWidth: Int, screenHeight: Int
    ) -> (x: Int, y: Int, width: Int, height: Int) {
        let w = min(width, screenWidth - 2)
        let h = min(height, screenHeight - 2)
        return ((screenWidth - w) / 2 + 2, (screenHeight - h) / 2 + 1, w - 4, h - 2)
    }

    /// A centred box over the screen with a title; returns the inner rectangle.
    public mutating func overlay(title: String, width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let inside = Self.overlayInside(width: width, height: height, screenWidth: buffer.width, screenHeight: buffer.height)
        let (x, y, w, h) = (inside.x - 2, inside.y - 1, inside.width + 4, inside.height + 2)
        let border = theme.style("ui.border")
        // A blank column each side: the screen's edge column showed through beside a box one short of it (a
        // stray "d" of "10d" right of the keys).
        buffer.fill(x: max(0, x - 1), y: y, width: min(buffer.width, x + w + 1) - max(0, x - 1), height: h, style: theme.style("ui.text"))
        for row in y..<(y + h) {
            buffer.put(glyphs.vertical, x: x, y: row, style: border)
            buffer.put(glyphs.vertical, x: x + w - 1, y: row, style: border)
        }
        let line = String(repeating: glyphs.horizontal, count: max(0, w - 2))
        buffer.put(glyphs.topLeft + line + glyphs.topRight, x: x, y: y, style: border)
        buffer.put(glyphs.bottomLeft + line + glyphs.bottomRight, x: x, y: y + h - 1, style: border)
        buffer.put(" \(title) ", x: x + 2, y: y, style: theme.style("ui.title"), width: w - 4)
        return inside
    }
}

/// Text for numbers and instants as the dashboard shows them.
enum Format {
    /// `1 flag`, `2 flags`, `1,300,000 records`: a count and its noun, in the singular for one.
    static func counted(_ n: Int, _ noun: String) -> String {
        "\(count(n)) \(noun)\(n == 1 ? "" : "s")"
    }

    /// 1234567 -> "1,234,567".
    static func count(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// An instant a person chose (time travel): to the minute when it is on one, else with its seconds and
    /// milliseconds (`2020-11-25 08:30:30`): two instants a few seconds apart can differ in what they show.
    static func instant(_ t: Timestamp) -> String {
        let ms = t.millisecondsSince1970
        guard ms % 60_000 != 0 else { return minute(t) }
        let iso = t.iso8601
        return String(iso.prefix(10)) + " " + String(iso.dropFirst(11).dropLast())
    }

    /// `2025-03-01`.
    static func day(_ t: Timestamp?) -> String {
        guard let t else { return "-" }
        return String(t.iso8601.prefix(10))
    }

    /// `2025-03-01 12:00`.
    static func minute(_ t: Timestamp?) -> String {
        guard let t else { return "-" }
        let iso = t.iso8601
        return String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(5))
    }

    /// `text` with each ISO 8601 instant the core writes (`2025-07-14T11:00:00Z`, `…:05.250Z`) as the
    /// dashboard shows instants, `2025-07-14 11:00`, seconds and milliseconds kept only when not zero: the
    /// reasons and details the core words for `lookup` fit 80 columns as the rest of the screen does. Only an
    /// instant standing as a word of its own (after a space, `(` or the start; before the end, a space or
    /// punctuation) is rewritten: one inside an id from the data (`promo-2025-07-14T11:00:00Z`) is left as sent.
    /// `toMinute` drops the seconds and milliseconds too, for a line that would be cut otherwise.
    static func instants(in text: String, toMinute: Bool = false) -> String {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.contains(UInt8(ascii: "T")) else { return text }
        func digits(_ range: Range<Int>) -> Bool { range.allSatisfy { bytes[$0] >= 0x30 && bytes[$0] <= 0x39 } }
        func at(_ index: Int, _ character: Unicode.Scalar) -> Bool { index < bytes.count && bytes[index] == UInt8(ascii: character) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            // dddd-dd-ddTdd:dd:dd then Z, or .ddd then Z
            if i + 20 <= bytes.count, digits(i..<(i + 4)), at(i + 4, "-"), digits((i + 5)..<(i + 7)), at(i + 7, "-"),
                digits((i + 8)..<(i + 10)), at(i + 10, "T"), digits((i + 11)..<(i + 13)), at(i + 13, ":"),
                digits((i + 14)..<(i + 16)), at(i + 16, ":"), digits((i + 17)..<(i + 19)),
                i == 0 || at(i - 1, " ") || at(i - 1, "(")
            {
                let millis = at(i + 19, ".") && i + 24 <= bytes.count && digits((i + 20)..<(i + 23)) && at(i + 23, "Z")
                let end = millis ? i + 24 : i + 20
                // What follows ends the word: nothing, a space, `;`, `,`, `:`, `)`, or a full stop ending the sentence.
                let endsWord =
                    end == bytes.count || at(end, " ") || at(end, ";") || at(end, ",") || at(end, ":") || at(end, ")")
                    || (at(end, ".") && (end + 1 == bytes.count || at(end + 1, " ")))
                if (millis || at(i + 19, "Z")) && endsWord {
                    out += bytes[i..<(i + 10)]
                    out.append(UInt8(ascii: " "))
                    out += bytes[(i + 11)..<(i + 16)]
                    let seconds = bytes[(i + 17)..<(i + 19)] != [0x30, 0x30]
                    if !toMinute, seconds || millis { out += bytes[(i + 16)..<(i + 19)] }
                    if !toMinute, millis { out += bytes[(i + 19)..<(i + 23)] }
                    i = end
                    continue
                }
            }
            out.append(bytes[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A duration as `3d`, `5h`, `12m`.
    static func span(_ ms: Int64) -> String {
        let minutes = ms.magnitude / 60_000
        let sign = ms < 0 ? "-" : ""
        // (Years past 999 days: an age column is four cells.)
        if minutes >= 1000 * 1440 { return sign + "\(minutes / (365 * 1440))y" }
        if minutes >= 2 * 1440 { return sign + "\(minutes / 1440)d" }
        if minutes >= 120 { return sign + "\(minutes / 60)h" }
        return sign + "\(minutes)m"
    }
}
