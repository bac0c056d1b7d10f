/// A key press (or mouse event) as the backend reports it.
public enum Key: Hashable, Sendable {
    case char(Character)
    /// Ctrl with a letter: `.ctrl("c")`.
    case ctrl(Character)
    case up, down, left, right, pageUp, pageDown, home, end
    case enter, escape, tab, backTab, backspace, delete
    case function(Int)
    /// A click at a screen cell.
    case click(x: Int, y: Int)
    case wheelUp, wheelDown

    /// How the help overlay and footer name the key.
    public var label: String {
        switch self {
        case .char(" "): "space"
        case .char(let c): String(c)
        case .ctrl(let c): "^" + String(c).uppercased()
        case .up: "↑"
        case .down: "↓"
        case .left: "←"
        case .right: "→"
        case .pageUp: "PgUp"
        case .pageDown: "PgDn"
        case .home: "Home"
        case .end: "End"
        case .enter: "Enter"
        case .escape: "Esc"
        case .tab: "Tab"
        case .backTab: "S-Tab"
        case .backspace: "Bksp"
        case .delete: "Del"
        case .function(let n): "F\(n)"
        case .click: "click"
        case .wheelUp: "wheel↑"
        case .wheelDown: "wheel↓"
        }
    }
}
