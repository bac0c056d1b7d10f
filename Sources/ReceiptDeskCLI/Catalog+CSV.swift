import Entitlements

extension Catalog {
    /// A catalog file's text, read as `--catalog` reads it: CSV by ``CSVRows``, values by ``Catalog/parse(rows:)``.
    public static func parse(csv text: String) throws(CatalogError) -> Catalog {
        try parse(csv: Array(text.utf8))
    }

    /// A catalog file's bytes, which must be UTF-8.
    public static func parse(csv bytes: [UInt8]) throws(CatalogError) -> Catalog {
        let rows: [CSVRow]
        do {
            rows = try CSVRows.parse(bytes)
        } catch {
            throw CatalogError(line: error.line, message: error.message)
        }
        return try parse(rows: rows.map { ($0.line, $0.fields) })
    }
}
