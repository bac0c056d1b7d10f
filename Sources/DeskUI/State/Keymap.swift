/// What a key asks for, independent of which key it is.
public enum Command: Hashable, Sendable {
    case up, down, pageUp, pageDown, top, bottom
    /// The mouse wheel: a few rows at a time, as terminals scroll text (a page a notch jumped past what was read).
    case scrollUp, scrollDown
    case open, back, dismiss, quit
    case filter, nextMatch, previousMatch, commandLine, help
    /// `/` where there is nothing to filter: `:customer` opened for an id.
    case findCustomer
    case nextPane, previousPane
    case screen(ScreenID)
    case timeTravel, copyId, undo
    case acknowledge, resolve, reopen, mark
    case sort, cycleStatus, cycleEnvironment, toggleCovered, toggleFlagged
    /// The day before or after the one chosen on the overview's refunds-per-day chart.
    case earlierDay, laterDay
}

/// One row of the keymap: keys, the command, where it works, and what help says about it.
public struct KeyBinding: Sendable {
    public var keys: [Key]
    public var command: Command
    /// The screens it works on; nil for every screen.
    public var screens: Set<ScreenID>?
    public var help: String
    /// Shown in the footer (the few keys that matter most here).
    public var footer: Bool
    /// A key that writes to the ledger: hidden and refused in read-only mode.
    public var writes: Bool

    public init(_ keys: [Key], _ command: Command, _ help: String, on screens: Set<ScreenID>? = nil, footer: Bool = false, writes: Bool = false) {
        self.keys = keys
        self.command = command
        self.screens = screens
        self.help = help
        self.footer = footer
        self.writes = writes
    }
}

/// The keymap is data: the reducer looks keys up here, and the footer and the help overlay are drawn from it.
public struct Keymap: Sendable {
    public var bindings: [KeyBinding]

    public init(bindings: [KeyBinding]) {
        self.bindings = bindings
    }

    /// The command a key means on a screen.
    public func command(for key: Key, on screen: ScreenID, readOnly: Bool) -> Command? {
        bindings.first { binding in
            binding.keys.contains(key) && (binding.screens?.contains(screen) ?? true) && !(readOnly && binding.writes)
        }?.command
    }

    /// Every binding that works on a screen, in keymap order.
    public func bindings(on screen: ScreenID, readOnly: Bool) -> [KeyBinding] {
        bindings.filter { ($0.screens?.contains(screen) ?? true) && !(readOnly && $0.writes) }
    }

    static let lists: Set<ScreenID> = [.customers, .customer, .refunds, .imports, .transaction, .overview]

    /// The conventions operators know from k9s, lazygit and tig.
    public static let standard = Keymap(bindings: [
        KeyBinding([.down, .char("j")], .down, "move down", footer: false),
        KeyBinding([.up, .char("k")], .up, "move up"),
        KeyBinding([.pageDown, .ctrl("f")], .pageDown, "page down"),
        KeyBinding([.pageUp, .ctrl("b")], .pageUp, "page up"),
        KeyBinding([.wheelDown], .scrollDown, "scroll down (mouse on)"),
        KeyBinding([.wheelUp], .scrollUp, "scroll up (mouse on)"),
        KeyBinding([.char("g"), .home], .top, "first row"),
        KeyBinding([.char("G"), .end], .bottom, "last row"),
        KeyBinding([.enter], .open, "open", on: [.overview, .customers, .customer, .refunds, .imports], footer: true),
        KeyBinding([.escape], .dismiss, "clear filter, or back", on: [.customers, .customer, .refunds]),
        KeyBinding([.escape], .dismiss, "back", on: [.overview, .transaction, .imports]),
        KeyBinding([.char("q")], .back, "back (quit if on top)", footer: true),
        KeyBinding([.char("Q"), .ctrl("c")], .quit, "quit"),
        KeyBinding([.char("/")], .filter, "filter", on: [.customers, .customer, .refunds], footer: true),
        KeyBinding([.char("/")], .findCustomer, "find a customer (:customer)", on: [.overview, .transaction, .imports]),
        KeyBinding([.char("n")], .nextMatch, "next match", on: [.customers, .customer, .refunds]),
        KeyBinding([.char("N")], .previousMatch, "previous match", on: [.customers, .customer, .refunds]),
        KeyBinding([.char(":")], .commandLine, "command line", footer: true),
        KeyBinding([.char("?")], .help, "help: every key here", footer: true),
        KeyBinding([.tab], .nextPane, "next pane", on: [.customer, .imports, .overview], footer: true),
        KeyBinding([.backTab], .previousPane, "previous pane", on: [.customer, .imports, .overview]),
        KeyBinding([.left, .char("h")], .earlierDay, "refunds per day: day before", on: [.overview]),
        KeyBinding([.right, .char("l")], .laterDay, "refunds per day: day after", on: [.overview]),
        KeyBinding([.char("1")], .screen(.overview), "overview"),
        KeyBinding([.char("2")], .screen(.customers), "customers"),
        KeyBinding([.char("3")], .screen(.customer), "customer"),
        KeyBinding([.char("4")], .screen(.transaction), "transaction"),
        KeyBinding([.char("5")], .screen(.refunds), "refunds"),
        KeyBinding([.char("6")], .screen(.imports), "imports"),
        KeyBinding([.char("t")], .timeTravel, "time travel: as of when", on: [.customer, .overview, .customers], footer: true),
        // (The queue's ages and deadlines are as of the instant too; its footer has no room for the hint.)
        KeyBinding([.char("t")], .timeTravel, "time travel: as of when", on: [.refunds]),
        KeyBinding([.char("y")], .copyId, "copy the id (OSC 52)", on: [.customers, .customer, .transaction, .refunds], footer: true),
        KeyBinding([.char("y")], .copyId, "copy a listed refund's id", on: [.overview]),
        KeyBinding([.char("a")], .acknowledge, "acknowledge flag(s)", on: [.refunds, .customer], footer: true, writes: true),
        KeyBinding([.char("r")], .resolve, "resolve, with a note", on: [.refunds, .customer], footer: true, writes: true),
        KeyBinding([.char("o")], .reopen, "reopen flag(s)", on: [.refunds, .customer], footer: true, writes: true),
        // (Marks serve triage alone: a read-only dashboard has none to make.)
        KeyBinding([.char(" ")], .mark, "mark for a bulk action", on: [.refunds], writes: true),
        // On every screen: an undo says whose flags it moved back (it said nothing on the Overview); in the footer
        // where triage is.
        KeyBinding([.char("u")], .undo, "undo your last triage", on: [.refunds, .customer], footer: true, writes: true),
        KeyBinding([.char("u")], .undo, "undo your last triage", on: [.overview, .customers, .imports, .transaction], writes: true),
        KeyBinding([.char("s")], .sort, "sort by id / last activity / refunds", on: [.customers], footer: true),
        KeyBinding([.char("f")], .cycleStatus, "cycle the status shown", on: [.refunds], footer: true),
        KeyBinding([.char("e")], .cycleEnvironment, "cycle the environment", on: ScreenID.environmentFiltered),
        KeyBinding([.char("A")], .toggleCovered, "customers subscribed at the instant", on: [.customers]),
        KeyBinding([.char("F")], .toggleFlagged, "only customers with open flags", on: [.customers]),
    ])
}
