/// A terminal the dashboard draws on: the ncurses implementation (CursesBackend) and the test backend.
public protocol TerminalBackend: AnyObject {
    /// The terminal's size in cells.
    var size: (width: Int, height: Int) { get }
    /// How many colours it shows.
    var colorDepth: ColorDepth { get }
    /// Whether its locale is UTF-8 (box drawing) or it needs ASCII.
    var unicode: Bool { get }
    /// Draws the buffer, sending only the cells that changed since the last draw, and places the cursor.
    func draw(_ buffer: ScreenBuffer)
    /// The next input event, waiting at most `timeoutMilliseconds`; nil when none came.
    func nextEvent(timeoutMilliseconds: Int) -> InputEvent?
    /// Turns mouse reporting on or off.
    func setMouse(_ enabled: Bool)
    /// Sends an OSC 52 clipboard sequence (the backend knows whether output is a terminal).
    func copyToClipboard(_ text: String) -> Bool
    /// What the process says on standard error, once the terminal is given back, when a signal ends it (Ctrl-C during
    /// "saving…"); nil says nothing.
    func setInterruptNote(_ text: String?)
}

extension TerminalBackend {
    public func setInterruptNote(_ text: String?) {}
}

/// What a backend reads.
public enum InputEvent: Sendable, Equatable {
    case key(Key)
    /// Text the terminal says was pasted (bracketed paste), whole: its line breaks are not Enter.
    case paste(String)
    case resize(width: Int, height: Int)
    /// The process was resumed after Ctrl-Z: redraw everything.
    case resumed
}
