import Testing

@testable import DeskUI

/// The header is one bar: what is drawn on it with only a foreground (the breadcrumbs, a warning badge) keeps the
/// bar's background and attributes, as a tmux capture of the default, high-contrast and mono themes showed it did not.
@Suite("The header bar's style under its breadcrumbs and badges")
struct HeaderStyleTests {
    static func header(_ theme: Theme, asOf: Bool = false) -> ScreenBuffer {
        var state = Fixture.state(width: 100, height: 24, screen: .customers)
        state.history = [Visit(screen: .overview)]
        if asOf { state.asOf = Fixture.at(-3) }
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: theme, into: &buffer)
        return buffer
    }

    /// The cells of `text` on the header line.
    static func cells(_ text: String, in buffer: ScreenBuffer) throws -> [Cell] {
        let line = buffer.line(0)
        let start = try #require(line.range(of: text), "\(text) is not in \(line)")
        let x = line.distance(from: line.startIndex, to: start.lowerBound)
        return (x..<x + text.count).map { buffer[$0, 0] }
    }

    @Test("a colour theme: the breadcrumbs take their colour and the bar's background and boldness")
    func colour() throws {
        var theme = Theme.builtin
        theme.styles["ui.header"] = Style(fg: .indexed(252), bg: .indexed(235), attributes: .bold)
        theme.styles["ui.title"] = Style(fg: .indexed(80))
        theme.styles["status.warn"] = Style(fg: .indexed(178))
        let buffer = Self.header(theme, asOf: true)
        for cell in try Self.cells("ReceiptDesk › Overview › Customers", in: buffer) {
            #expect(cell.style == Style(fg: .indexed(80), bg: .indexed(235), attributes: .bold), "\(cell)")
        }
        // A warning badge with only a colour of its own sits on the bar too.
        for cell in try Self.cells(" as of ", in: buffer) {
            #expect(cell.style == Style(fg: .indexed(178), bg: .indexed(235), attributes: .bold), "\(cell)")
        }
        // A badge with its own background keeps it.
        for cell in try Self.cells(" DEMO ", in: buffer) { #expect(cell.style == theme.style("ui.badge.demo")) }
    }

    @Test("no colour: the bar's underline runs under the breadcrumbs")
    func mono() throws {
        var theme = Theme.builtin.adapted(to: .none)
        theme.styles["ui.header"] = Style(attributes: [.bold, .underline])
        theme.styles["ui.title"] = Style(attributes: .bold)
        for cell in try Self.cells("ReceiptDesk › Overview", in: Self.header(theme)) {
            #expect(cell.style == Style(attributes: [.bold, .underline]), "\(cell)")
        }
        // A theme that gives no title style at all: its plain text on the bar is the bar's.
        theme.styles["ui.title"] = nil
        for cell in try Self.cells("ReceiptDesk › Overview", in: Self.header(theme)) {
            #expect(cell.style == Style(attributes: [.bold, .underline]), "\(cell)")
        }
    }

    @Test("a title colour that would vanish on the bar (light cyan on white) gives way to the bar's own foreground")
    func highContrast() throws {
        var theme = Theme.builtin
        theme.styles["ui.header"] = Style(fg: .ansi(0), bg: .ansi(15), attributes: .bold)
        theme.styles["ui.title"] = Style(fg: .ansi(14), attributes: .bold)
        for cell in try Self.cells("ReceiptDesk › Overview", in: Self.header(theme)) {
            #expect(cell.style == Style(fg: .ansi(0), bg: .ansi(15), attributes: .bold), "\(cell)")
        }
    }
}
