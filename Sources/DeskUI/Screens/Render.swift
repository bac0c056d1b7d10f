import Entitlements
import LedgerQueries
import ReceiptModel

/// The smallest terminal the dashboard draws in.
public let minimumSize = (width: 60, height: 16)

extension AppState {
    /// Whether the terminal is large enough to draw the dashboard in (else only that is shown, and keys wait).
    var fitsTerminal: Bool { width >= minimumSize.width && height >= minimumSize.height }
}

/// Draws the whole screen for a state. Pure: the same state and theme always give the same cells.
public func render(_ state: AppState, theme: Theme, into buffer: inout ScreenBuffer) {
    buffer = ScreenBuffer(width: state.width, height: state.height)
    var p = Painter(buffer: buffer, theme: theme, glyphs: state.glyphs)
    p.buffer.clear(style: theme.style("ui.text"))
    guard state.fitsTerminal else {
        // Each line wrapped at its words on a terminal narrower than it; too low for both, the size needed alone.
        let width = max(1, state.width)
        let small = wrapped("Terminal too small: \(state.width)x\(state.height)", width: width, words: true).map { ($0, "status.warn") }
        let needs = wrapped("ReceiptDesk needs at least \(minimumSize.width)x\(minimumSize.height)", width: width, words: true)
            .map { ($0, "ui.text") }
        let lines = small.count + needs.count <= state.height ? small + needs : needs
        let top = max(0, (state.height - lines.count) / 2)
        for (i, (line, role)) in lines.enumerated() {
            let x = max(0, (state.width - DisplayWidth.of(line)) / 2)
            _ = p.text(line, x: x, y: top + i, role: role)
        }
        buffer = p.buffer
        return
    }
    drawHeader(state, &p)
    let body = (y: 1, height: state.height - 3)
    switch state.screen {
    case .overview: drawOverview(state, &p, body)
    case .customers: drawCustomers(state, &p, body)
    case .customer: drawCustomer(state, &p, body)
    case .transaction: drawTransaction(state, &p, body)
    case .refunds: drawRefunds(state, &p, body)
    case .imports: drawImports(state, &p, body)
    }
    drawMessageLine(state, &p)
    drawFooter(state, &p)
    if let raw = state.rawView { drawRaw(raw, &p) }
    if state.showHelp { drawHelp(state, &p) }
    buffer = p.buffer
}

private func drawHeader(_ state: AppState, _ screen: inout Painter) {
    let bar = screen.theme.style("ui.header")
    screen.buffer.fill(x: 0, y: 0, width: state.width, height: 1, style: bar)
    // What is drawn on the bar with only a foreground keeps the bar's background and attributes (the breadcrumbs had
    // the terminal's background in a coloured bar, and no underline in mono's).
    // (Every role the dashboard draws with, so one a theme leaves to the plain text is on the bar too.)
    var onBar = Theme(name: screen.theme.name, styles: screen.theme.styles.mapValues { $0.on(bar) })
    for role in Theme.roles { onBar.styles[role] = screen.theme.style(role).on(bar) }
    var p = Painter(buffer: screen.buffer, theme: onBar, glyphs: screen.glyphs)
    defer { screen.buffer = p.buffer }
    // Badges on the right, kept in order of importance when the line is short: what would mislead if
    // missing (unavailable, DEMO, UNVERIFIED, READ-ONLY, a past instant) before the environment and the clock. The
    // breadcrumbs take what is left.
    // The environment filter applies to the overview, the customer list and the flag queue; every other
    // screen shows one customer, transaction or import, and says "all".
    let environment = state.screenEnvironment
    let asOf = state.asOf.map { ("as of \(Format.instant($0))", "status.warn") } ?? ("now \(Format.minute(state.now))", "ui.badge")
    var candidates: [(order: Int, text: String, role: String)] = []
    if state.unavailable != nil { candidates.append((0, "LEDGER UNAVAILABLE", "status.danger")) }
    if state.isDemo { candidates.append((1, "DEMO", "ui.badge.demo")) }
    if state.unverified { candidates.append((1, "UNVERIFIED", "status.warn")) }
    if state.readOnly { candidates.append((2, "READ-ONLY", "ui.badge")) }
    if state.inMemory && !state.readOnly { candidates.append((2, "IN MEMORY", "status.warn")) }
    if state.asOf != nil { candidates.append((4, asOf.0, asOf.1)) }
    candidates.append((3, "env \(environment.rawValue)", "ui.badge"))
    if state.asOf == nil { candidates.append((4, asOf.0, asOf.1)) }
    var kept: [(order: Int, text: String, role: String)] = []
    var used = 0
    let room = state.width - min(14, state.width / 3)
    for badge in candidates {
        let w = DisplayWidth.of(badge.text) + 3
        if used + w <= room {
            kept.append(badge)
            used += w
        }
    }
    var right = state.width - 1
    for badge in kept.sorted(by: { $0.order < $1.order }).reversed() {
        right -= DisplayWidth.of(badge.text) + 2
        p.badge(badge.text, x: right, y: 0, role: badge.role)
        right -= 1
    }
    let crumbsRoom = max(0, right - 2)
    _ = p.text(breadcrumbs(state, room: crumbsRoom, glyphs: p.glyphs), x: 1, y: 0, role: "ui.title", width: crumbsRoom)
}

/// The trail to the current screen in `room` columns: the last two screens before it, an ellipsis standing for
/// any older. The current screen's name is what a person reads first, so when the trail is too long the oldest
/// crumbs give way to the ellipsis, then the product's name; only a current name wider than the room is cut.
private func breadcrumbs(_ state: AppState, room: Int, glyphs: Glyphs) -> String {
    let separator = " \(glyphs.separator) "
    var trail = state.history.suffix(2).map(crumbTitle) + [crumbTitle(current: state)]
    var elided = state.history.count > 2
    func joined() -> String {
        (["ReceiptDesk"] + (elided ? [glyphs.ellipsis] : []) + trail).joined(separator: separator)
    }
    while trail.count > 1 && DisplayWidth.of(Sanitize.text(joined())) > room {
        trail.removeFirst()
        elided = true
    }
    let text = joined()
    return DisplayWidth.of(Sanitize.text(text)) > room ? trail.joined(separator: separator) : text
}

private func crumbTitle(current state: AppState) -> String {
    crumbTitle(Visit(screen: state.screen, customerId: state.customer?.records.id, transactionId: state.transaction?.transactionId))
}

private func crumbTitle(_ visit: Visit) -> String {
    switch visit.screen {
    case .customer: visit.customerId.map { "C\($0)" } ?? "Customer"
    case .transaction: visit.transactionId.map { "T \($0)" } ?? "Transaction"
    default: visit.screen.title
    }
}

private func drawMessageLine(_ state: AppState, _ p: inout Painter) {
    let y = state.height - 2
    if let prompt = state.prompt {
        if prompt.completions.isEmpty, let message = state.message, y > 0 {
            // What the status line says while a prompt is open, on the line above it: why the prompt opened again (an
            // instant it could not read), what it is for (`/` where there is nothing to filter), what became of a key
            // typed ahead into it, or what happened meanwhile.
            p.buffer.fill(x: 0, y: y - 1, width: state.width, height: 1, style: p.theme.style("ui.text.muted"))
            _ = p.text(message.text, x: 1, y: y - 1, role: message.kind == .error ? "status.danger" : "status.ok")
        } else if !prompt.completions.isEmpty {
            var x = 1
            p.buffer.fill(x: 0, y: y - 1, width: state.width, height: 1, style: p.theme.style("ui.text.muted"))
            for (index, completion) in prompt.completions.prefix(8).enumerated() {
                x += p.text(completion, x: x, y: y - 1, role: index == 0 ? "ui.accent" : "ui.text.muted") + 2
                if x >= state.width - 4 { break }
            }
        }
        let used = p.text(prompt.label, x: 0, y: y, role: "ui.accent")
        drawPromptText(prompt, x: used, y: y, width: state.width - used, &p)
        return
    }
    // An error said during an outage (a triage not saved) shows over the "retrying" line; the header keeps
    // LEDGER UNAVAILABLE.
    if let unavailable = state.unavailable, state.message?.urgent != true {
        // The reason first: the ledger's URL, which the error names, would take the line at 80 columns.
        let reason = state.ledgerName.isEmpty ? unavailable : unavailable.replacing(" at \(state.ledgerName)", with: "")
        // And since when: what the screen shows was read then (its figures are not the ledger's now), or, not known,
        // before the outage.
        let since =
            state.readAt[state.screen].map { " (the screen is as read at \(Format.minute($0).suffix(5)))" }
            ?? state.unavailableSince.map { " (the screen is as read before \(Format.minute($0).suffix(5)))" } ?? ""
        _ = p.text("ledger unavailable, retrying: \(reason)\(since)", x: 0, y: y, role: "status.danger")
    } else if let message = state.message {
        _ = p.text(message.text, x: 0, y: y, role: message.kind == .error ? "status.danger" : "status.ok")
    }
}

/// What is typed, with the cursor on the character it is before (a cell after the end): text wider than the line
/// scrolls so the cursor shows, an ellipsis at a side that has more.
private func drawPromptText(_ prompt: Prompt, x: Int, y: Int, width: Int, _ p: inout Painter) {
    // Each character as it is drawn (sanitized: a pasted control character shows as its escape, and is measured so).
    let shown = prompt.text.map { Sanitize.text(String($0)) }
    let widths = shown.map { DisplayWidth.of($0) }
    let cursor = min(max(0, prompt.cursor), shown.count)
    let cursorWidth = cursor < shown.count ? max(1, widths[cursor]) : 1
    var start = 0
    var room = width
    if widths.reduce(0, +) + 1 > width {
        // Too wide: a column each side for the ellipsis, and the first character shown the earliest that keeps the
        // cursor on the line.
        room = max(1, width - 2)
        var before = widths[..<cursor].reduce(0, +)
        while start < cursor, before + cursorWidth > room {
            before -= widths[start]
            start += 1
        }
    }
    var column = x
    if start > 0 {
        _ = p.text(p.glyphs.ellipsis, x: column, y: y, role: "ui.text.muted")
        column += 1
    }
    // The last value, offered to be replaced, shows selected.
    let role = prompt.offered ? "ui.selection" : "ui.prompt"
    var end = start
    var used = 0
    while end < shown.count, used + widths[end] <= room {
        used += widths[end]
        end += 1
    }
    var cursorX = column
    for index in start..<end {
        if index == cursor { cursorX = column }
        column += p.text(shown[index], x: column, y: y, role: index == cursor ? "ui.prompt.cursor" : role)
    }
    if cursor >= end {
        cursorX = column
        p.buffer.put(" ", x: column, y: y, style: p.theme.style("ui.prompt.cursor"))
        column += 1
    }
    if end < shown.count { _ = p.text(p.glyphs.ellipsis, x: column, y: y, role: "ui.text.muted") }
    p.buffer.cursor = (cursorX, y)
}

private func drawFooter(_ state: AppState, _ p: inout Painter) {
    let y = state.height - 1
    p.buffer.fill(x: 0, y: y, width: state.width, height: 1, style: p.theme.style("ui.footer"))
    var x = 0
    let hints: [(String, String)]
    if let prompt = state.prompt {
        switch prompt.kind {
        case .command: hints = [("Enter", "run"), ("Tab", "complete"), ("Esc", "cancel")]
        default:
            let arrows = state.ascii ? "Left Right" : "←→"
            hints = [("Enter", "done"), ("Esc", "cancel"), ("\(arrows) ^A ^E", "move"), ("^W", "delete word"), ("^U", "clear")]
        }
    } else if state.showHelp {
        hints = [("any key", "close")]
    } else if let raw = state.rawView {
        let scrolls = raw.scrolls(screenWidth: state.width, screenHeight: state.height)
        hints = scrolls ? [("j/k PgDn PgUp g G", "scroll"), ("any other key", "close")] : [("any key", "close")]
    } else {
        // What the keys do here: q quits on the top screen; a customer without flags has none to triage.
        let noFlags = state.screen == .customer && state.customer?.flags.isEmpty != false
        // The queue of open flags has none to reopen; of resolved flags, none to acknowledge or resolve.
        let queue = state.screen == .refunds ? state.flagStatus : nil
        let useless: Set<Command> =
            noFlags ? [.acknowledge, .resolve, .reopen]
            : queue == .open ? [.reopen] : queue == .resolved ? [.acknowledge, .resolve] : state.screen == .customer ? [.reopen] : []
        hints = state.keymap.bindings(on: state.screen, readOnly: state.readOnly).filter(\.footer)
            .filter { !useless.contains($0.command) }
            .map { binding in
                // q closes a day's refunds listed on the Overview before it goes back or quits.
                let back = state.screen == .overview && state.dayRefunds != nil ? "close" : state.history.isEmpty ? "quit" : shortHelp(binding.command)
                return (binding.keys[0].label(ascii: state.ascii), binding.command == .back ? back : shortHelp(binding.command))
            }
    }
    for (key, help) in hints {
        let w = DisplayWidth.of(key) + DisplayWidth.of(help) + 3
        guard x + w <= state.width else { break }
        x += p.text(key, x: x + 1, y: y, role: "ui.footer.key") + 1
        x += p.text(help, x: x + 1, y: y, role: "ui.footer") + 1
    }
}

func shortHelp(_ command: Command) -> String {
    switch command {
    case .open: "open"
    case .back: "back"
    case .filter: "filter"
    case .commandLine: "cmd"
    case .help: "help"
    case .nextPane: "pane"
    case .timeTravel: "as-of"
    case .copyId: "copy"
    case .acknowledge: "ack"
    case .resolve: "resolve"
    case .undo: "undo"
    case .sort: "sort"
    case .cycleStatus: "status"
    default: "\(command)"
    }
}

/// The help overlay's keys (this screen's own first, then the ones that work everywhere) and how they are laid out:
/// two columns when there is room, as many rows as the terminal gives them under the box's title and above the
/// command line's commands.
func helpLayout(_ state: AppState) -> (bindings: [KeyBinding], columns: Int, rows: Int, width: Int, height: Int) {
    // (The wheel's rows only while the mouse is on: off, no wheel reaches the dashboard.)
    let all = state.keymap.bindings(on: state.screen, readOnly: state.readOnly).filter { binding in
        state.mouse || !binding.keys.allSatisfy { $0 == .wheelUp || $0 == .wheelDown }
    }
    let bindings = all.filter { $0.screens != nil } + all.filter { $0.screens == nil }
    let width = min(state.width - 2, 110)
    let columns = width >= 76 ? 2 : 1
    let needed = (bindings.count + columns - 1) / columns
    // (The box inside the overlay's border is 4 columns narrower.)
    let commandLines = helpCommandLines(width: width - 4).count
    let height = min(state.height - 2, needed + commandLines + 3)
    // (The overlay's box is its height less the border and title.)
    return (bindings, columns, max(1, height - 2 - commandLines - 1), width, height)
}

/// The command line's commands as the help lists them in `width` columns: on as many lines as they need (three at
/// 80 columns, four at 60, where a fixed three cut the last line at `:mouse on|…` and `:q` never showed).
func helpCommandLines(width: Int) -> [String] {
    let commands = [
        ":customer ID", ":refunds", ":overview", ":imports", ":theme NAME", ":env all|production|sandbox", ":at DATE|now",
        ":export csv FILE", ":mouse on|off", ":q",
    ]
    var lines: [String] = []
    var line = "commands:"
    for command in commands {
        if DisplayWidth.of(line) + DisplayWidth.of(command) + 2 > width {
            lines.append(line)
            line = "         "
        }
        line += "  " + command
    }
    return lines + [line]
}

private func drawHelp(_ state: AppState, _ p: inout Painter) {
    let layout = helpLayout(state)
    let columns = layout.columns
    let hidden = max(0, layout.bindings.count - layout.rows * columns)
    let title = hidden > 0 ? "Keys on \(state.screen.title) (j/k scroll, any other key closes)" : "Keys on \(state.screen.title) (any key closes)"
    let box = p.overlay(title: title, width: layout.width, height: layout.height)
    let commandLines = helpCommandLines(width: box.width)
    let bindings = Array(layout.bindings.dropFirst(min(state.helpTop, hidden)))
    let bindingRows = max(0, box.height - commandLines.count - 1)
    let shown = min(bindings.count, bindingRows * columns)
    func keys(_ binding: KeyBinding) -> String { binding.keys.prefix(2).map { $0.label(ascii: state.ascii) }.joined(separator: " ") }
    let groups = stride(from: 0, to: shown, by: max(1, bindingRows)).map { Array(bindings[$0..<min(shown, $0 + bindingRows)]) }
    // Each column as wide as its widest keys (at most 12) and description: the screen's own keys, listed first, have
    // the long descriptions and the keys of every screen short ones, so halves cut "only customers covered at t…" at
    // 80 columns with room to spare beside it. When they do not fit, the widest gives up cells first; room left is
    // shared. A column is sized for every key j/k can scroll into it, so the columns stay put as the help scrolls.
    let reach = groups.indices.map { i in
        layout.bindings[min(layout.bindings.count, i * bindingRows)..<min(layout.bindings.count, hidden + (i + 1) * bindingRows)]
    }
    let keysWidths = reach.map { column in min(12, column.map { DisplayWidth.of(keys($0)) }.max() ?? 0) }
    var widths = reach.indices.map { i in
        keysWidths[i] + 1 + (reach[i].map { DisplayWidth.of($0.help) }.max() ?? 0) + (i < groups.count - 1 ? 2 : 0)
    }
    while widths.reduce(0, +) > box.width, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > 1 {
        widths[widest] -= 1
    }
    let room = box.width - widths.reduce(0, +)
    if room > 0, !widths.isEmpty { widths = widths.map { $0 + room / widths.count } }
    var x = box.x
    for (column, group) in groups.enumerated() {
        for (row, binding) in group.enumerated() {
            _ = p.text(keys(binding), x: x, y: box.y + row, role: "ui.footer.key", width: keysWidths[column])
            let gap = column < groups.count - 1 ? 2 : 0
            _ = p.text(binding.help, x: x + keysWidths[column] + 1, y: box.y + row, role: "ui.text", width: max(0, widths[column] - keysWidths[column] - 1 - gap))
        }
        x += widths[column]
    }
    var y = box.y + bindingRows
    if shown < bindings.count {
        _ = p.text("… \(bindings.count - shown) more keys: j shows them", x: box.x, y: y, role: "ui.text.muted", width: box.width)
    }
    for line in commandLines {
        y += 1
        _ = p.text(line, x: box.x, y: y, role: "ui.text.muted", width: box.width)
    }
}

private func drawRaw(_ raw: RawView, _ p: inout Painter) {
    let size = RawView.overlaySize(screenWidth: p.buffer.width, screenHeight: p.buffer.height)
    let height = RawView.viewport(screenWidth: p.buffer.width, screenHeight: p.buffer.height).height
    var title = "Rejected record"
    if raw.lines.count > height {
        title += "  lines \(raw.top + 1)-\(min(raw.lines.count, raw.top + height)) of \(raw.lines.count)"
    }
    let box = p.overlay(title: title, width: size.width, height: size.height)
    for (index, line) in raw.lines.dropFirst(raw.top).prefix(box.height).enumerated() {
        let role = raw.top + index < raw.headerCount ? (raw.top + index == raw.headerCount - 1 ? "ui.text.muted" : "status.warn") : "ui.text"
        _ = p.text(line, x: box.x, y: box.y + index, role: role, width: box.width)
    }
}
