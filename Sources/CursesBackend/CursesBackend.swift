import CNcurses
import DeskUI
import Glibc
import Synchronization

/// Why the terminal cannot be used; the CLI prints it and exits 2 before anything is drawn.
public struct TerminalError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }

    public init(message: String) {
        self.message = message
    }
}

/// The only code that calls ncurses: starts and ends the screen, draws the cells that changed, reads keys.
///
/// Start-up follows shared/NCURSES_NOTES.md: a UTF-8 locale (C.UTF-8 when the user's is not), signals
/// unblocked, `LINES`/`COLUMNS` unset, `newterm` (not `initscr`, which exits on an unknown `TERM`), a
/// check for cursor addressing, short Esc delay, colours only without `NO_COLOR`. ncurses is not
/// thread-safe: use one instance from one thread.
public final class CursesBackend: TerminalBackend {
    public private(set) var colorDepth: ColorDepth = .none
    public private(set) var unicode = true
    private var screen: OpaquePointer?
    private var last: ScreenBuffer?
    private var pairs: [PairKey: Int16] = [:]
    private var nextPair: Int16 = 1
    private var maxPairs: Int = 0
    private var ended = false
    private let outputIsTerminal: Bool
    /// Inside GNU screen (not tmux): OSC 52 goes through screen's DCS passthrough.
    private let inScreen: Bool

    private struct PairKey: Hashable {
        var fg: Int32
        var bg: Int32
    }

    /// Takes over the terminal.
    /// - Throws: ``TerminalError`` when there is no terminal, or `TERM` is unknown or cannot address the cursor.
    public init(environment: [String: String]) throws {
        try Self.checkTerminal(environment: environment)
        let term = environment["TERM"] ?? ""
        outputIsTerminal = true
        // (tmux sets TMUX, and often TERM=screen too: it is tmux, which takes OSC 52 itself.)
        inScreen = environment["TMUX"] == nil && !term.hasPrefix("tmux") && environment["STY"] != nil
        setlocale(LC_ALL, "")
        // Lines are drawn in Unicode only when the user's own locale is UTF-8; ncurses still gets a UTF-8
        // locale either way, or it drops every non-ASCII character.
        unicode = rd_locale_is_utf8() != 0
        if !unicode, setlocale(LC_CTYPE, "C.UTF-8") == nil { _ = setlocale(LC_CTYPE, "C.utf8") }
        rd_unblock_signals()
        unsetenv("LINES")
        unsetenv("COLUMNS")
        if environment["ESCDELAY"] == nil { setenv("ESCDELAY", "25", 1) }
        guard let screen = newterm(nil, rd_stdout(), rd_stdin()) else {
            throw TerminalError(message: "TERM=\(term) is not a terminal type this system knows (no terminfo entry)")
        }
        self.screen = screen
        set_term(screen)
        let cup = tigetstr("cup")
        if cup == nil || Int(bitPattern: cup) == -1 {
            endwin()
            delscreen(screen)
            self.screen = nil
            ended = true
            throw TerminalError(message: "TERM=\(term) cannot move the cursor: the dashboard needs a full-screen terminal")
        }
        cbreak()
        noecho()
        nonl()
        // Ctrl-Z arrives as a key (the terminal's suspend character off in program mode; the shell's mode, restored
        // by endwin, keeps it): the key loop suspends between frames, with no signal to be delivered to the right
        // thread first. SIGTSTP from elsewhere (`kill -TSTP`) still goes through its handler.
        var modes = termios()
        if tcgetattr(STDIN_FILENO, &modes) == 0 {
            withUnsafeMutableBytes(of: &modes.c_cc) { $0[Int(VSUSP)] = 0 }  // (_POSIX_VDISABLE)
            tcsetattr(STDIN_FILENO, TCSANOW, &modes)
            def_prog_mode()
        }
        keypad(rd_stdscr(), true)
        Self.defineAlternateKeys()
        intrflush(rd_stdscr(), false)
        set_escdelay(Int32(environment["ESCDELAY"].flatMap { Int32($0) } ?? 25))
        curs_set(1)
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        if !noColor, has_colors() {
            start_color()
            use_default_colors()
            colorDepth = ColorDepth(colors: Int(rd_colors()))
            maxPairs = Int(rd_color_pairs())
        }
        Self.current = self
        installSignalHandlers()
        Self.bracketedPaste(true)
    }

    /// What can be known of the terminal without taking it: standard input and output are one, and `TERM` names a
    /// terminal that can move the cursor. The dashboard asks before it reads files or builds the demo, so a script
    /// without a terminal hears so at once rather than after that work.
    /// - Throws: ``TerminalError`` when there is no terminal, or `TERM` is unset or `dumb`.
    public static func checkTerminal(environment: [String: String]) throws {
        let input = isatty(STDIN_FILENO) == 1
        let output = isatty(STDOUT_FILENO) == 1
        guard input, output else {
            // (Which one: `receiptdesk > file` from a terminal has its input there.)
            let which = !input && !output ? "standard input and output are not one" : !input ? "standard input is not one" : "standard output is not one"
            throw TerminalError(message: "the dashboard needs a terminal (\(which)); use the subcommands (see --help) in scripts")
        }
        let term = environment["TERM"] ?? ""
        guard !term.isEmpty, term != "dumb" else {
            throw TerminalError(message: "TERM is \(term.isEmpty ? "not set" : "dumb"): the dashboard needs a terminal that can move the cursor (TERM=xterm-256color, screen, tmux...)")
        }
    }

    /// Asks the terminal to mark pasted text (`ESC [200~` ... `ESC [201~`), so that a line break in it is not
    /// Enter and what follows not keys; off again whenever the terminal is given back (signal-safe: one write).
    /// A terminal that does not know the mode ignores it.
    static func bracketedPaste(_ on: Bool) {
        let sequence: StaticString = on ? "\u{1B}[?2004h" : "\u{1B}[?2004l"
        _ = write(STDOUT_FILENO, sequence.utf8Start, sequence.utf8CodeUnitCount)
    }

    deinit { end() }

    /// The other encodings terminals send for the moving keys, beside what the terminfo entry names: tmux and
    /// screen send Home as `ESC [1~` whatever TERM says inside them (xterm-256color's is `ESC OH`), rxvt `ESC [7~`,
    /// xterm outside keypad mode `ESC [H`. An encoding ncurses does not know arrives as Esc and then its letters
    /// as keys (Home in a prompt closed it, and its `1` went to the Overview).
    private static func defineAlternateKeys() {
        let alternates: [(String, Int32)] = [
            ("\u{1B}[1~", KEY_HOME), ("\u{1B}[7~", KEY_HOME), ("\u{1B}[H", KEY_HOME), ("\u{1B}OH", KEY_HOME),
            ("\u{1B}[4~", KEY_END), ("\u{1B}[8~", KEY_END), ("\u{1B}[F", KEY_END), ("\u{1B}OF", KEY_END),
            ("\u{1B}[3~", KEY_DC), ("\u{1B}[5~", KEY_PPAGE), ("\u{1B}[6~", KEY_NPAGE), ("\u{1B}[Z", KEY_BTAB),
            ("\u{1B}[A", KEY_UP), ("\u{1B}[B", KEY_DOWN), ("\u{1B}[C", KEY_RIGHT), ("\u{1B}[D", KEY_LEFT),
            ("\u{1B}OA", KEY_UP), ("\u{1B}OB", KEY_DOWN), ("\u{1B}OC", KEY_RIGHT), ("\u{1B}OD", KEY_LEFT),
        ]
        // Only where the sequence means nothing yet: the terminal's own entry wins.
        for (sequence, code) in alternates where key_defined(sequence) == 0 { define_key(sequence, code) }
    }

    /// Gives the terminal back (idempotent); called on every exit path.
    public func end() {
        guard !ended else { return }
        ended = true
        Self.interruptNoteLength.store(0, ordering: .releasing)
        // (The handlers give back a screen this frees: a signal from now on ends the process as it would any other.)
        for signal in Self.handledSignals { Glibc.signal(signal, SIG_DFL) }
        if let screen {
            Self.bracketedPaste(false)
            // A terminal without an alternate screen (vt100) would keep the last frame, and the shell's prompt would
            // land on its footer: cleared first, as the alternate screen's leaving would.
            let alternate = tigetstr("smcup")
            if alternate == nil || Int(bitPattern: alternate) == -1 {
                wclear(rd_stdscr())
                wrefresh(rd_stdscr())
            }
            endwin()
            delscreen(screen)
        }
        screen = nil
        if Self.current === self { Self.current = nil }
    }

    public var size: (width: Int, height: Int) { (Int(rd_cols()), Int(rd_lines())) }

    public func draw(_ buffer: ScreenBuffer) {
        let previous = (last?.width == buffer.width && last?.height == buffer.height) ? last : nil
        if previous == nil { wclear(rd_stdscr()) }
        var wide = [wchar_t](repeating: 0, count: 8)
        for y in 0..<buffer.height {
            for x in 0..<buffer.width {
                let cell = buffer[x, y]
                if cell.isContinuation { continue }
                if let previous, previous[x, y] == cell, !(x + 1 < buffer.width && previous[x + 1, y] != buffer[x + 1, y] && buffer[x + 1, y].isContinuation) {
                    continue
                }
                // Skip the bottom-right cell: writing it scrolls some terminals.
                if y == buffer.height - 1, x == buffer.width - 1 { continue }
                var count = 0
                for scalar in Self.drawnScalars(cell.text) {
                    wide[count] = wchar_t(bitPattern: scalar.value)
                    count += 1
                }
                if count == 0 {
                    wide[0] = 0x20
                    count = 1
                }
                let (attributes, pair) = resolve(cell.style)
                if !unicode && !cell.text.unicodeScalars.allSatisfy(\.isASCII) {
                    // A terminal that is not UTF-8 reads UTF-8's bytes in its own charset, where 0x80-0x9F are C1
                    // controls (0x9B is CSI): data that is not ASCII is drawn as `?`, a wide character as `??`.
                    let question: [wchar_t] = [0x3F, 0]
                    _ = rd_put_cell(Int32(y), Int32(x), question, attributes, pair)
                    if x + 1 < buffer.width, buffer[x + 1, y].isContinuation, !(y == buffer.height - 1 && x + 1 == buffer.width - 1) {
                        _ = rd_put_cell(Int32(y), Int32(x + 1), question, attributes, pair)
                    }
                    continue
                }
                wide[count] = 0
                _ = rd_put_cell(Int32(y), Int32(x), wide, attributes, pair)
            }
        }
        if let cursor = buffer.cursor, cursor.y < buffer.height, cursor.x < buffer.width {
            curs_set(1)
            wmove(rd_stdscr(), Int32(cursor.y), Int32(cursor.x))
        } else {
            curs_set(0)
        }
        wrefresh(rd_stdscr())
        last = buffer
    }

    /// What of a cell's grapheme goes to ncurses: its first scalar and the non-spacing ones after it (marks,
    /// variation selectors, joiners), at most five, never ending with a joiner. ncurses keeps a cell's scalars up to
    /// the first spacing one after its first, so a ZWJ family (👨‍👩‍👧) left a joiner at the end of its cell, and the
    /// terminal joined the next thing written to it (the next row's first character came out as U+200D, the row
    /// shifted a cell).
    public static func drawnScalars(_ text: String) -> [Unicode.Scalar] {
        var scalars: [Unicode.Scalar] = []
        for scalar in text.unicodeScalars {
            if !scalars.isEmpty && (DisplayWidth.scalarWidth(scalar) != 0 || scalars.count == 5) { break }
            scalars.append(scalar)
        }
        while scalars.count > 1, scalars.last?.value == 0x200D { scalars.removeLast() }
        return scalars
    }

    private func resolve(_ style: Style) -> (attr_t, Int16) {
        var attributes = rd_a_normal()
        if style.attributes.contains(.bold) { attributes |= rd_a_bold() }
        if style.attributes.contains(.dim) { attributes |= rd_a_dim() }
        if style.attributes.contains(.underline) { attributes |= rd_a_underline() }
        if style.attributes.contains(.reverse) { attributes |= rd_a_reverse() }
        if style.attributes.contains(.italic) { attributes |= rd_a_italic() }
        guard colorDepth != .none else { return (attributes, 0) }
        let key = PairKey(fg: number(style.fg), bg: number(style.bg))
        if key.fg == -1, key.bg == -1 { return (attributes, 0) }
        if let pair = pairs[key] { return (attributes, pair) }
        guard Int(nextPair) < maxPairs, nextPair < Int16.max else { return (attributes, 0) }
        let pair = nextPair
        nextPair += 1
        init_pair(pair, Int16(key.fg), Int16(key.bg))
        pairs[key] = pair
        return (attributes, pair)
    }

    private func number(_ color: Color) -> Int32 {
        switch color.degraded(to: colorDepth) {
        case .ansi(let i): Int32(i)
        case .indexed(let i): Int32(i)
        case .rgb, .default, nil: -1
        }
    }

    public func nextEvent(timeoutMilliseconds: Int) -> InputEvent? {
        if Self.suspendFlag != 0 { return suspend() }
        wtimeout(rd_stdscr(), Int32(timeoutMilliseconds))
        var character: wint_t = 0
        let result = wget_wch(rd_stdscr(), &character)
        if Self.suspendFlag != 0 { return suspend() }
        if Self.resumedFlag != 0 {
            Self.resumedFlag = 0
            last = nil
            Self.bracketedPaste(true)
            return .resumed
        }
        if result == ERR { return nil }
        if result == rd_key_code_yes() {
            switch Int32(character) {
            case KEY_RESIZE:
                last = nil
                return .resize(width: Int(rd_cols()), height: Int(rd_lines()))
            case KEY_UP: return .key(.up)
            case KEY_DOWN: return .key(.down)
            case KEY_LEFT: return .key(.left)
            case KEY_RIGHT: return .key(.right)
            case KEY_PPAGE: return .key(.pageUp)
            case KEY_NPAGE: return .key(.pageDown)
            case KEY_HOME: return .key(.home)
            case KEY_END: return .key(.end)
            case KEY_ENTER: return .key(.enter)
            case KEY_BACKSPACE: return .key(.backspace)
            case KEY_DC: return .key(.delete)
            case KEY_BTAB: return .key(.backTab)
            case KEY_MOUSE:
                var event = MEVENT()
                guard getmouse(&event) == OK else { return nil }
                if event.bstate & rd_button4() != 0 { return .key(.wheelUp) }
                if event.bstate & rd_button5() != 0 { return .key(.wheelDown) }
                if event.bstate & rd_button1() != 0 { return .key(.click(x: Int(event.x), y: Int(event.y))) }
                return nil
            default:
                if Int32(character) >= KEY_F0, Int32(character) <= KEY_F0 + 12 { return .key(.function(Int(Int32(character) - KEY_F0))) }
                return nil
            }
        }
        switch character {
        case 0x1A: return suspend()  // Ctrl-Z
        case 0x1B: return escapeOrSequence()
        case 0x0D, 0x0A: return .key(.enter)
        case 0x09: return .key(.tab)
        case 0x7F, 0x08: return .key(.backspace)
        case 0x01...0x1A: return .key(.ctrl(Character(Unicode.Scalar(UInt8(character) + 0x60))))
        default:
            guard let scalar = Unicode.Scalar(UInt32(character)), scalar.value >= 0x20 else { return nil }
            return .key(.char(Character(scalar)))
        }
    }

    /// Esc, or a key's escape sequence ncurses does not know (Ctrl-Left is `ESC [1;5D`): such a sequence is read
    /// whole and dropped, instead of arriving as Esc and then its characters as keys (which closed a prompt, and
    /// its `1` and `5` switched screens). Its bytes come together; a person's next key after Esc does not.
    private func escapeOrSequence() -> InputEvent? {
        wtimeout(rd_stdscr(), 0)
        var next: wint_t = 0
        let result = wget_wch(rd_stdscr(), &next)
        if result == ERR { return .key(.escape) }
        if result == rd_key_code_yes() {
            // Esc, then a key ncurses knows: both are keys.
            ungetch(Int32(next))
            return .key(.escape)
        }
        switch next {
        case 0x5B:  // ESC [: parameters and intermediates, up to a final byte (ECMA-48's CSI).
            var parameters: [wint_t] = []
            for _ in 0..<32 {
                var byte: wint_t = 0
                guard wget_wch(rd_stdscr(), &byte) == OK else { return nil }
                if byte == 0x7E, parameters == Self.pasteStart { return readPaste() }
                if (0x40...0x7E).contains(byte) { return nil }
                guard (0x20...0x3F).contains(byte) else {
                    // Not a sequence after all: what came is a key of its own.
                    unget_wch(wchar_t(byte))
                    return nil
                }
                parameters.append(byte)
            }
            return nil
        case 0x4F:  // ESC O and one character (SS3).
            var byte: wint_t = 0
            _ = wget_wch(rd_stdscr(), &byte)
            return nil
        default:
            unget_wch(wchar_t(next))
            return .key(.escape)
        }
    }

    /// `200` of `ESC [200~`, which starts a bracketed paste.
    private static let pasteStart: [wint_t] = [0x32, 0x30, 0x30]
    /// `ESC [201~`, which ends it.
    private static let pasteEnd: [wint_t] = [0x1B, 0x5B, 0x32, 0x30, 0x31, 0x7E]
    /// The most characters of a paste kept (the rest is read and dropped: no prompt holds more).
    static let pasteLimit = 4096

    /// The pasted text up to `ESC [201~`; a paste whose end does not come within a second is what came.
    private func readPaste() -> InputEvent {
        wtimeout(rd_stdscr(), 1000)
        var text: [wint_t] = []
        var tail: [wint_t] = []
        while true {
            var character: wint_t = 0
            let result = wget_wch(rd_stdscr(), &character)
            if result == ERR { break }
            // A key ncurses made of pasted bytes (an arrow's sequence in the text) is not text.
            if result == rd_key_code_yes() { continue }
            tail.append(character)
            if tail.count > Self.pasteEnd.count { tail.removeFirst() }
            if tail == Self.pasteEnd {
                text.removeLast(min(text.count, Self.pasteEnd.count - 1))
                break
            }
            if text.count < Self.pasteLimit + Self.pasteEnd.count { text.append(character) }
        }
        let scalars = text.prefix(Self.pasteLimit).compactMap { Unicode.Scalar(UInt32($0)) }
        return .paste(String(String.UnicodeScalarView(scalars)))
    }

    public func setMouse(_ enabled: Bool) {
        var old: mmask_t = 0
        _ = mousemask(enabled ? rd_mouse_mask() : 0, &old)
        mouseinterval(0)
    }

    /// OSC 52, capped at 64 KiB; only when the output is a terminal.
    public func copyToClipboard(_ text: String) -> Bool {
        guard outputIsTerminal, let sequence = Self.clipboardSequence(text, inScreen: inScreen) else { return false }
        fflush(rd_stdout())
        _ = sequence.utf8CString.withUnsafeBufferPointer { write(STDOUT_FILENO, $0.baseAddress, $0.count - 1) }
        return true
    }

    /// The most text ``copyToClipboard(_:)`` sends: terminals cap OSC 52 (xterm's default is about 100 KB of
    /// base64), and an id is never near it.
    public static let clipboardLimit = 65_536

    /// The OSC 52 sequence that puts `text` on the clipboard (base64, BEL-terminated), wrapped in GNU screen's DCS
    /// passthrough when `inScreen`; `nil` past ``clipboardLimit`` bytes of UTF-8. Inside tmux it is sent as it is:
    /// tmux takes OSC 52 itself (its `set-clipboard`), where its own passthrough wrapping is dropped unless
    /// `allow-passthrough` is on (off by default since tmux 3.3: "copied" said, nothing copied).
    public static func clipboardSequence(_ text: String, inScreen: Bool = false) -> String? {
        guard text.utf8.count <= clipboardLimit else { return nil }
        let sequence = "\u{1B}]52;c;\(base64(Array(text.utf8)))\u{07}"
        return inScreen ? "\u{1B}P" + sequence + "\u{1B}\\" : sequence
    }

    private static func base64(_ bytes: [UInt8]) -> String {
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out = [UInt8]()
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            out.append(table[Int(b0 >> 2)])
            out.append(table[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(index + 1 < bytes.count ? table[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? table[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Signals

    nonisolated(unsafe) static var current: CursesBackend?
    nonisolated(unsafe) static var resumedFlag: sig_atomic_t = 0

    /// The signals that end the process, whose handler gives the terminal back first: SIGINT, SIGTERM, SIGHUP, SIGQUIT
    /// (Ctrl-\\), and a crash's (a Swift trap is SIGILL or SIGTRAP; fatalError aborts).
    private static let endingSignals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE]
    /// The signals whose handlers ``installSignalHandlers()`` sets, and ``end()`` sets back to their defaults.
    private static let handledSignals = endingSignals + [SIGTSTP, SIGCONT]

    private func installSignalHandlers() {
        // (Made now, so that a handler only loads them: a static's first use runs its initializer, which locks.)
        _ = Self.interruptNote
        _ = Self.interruptNoteLength.load(ordering: .relaxed)
        // An ending signal: give the terminal back (the shell usable, a crash's message readable), then die of it.
        let terminate: @convention(c) (Int32) -> Void = { signal in
            CursesBackend.bracketedPaste(false)
            endwin()
            // (What was on its way to the ledger, composed beforehand: only an atomic load and write(2) here.)
            let length = CursesBackend.interruptNoteLength.load(ordering: .acquiring)
            if length > 0 { _ = write(2, CursesBackend.interruptNote, length) }
            Glibc.signal(signal, SIG_DFL)
            raise(signal)
        }
        // Every signal waits while the handler runs: a second one (SIGTERM after Ctrl-C) would say the note twice.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = terminate
        sigfillset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        for ending in Self.endingSignals { sigaction(ending, &action, nil) }
        // Ctrl-Z: asked for only; the key loop leaves the screen and stops at its next read of the terminal (within its
        // read's timeout, ``suspend()``). Done here, in whichever thread the signal found, endwin raced a frame being
        // drawn (cells on the shell's screen) and a read under way (restarted in the shell's cooked mode, it waited
        // for Enter after `fg`, the screen not redrawn, keys typed meanwhile then acting unseen).
        let stop: @convention(c) (Int32) -> Void = { _ in CursesBackend.suspendFlag = 1 }
        Self.stopHandler = stop
        signal(SIGTSTP, stop)
        // Continued after a stop the program did not ask for (SIGSTOP from elsewhere): redrawn whole.
        let resume: @convention(c) (Int32) -> Void = { _ in CursesBackend.resumedFlag = 1 }
        signal(SIGCONT, resume)
    }

    nonisolated(unsafe) static var stopHandler: (@convention(c) (Int32) -> Void)? = nil
    /// Set by SIGTSTP's handler: the key loop suspends at its next read of the terminal.
    nonisolated(unsafe) static var suspendFlag: sig_atomic_t = 0

    /// Ctrl-Z, on the key loop's thread between frames: the terminal given back (bracketed paste off, the shell's
    /// modes and screen), the process stopped as SIGTSTP's default would; once continued (`fg`), program mode back
    /// and a whole redraw asked for.
    private func suspend() -> InputEvent {
        Self.suspendFlag = 0
        Self.bracketedPaste(false)
        endwin()
        Glibc.signal(SIGTSTP, SIG_DFL)
        // Raised on this thread, with SIGTSTP let through here: the key loop may run on a thread of the concurrency
        // pool, which blocks it (the stop would wait there, never delivered). The process stops inside raise.
        var tstp = sigset_t()
        var mask = sigset_t()
        sigemptyset(&tstp)
        sigaddset(&tstp, SIGTSTP)
        pthread_sigmask(SIG_UNBLOCK, &tstp, &mask)
        raise(SIGTSTP)
        pthread_sigmask(SIG_SETMASK, &mask, nil)
        // (Continued here.)
        Glibc.signal(SIGTSTP, Self.stopHandler)
        Self.resumedFlag = 0
        reset_prog_mode()
        last = nil
        Self.bracketedPaste(true)
        return .resumed
    }

    /// The note a terminating signal's handler writes (``setInterruptNote(_:)``): a buffer made once, and the length of
    /// the note in it, 0 while it is being written or when there is nothing to say (stored after the bytes, with
    /// release ordering: a handler that loads a length sees the bytes it counts).
    nonisolated(unsafe) static let interruptNote = UnsafeMutablePointer<UInt8>.allocate(capacity: interruptNoteCapacity)
    static let interruptNoteLength = Atomic<Int>(0)
    static let interruptNoteCapacity = 2048

    public func setInterruptNote(_ text: String?) {
        Self.interruptNoteLength.store(0, ordering: .releasing)
        guard let text, !ended else { return }
        let ellipsis = Array("…".utf8)
        var bytes = Array(text.utf8)
        if bytes.count > Self.interruptNoteCapacity - 1 {
            // Cut at a character's first byte, not inside it, and said to be cut.
            bytes = Array(bytes.prefix(Self.interruptNoteCapacity - 1 - ellipsis.count))
            while let last = bytes.last, last & 0xC0 == 0x80 { bytes.removeLast() }
            if let last = bytes.last, last >= 0xC0 { bytes.removeLast() }
            bytes += ellipsis
        }
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBufferPointer { Self.interruptNote.update(from: $0.baseAddress!, count: $0.count) }
        Self.interruptNoteLength.store(bytes.count, ordering: .releasing)
    }
}
