import CSV
import Entitlements

/// One row of an operator's CSV file, with the line it starts on (for messages).
public struct CSVRow: Sendable, Equatable {
    public var line: Int
    public var fields: [String]

    public init(line: Int, fields: [String]) {
        self.line = line
        self.fields = fields
    }
}

/// The operator's CSV files (`--catalog`, `customers.csv`) read by CSV.swift: quoted fields (with commas,
/// quotes and line breaks inside), CRLF or LF line ends. Fields are trimmed; blank lines and lines whose
/// first field starts with `#` are left out. What the fields mean is the reader's business
/// (``Entitlements/Catalog/parse(rows:)``, ``DataOptions/customerMapping(_:)``).
public enum CSVRows {
    public static func parse(_ text: String) -> [CSVRow] {
        // A byte order mark from a spreadsheet export is not part of the first field.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        // CSVReader(string:) throws only when asked to read a header row, which we do not.
        guard let reader = try? CSVReader(string: text, hasHeaderRow: false, trimFields: true) else { return [] }
        var rows: [CSVRow] = []
        var line = 1
        while let fields = reader.next() {
            let start = line
            // The next row starts after this one's line end and any line breaks inside its quoted fields.
            line += 1 + fields.reduce(0) { $0 + $1.utf8.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } }
            if fields.allSatisfy(\.isEmpty) || fields[0].hasPrefix("#") { continue }
            rows.append(CSVRow(line: start, fields: fields))
        }
        return rows
    }
}

extension Catalog {
    /// A catalog file's text, read as `--catalog` reads it: CSV by ``CSVRows``, values by ``Catalog/parse(rows:)``.
    public static func parse(csv text: String) throws(CatalogError) -> Catalog {
        try parse(rows: CSVRows.parse(text).map { ($0.line, $0.fields) })
    }
}
