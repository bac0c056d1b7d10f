import CSV

/// One row of an operator's CSV file, with the line it starts on (for messages).
public struct CSVRow: Sendable, Equatable {
    public var line: Int
    public var fields: [String]

    public init(line: Int, fields: [String]) {
        self.line = line
        self.fields = fields
    }
}

/// A CSV file these readers refuse, with the line.
public struct CSVRowsError: Error, Sendable, CustomStringConvertible {
    public var line: Int
    public var message: String
    public var description: String { "line \(line): \(message)" }
}

/// The operator's CSV files (`--catalog`, `customers.csv`) read by CSV.swift: quoted fields (with commas
/// and quotes inside), CRLF or LF line ends, a byte order mark. Fields are trimmed; blank lines are left out.
/// What the fields mean is the reader's business (``Entitlements/Catalog/parse(rows:)``,
/// ``DataOptions/customerMapping(_:)``).
///
/// A comment is a whole line whose first character is `#`: that line is left out, and only that. A value that
/// starts with `#` is data when it is quoted (`"#vip-1",originalTransactionId,100`) or not at the start of
/// the line (after a comma or a space), so an id is never dropped for its first character.
///
/// No product or account id holds a line break, so a field that does is refused with its line: that is
/// also how an unterminated quote (which CSV.swift reads to the end of the file) or a character after a
/// closing quote (which it joins to the next line) shows, instead of rows vanishing into one field.
public enum CSVRows {
    public static func parse(_ bytes: [UInt8]) throws(CSVRowsError) -> [CSVRow] {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            // Named by the first line that is not UTF-8 (a line end is one byte in UTF-8 and in Latin-1 alike).
            let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
            let line = 1 + (lines.firstIndex { String(validating: $0, as: UTF8.self) == nil } ?? 0)
            throw CSVRowsError(line: line, message: "is not UTF-8 text (save the file as UTF-8)")
        }
        return try parse(text)
    }

    public static func parse(_ text: String) throws(CSVRowsError) -> [CSVRow] {
        // A byte order mark from a spreadsheet export is not part of the first field.
        let text = withoutComments(text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text)
        // CSVReader(string:) throws only when asked to read a header row, which we do not.
        guard let reader = try? CSVReader(string: text, hasHeaderRow: false, trimFields: true) else { return [] }
        var rows: [CSVRow] = []
        var line = 1
        while let fields = reader.next() {
            if fields.contains(where: { $0.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) }) {
                throw CSVRowsError(line: line, message: "a field runs over a line end (an unterminated quote, or text after a closing quote)")
            }
            let start = line
            line += 1
            if fields.allSatisfy(\.isEmpty) { continue }
            rows.append(CSVRow(line: start, fields: fields))
        }
        return rows
    }

    /// `text` with every comment line emptied, its line end kept (so each row keeps its line number).
    ///
    /// A line starts the text or follows a CR or LF; a comment's first byte is `#`. CSV.swift has no
    /// comments: this is decided on the raw text, before quotes are read.
    static func withoutComments(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.contains(UInt8(ascii: "#")) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var lineStart = true
        var inComment = false
        for byte in bytes {
            let lineEnd = byte == 0x0A || byte == 0x0D
            if lineStart && byte == UInt8(ascii: "#") { inComment = true }
            if lineEnd { inComment = false }
            if !inComment { out.append(byte) }
            lineStart = lineEnd
        }
        return String(decoding: out, as: UTF8.self)
    }
}
