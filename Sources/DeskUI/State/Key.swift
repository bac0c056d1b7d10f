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
    public var label: String { label(ascii: false) }

    /// How the help overlay and footer name the key; on a terminal drawn in ASCII the arrows are words (an arrow
    /// drawn as `?` read as the help key, and `^` is Ctrl's).
    public func label(ascii: Bool) -> String {
        if ascii {
            switch self {
            case .up: return "Up"
            case .down: return "Down"
            case .left: return "Left"
            case .right: return "Right"
            case .wheelUp: return "wheel-up"
            case .wheelDown: return "wheel-down"
            default: break
            }
        }
        return switch self {
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
