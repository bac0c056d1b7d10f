import Testing

@testable import DeskUI

/// Colours as terminals with fewer of them can show them.
@Suite("Themes on terminals with fewer colours")
struct ThemeDegradationTests {
    static let theme = Theme(name: "t", styles: [
        "ui.text.muted": Style(fg: .rgb(0x80, 0x80, 0x80)),
        "status.danger": Style(fg: .ansi(9)),
        "ui.selection": Style(fg: .rgb(0xff, 0xff, 0xff), bg: .rgb(0x3a, 0x3a, 0x5a)),
        "ui.text": Style(fg: .ansi(2), bg: .ansi(0)),
    ])

    @Test("eight colours: grey is dimmed white, a bright colour is bold, the selection is reverse video")
    func eight() {
        let adapted = Self.theme.adapted(to: .ansi8)
        #expect(adapted.style("ui.text.muted") == Style(fg: .ansi(7), attributes: .dim))
        #expect(adapted.style("status.danger") == Style(fg: .ansi(1), attributes: .bold))
        #expect(adapted.style("ui.selection").attributes.contains(.reverse))
        #expect(adapted.style("ui.text") == Style(fg: .ansi(2), bg: .ansi(0)))
    }

    @Test("no colour: attributes only")
    func none() {
        let adapted = Self.theme.adapted(to: .none)
        for role in ["ui.text.muted", "status.danger", "ui.selection", "ui.text"] {
            #expect(adapted.style(role).fg == .default && adapted.style(role).bg == .default)
        }
        #expect(adapted.style("ui.selection").attributes.contains(.reverse))
    }
}
