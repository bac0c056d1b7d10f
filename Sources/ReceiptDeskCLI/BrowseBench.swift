import ArgumentParser
import DeskUI
import Entitlements
import Foundation
import LedgerQueries
import ReceiptModel

/// `receiptdesk bench-browse --ledger URL`: the dashboard's figures, measured in a process that only
/// opens the ledger and browses it (so its peak RSS is the dashboard's, not the generator's). `bench`
/// runs it as a child; it prints one JSON line.
///
/// The dashboard runs as it does for a person (the same state, reducer, queries, renderer and a
/// cell-by-cell diff of each frame) on a headless 120x40 terminal, and walks a fixed script of keys over
/// every screen. Each key is timed from its arrival to its frame drawn, queries included.
struct BrowseBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-browse",
        abstract: "Measures the dashboard's first frame, per-key latency and peak RSS over a ledger (used by bench).",
        shouldDisplay: false
    )

    @Option(help: ArgumentHelp("The ledger to browse.", valueName: "URL"))
    var ledger: String

    @Option(help: ArgumentHelp("The instant the dashboard treats as now (ISO 8601 or milliseconds; default: the clock).", valueName: "DATE"))
    var now: String?

    @Flag(help: "Print each key's screen and time to standard error.")
    var verbose = false

    func run() async throws {
        let started = ContinuousClock.now
        let instant = try now.map { try parseInstant($0, option: "--now") } ?? currentTimestamp()
        let opened = Dashboard.Opened(
            ledger: try await LedgerOptions.open(url: ledger, now: instant, readOnly: true), name: redact(ledger), now: instant, isDemo: false)
        let dashboard = Dashboard(
            data: try DataOptions.parse([]), themeName: nil, readOnly: true, operatorName: "bench", mouse: false)
        let themes = ThemeLoader(environment: ProcessInfo.processInfo.environment)
        let backend = HeadlessTerminal(width: 120, height: 40)
        let state = AppState(
            width: 120, height: 40, now: instant, isDemo: false, ledgerName: opened.name, operatorName: "bench", readOnly: true,
            mouse: false, themeName: "default", themeNames: themes.names, catalog: Catalog())
        // The script browses at the bench's instant, which the wall clock must not move.
        var handlers = dashboard.handlers(opened, themes: themes)
        handlers.clock = nil
        let runtime = Runtime(state: state, theme: themes.loadOrDefault("default").theme, backend: backend, handlers: handlers)
        await runtime.start()
        let firstFrame = milliseconds(ContinuousClock.now - started)

        // The id prefix typed is the start of a real identifier, the densest filter a person types on the way
        // to a whole id (every original transaction id of a ledger often starts the same way).
        let first = try? await opened.ledger.customers(CustomerQuery(limit: 1)).rows.first?.identifiers.first?.value
        var perScreen: [String: [Double]] = [:]
        for key in Self.script(prefix: String(first?.prefix(2) ?? "15")) {
            let screen = runtime.state.screen.title.lowercased()
            let before = ContinuousClock.now
            await runtime.handle(InputEvent.key(key))
            let took = milliseconds(ContinuousClock.now - before)
            perScreen[screen, default: []].append(took)
            if verbose { FileHandle.standardError.write(Data("\(screen) \(key.label) \(format(took)) ms\n".utf8)) }
        }
        // The Customers list's access, judged while no key waits (``Runtime/fillCustomerAccess()``), over three screens of
        // it: a turn's time is the most a key typed during it waits for it.
        await runtime.handle(InputEvent.key(.char("2")))
        var turns: [Double] = []
        for _ in 0..<3 {
            while !runtime.state.customersNeedingAccess(limit: 1).isEmpty, turns.count < 100 {
                let before = ContinuousClock.now
                await runtime.fillCustomerAccess()
                turns.append(milliseconds(ContinuousClock.now - before))
            }
            await runtime.handle(InputEvent.key(.pageDown))
        }
        try? await opened.ledger.close()

        let all = perScreen.values.flatMap { $0 }
        let byScreen = perScreen.mapValues { percentile($0, 0.99) }
        var json = "{\"firstFrameMs\":\(format(firstFrame)),\"keyP99Ms\":\(format(percentile(all, 0.99)))"
        json += ",\"keyP50Ms\":\(format(percentile(all, 0.5))),\"keys\":\(all.count)"
        json += ",\"keyP99MsByScreen\":{" + byScreen.keys.sorted().map { "\"\($0)\":\(format(byScreen[$0]!))" }.joined(separator: ",") + "}"
        json += ",\"accessTurnP99Ms\":\(turns.isEmpty ? "null" : format(percentile(turns, 0.99))),\"accessTurns\":\(turns.count)"
        json += ",\"peakRSSMB\":\(peakResidentMegabytes().map(format) ?? "null"),\"cellsDrawn\":\(backend.cellsDrawn)}"
        print(json)
    }

    /// The walk: every screen, with the keys people press there most (moving, paging, sorting, filtering,
    /// filtering by an id prefix, opening, going back). The customer opened is whichever the list shows first.
    static func script(prefix: String) -> [DeskUI.Key] {
        var keys: [DeskUI.Key] = []
        keys += [.down, .up, .tab]                                        // overview
        keys += [.char("2")]                                              // to customers
        keys += Array(repeating: .char("j"), count: 40)
        keys += Array(repeating: .pageDown, count: 10)                   // pages past what is loaded
        keys += [.char("G"), .char("g"), .char("s"), .char("s"), .char("s"), .char("e"), .char("e"), .char("e")]
        keys += [.char("/")] + prefix.map { .char($0) } + [.enter]          // filter by an id prefix
        keys += [.char("j"), .char("/"), .backspace, .enter]           // and clear it (/ offers it; Backspace clears it)
        keys += [.char("j"), .char("j"), .enter]                          // open a customer
        keys += Array(repeating: .char("j"), count: 10) + [.tab, .char("j"), .char("j"), .tab, .tab]
        keys += [.enter, .char("j"), .escape]                             // a transaction, and back
        keys += [.escape, .char("5")]                                     // refunds
        keys += Array(repeating: .char("j"), count: 30) + [.pageDown, .pageDown, .char("G"), .char("g")]
        keys += [.char("f"), .char("f"), .char("f"), .char("f")]
        keys += [.char("6")] + Array(repeating: .char("j"), count: 10) + [.tab, .char("j")]  // imports
        keys += [.char("1"), .char("2"), .char("3"), .char("1")]
        return keys
    }
}

/// A terminal without a screen: keeps the last frame and compares each new one cell by cell, as the
/// curses backend does before it sends anything.
final class HeadlessTerminal: TerminalBackend {
    let size: (width: Int, height: Int)
    let colorDepth = ColorDepth.trueColor
    let unicode = true
    private var last: ScreenBuffer?
    /// Cells that differed from the previous frame, over the run.
    private(set) var cellsDrawn = 0

    init(width: Int, height: Int) {
        size = (width, height)
    }

    func draw(_ buffer: ScreenBuffer) {
        guard let last, last.width == buffer.width, last.height == buffer.height else {
            cellsDrawn += buffer.width * buffer.height
            self.last = buffer
            return
        }
        for y in 0..<buffer.height {
            for x in 0..<buffer.width where last[x, y] != buffer[x, y] { cellsDrawn += 1 }
        }
        self.last = buffer
    }

    func nextEvent(timeoutMilliseconds: Int) -> InputEvent? { nil }
    func setMouse(_ enabled: Bool) {}
    func copyToClipboard(_ text: String) -> Bool { false }
}

/// This process's own peak resident set, in MB: `VmHWM` from /proc/self/status. (`getrusage`'s
/// `ru_maxrss` is kept across `execve` on Linux, so a child started by a big bench process would
/// report its parent's peak.)
func peakResidentMegabytes() -> Double? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { return nil }
    return kilobytes / 1024
}

private func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

private func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

private func format(_ value: Double) -> String {
    String(format: "%.2f", value)
}
