/// One cell of the screen: a grapheme (empty for the second half of a wide one) and its style.
public struct Cell: Hashable, Sendable {
    public var text: String
    public var style: Style

    public init(text: String = " ", style: Style = .plain) {
        self.text = text
        self.style = style
    }

    /// The right half of a wide character: drawn by its left neighbour.
    public var isContinuation: Bool { text.isEmpty }

    public static let blank = Cell()
}

/// The screen as cells. Rendering writes here; a backend draws only the cells that changed.
///
/// Every write goes through ``put(_:x:y:style:width:)``, which sanitises text from data, measures display
/// width per grapheme and never splits a wide character at an edge.
public struct ScreenBuffer: Sendable, Equatable {
    public private(set) var width: Int
    public private(set) var height: Int
    public private(set) var cells: [Cell]
    /// Where the hardware cursor rests (the selected row), so screen readers and tmux copy-mode follow it.
    public var cursor: (x: Int, y: Int)?

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    public static func == (lhs: ScreenBuffer, rhs: ScreenBuffer) -> Bool {
        lhs.width == rhs.width && lhs.height == rhs.height && lhs.cells == rhs.cells && lhs.cursor?.x == rhs.cursor?.x
            && lhs.cursor?.y == rhs.cursor?.y
    }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { cells[y * width + x] = newValue }
    }

    /// Clears every cell to a blank of `style`.
    public mutating func clear(style: Style = .plain) {
        for index in cells.indices { cells[index] = Cell(text: " ", style: style) }
        cursor = nil
    }

    /// Fills a rectangle with spaces of `style`.
    public mutating func fill(x: Int, y: Int, width w: Int, height h: Int, style: Style) {
        for row in max(0, y)..<min(height, y + h) {
            for column in max(0, x)..<min(width, x + w) { self[column, row] = Cell(text: " ", style: style) }
        }
    }

    /// Writes text at (x, y), at most `width` cells (default: to the right edge); returns the cells used.
    /// Text is sanitised first: control characters and escape sequences are shown escaped, never drawn.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, style: Style = .plain, width limit: Int? = nil) -> Int {
        guard y >= 0, y < height, x < width else { return 0 }
        let available = min(limit ?? (width - x), width - max(0, x))
        guard available > 0 else { return 0 }
        let safe = Sanitize.text(text)
        var column = x
        let end = x + available
        for character in safe {
            let w = DisplayWidth.of(character)
            if w == 0 {
                // A lone combining mark or zero-width scalar: attach it to the previous cell's grapheme.
                if column > x, column - 1 >= 0, column - 1 < width {
                    var previous = column - 1
                    if self[previous, y].isContinuation, previous > 0 { previous -= 1 }
                    self[previous, y].text.append(character)
                }
                continue
            }
            if column + w > end {
                // A wide character that would straddle the edge: pad instead of splitting it.
                while column < end {
                    if column >= 0 { set(column, y, Cell(text: " ", style: style)) }
                    column += 1
                }
                break
            }
            if column >= 0 {
                set(column, y, Cell(text: String(character), style: style))
                if w == 2 { set(column + 1, y, Cell(text: "", style: style)) }
            }
            column += w
        }
        return column - x
    }

    /// Writes text cut to `width` cells with `…`, padded with spaces to exactly `width`.
    public mutating func putFitted(
        _ text: String, x: Int, y: Int, width w: Int, style: Style, alignRight: Bool = false, ascii: Bool = false, keepEnd: Bool = false
    ) {
        let fitted = DisplayWidth.fit(Sanitize.text(text, ascii: ascii), to: w, alignRight: alignRight, ellipsis: ascii ? "~" : "…", keepEnd: keepEnd)
        put(fitted, x: x, y: y, style: style, width: w)
    }

    /// Sets a cell, repairing a wide character it overwrites half of.
    private mutating func set(_ x: Int, _ y: Int, _ cell: Cell) {
        guard x >= 0, x < width else { return }
        let old = self[x, y]
        if old.isContinuation, x > 0, !self[x - 1, y].isContinuation {
            self[x - 1, y] = Cell(text: " ", style: self[x - 1, y].style)
        } else if !old.isContinuation, DisplayWidth.of(old.text) == 2, x + 1 < width, !cell.isContinuation {
            self[x + 1, y] = Cell(text: " ", style: self[x + 1, y].style)
        }
        self[x, y] = cell
    }

    /// Changes the style of existing cells (a selection bar over drawn text).
    public mutating func restyle(x: Int, y: Int, width w: Int, _ transform: (Style) -> Style) {
        guard y >= 0, y < height else { return }
        for column in max(0, x)..<min(width, x + w) { self[column, y].style = transform(self[column, y].style) }
    }

    /// One row as plain text (wide characters once, continuation cells skipped), for snapshots and tests.
    public func line(_ y: Int) -> String {
        var out = ""
        for x in 0..<width where !self[x, y].isContinuation { out += self[x, y].text }
        return out
    }

    /// The whole screen as text, trailing spaces trimmed per line.
    public var text: String {
        (0..<height).map { y in
            var line = line(y)
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}

/// Line-drawing characters: Unicode box drawing in a UTF-8 locale, ASCII otherwise.
public struct Glyphs: Sendable, Equatable {
    public var horizontal, vertical, topLeft, topRight, bottomLeft, bottomRight, teeLeft, teeRight: String
    public var ellipsis: String
    public var bullet: String
    public var arrowUp: String
    public var arrowDown: String
    public var sparks: [String]
    public var blockFull, blockLight: String
    public var separator: String

    public static let unicode = Glyphs(
        horizontal: "─", vertical: "│", topLeft: "┌", topRight: "┐", bottomLeft: "└", bottomRight: "┘", teeLeft: "├",
        teeRight: "┤", ellipsis: "…", bullet: "●", arrowUp: "▲", arrowDown: "▼",
        sparks: ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"], blockFull: "█", blockLight: "░", separator: "›")

    public static let ascii = Glyphs(
        horizontal: "-", vertical: "|", topLeft: "+", topRight: "+", bottomLeft: "+", bottomRight: "+", teeLeft: "+",
        teeRight: "+", ellipsis: "~", bullet: "*", arrowUp: "^", arrowDown: "v",
        sparks: ["_", ".", "-", "=", "+", "*", "#", "#"], blockFull: "#", blockLight: ".", separator: ">")
}
