#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a stream of input bytes into records, chunk by chunk, so memory never grows with the input.
///
/// An input may hold one JSON document, several concatenated documents, a JSON array of documents,
/// NDJSON (one document per line), one or more bare JWS (one per line), a base64 app receipt (possibly
/// wrapped over many lines) or a raw DER receipt. The kind is decided from the first bytes; NDJSON is
/// recognised when the first document has no line break inside it. A first line that is none of these (a header, a
/// log line, a record cut at its start) is a record of its own, and the rest is decided anew.
///
/// A UTF-8 byte order mark in front of the input is left out of every record (offsets still count it). A
/// UTF-16 input (a byte order mark, or NULs between ASCII characters) is one record, which ``RecordDecoder``
/// rejects for its encoding. An input with no record in it (empty, white space, a byte order mark) yields no
/// record: it holds none.
public struct RecordSplitter: Sendable {
    /// One record's bytes and where it started.
    public struct Piece: Sendable {
        /// The record's bytes (for an oversize record, only its first bytes).
        public var bytes: [UInt8]
        /// The record's index in the input, from 0.
        public var index: Int
        /// Offset of its first byte in the input.
        public var offset: Int64
        /// Whether the record was larger than the limit and was cut (a UTF-16 input is cut to its first bytes
        /// but not marked: it is rejected for its encoding whatever its size).
        public var oversize: Bool
        /// The record's whole length in bytes (also when it was cut).
        public var length = 0
        /// The splitter's limit, for the message of an oversize record.
        public var limit = 0
        /// Not a record but the end of an input whose JSON array was never closed (`[{…},{…}` or `[{…},`: a download
        /// cut short between records), to be rejected as truncated: no bytes, at the input's end.
        public var unclosedArray = false
    }

    private enum Mode {
        /// The input's first bytes, held until they show a byte order mark or UTF-16.
        case start
        case undecided
        case jsonDocuments
        case jsonArray
        case ndjson
        case jwsLines
        /// Text whose first line decides: JWS lines, or one (wrapped) base64 blob.
        case firstLine
        case blob
        /// A UTF-16 input: one record.
        case utf16
    }

    /// How many first bytes decide on a byte order mark or UTF-16 (two UTF-16 code units).
    private static let headLength = 4
    private static let utf8BOM: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The largest record kept whole; larger ones are reported as `oversize`.
    public let maxRecordBytes: Int
    private var mode = Mode.start
    private var head: [UInt8] = []
    private var current: [UInt8] = []
    private var currentLength = 0
    private var currentStart: Int64 = 0
    private var inRecord = false
    private var offset: Int64 = 0
    private var nextIndex = 0
    // JSON scanner state.
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var sawNewlineInside = false
    /// The last byte scanned was a line break (a `{` now starts a line).
    private var lineStarted = false
    /// That line break was inside a string (which no JSON string holds: the document was cut).
    private var brokenString = false
    /// The last byte outside a string that is not white space (a string's closing quote counts as `"`).
    private var lastToken: UInt8 = 0
    private var arrayOpen = false
    private var scalarRecord = false
    private var isFirstDocument = true

    /// Creates a splitter.
    public init(maxRecordBytes: Int = 64 << 20) {
        self.maxRecordBytes = maxRecordBytes
    }

    /// Feeds the next chunk; returns the records it completed.
    public mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>) -> [Piece] {
        var out: [Piece] = []
        var i = 0
        let n = chunk.count
        while i < n {
            switch mode {
            case .start:
                let taken = min(n - i, Self.headLength - head.count)
                head.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[i..<(i + taken)]))
                i += taken
                if head.count == Self.headLength {
                    // The rest of the chunk goes with the head, so the first record is sniffed as before.
                    let rest = Array(UnsafeBufferPointer(rebasing: chunk[i..<n]))
                    i = n
                    out += startInput(then: rest)
                }
            case .utf16:
                append(UnsafeBufferPointer(rebasing: chunk[i..<n]))
                offset += Int64(n - i)
                i = n
            case .undecided:
                let byte = chunk[i]
                if isWhitespace(byte) {
                    i += 1
                    offset += 1
                    continue
                }
                switch byte {
                case UInt8(ascii: "["):
                    mode = .jsonArray
                    arrayOpen = true
                    i += 1
                    offset += 1
                case UInt8(ascii: "{"):
                    mode = .jsonDocuments
                default:
                    // (A DER receipt too: its first line, to the first 0x0A byte or the end, is binary.)
                    mode = .firstLine
                }
            case .jsonDocuments, .jsonArray:
                i = scanJSON(chunk, from: i, into: &out)
            case .ndjson, .jwsLines:
                i = scanLines(chunk, from: i, into: &out)
            case .firstLine:
                if !inRecord { begin() }
                var end = i
                while end < n, chunk[end] != 0x0A { end += 1 }
                flush(chunk, i, end)
                i = end
                if end < n {
                    if CompactJWS.looksLikeJWS(current) {
                        while let last = current.last, isWhitespace(last) { current.removeLast() }
                        out.append(self.end())
                        mode = .jwsLines
                    } else if Self.isBinary(current) || Self.wrapsBase64(current) {
                        // Binary (a gzip or zip file: one record, rejected with its advice, not a record per line
                        // break), or a receipt's base64 wrapped over lines.
                        mode = .blob
                    } else {
                        // Not the first line of a wrapped base64 receipt: a line of its own (a header, a log line's
                        // prefix, a record cut at its start by a log's rotation), and what follows is sniffed again.
                        // (As one blob, the valid records after it were one rejected record.)
                        while let last = current.last, isWhitespace(last) { current.removeLast() }
                        out.append(self.end())
                        mode = .undecided
                    }
                }
            case .blob:
                if !inRecord { begin() }
                append(UnsafeBufferPointer(rebasing: chunk[i..<n]))
                offset += Int64(n - i)
                i = n
            }
        }
        return out
    }

    /// Feeds an array of bytes.
    public mutating func feed(_ chunk: [UInt8]) -> [Piece] {
        chunk.withUnsafeBufferPointer { feed($0) }
    }

    /// Ends the input; returns the last record if one was open (a truncated document stays truncated).
    /// An input with no record at all (empty, or only white space) yields none: it holds zero records. A JSON
    /// array never closed ends with an ``Piece/unclosedArray`` piece, unless its last record was cut inside (that
    /// record is the truncated one): the records read are whole, but those after them are missing.
    public mutating func finish() -> [Piece] {
        var pieces: [Piece] = []
        if mode == .start { pieces = startInput(then: []) }
        // (A number or a literal ends where the input does; a string without its closing quote was cut.)
        let cutInside = inRecord && mode == .jsonArray && (!scalarRecord || current.first == UInt8(ascii: "\"") && !Self.closesString(current))
        pieces += finishOpenRecord()
        if arrayOpen && !cutInside {
            arrayOpen = false
            pieces.append(Piece(bytes: [], index: nextIndex, offset: offset, oversize: false, unclosedArray: true))
            nextIndex += 1
        }
        return pieces
    }

    /// Whether `bytes`, the first bytes of an input, are UTF-16: a byte order mark (`FF FE` little-endian,
    /// `FE FF` big-endian), or ASCII with a NUL before or after each character. Returns the byte order.
    ///
    /// JSON, JWS and base64 never hold a NUL, and a DER receipt's second byte is its length's (`0x80` and up
    /// for any receipt), so two such code units in a row are text saved as UTF-16.
    static func utf16ByteOrder(_ bytes: some Collection<UInt8>) -> String? {
        let first = Array(bytes.prefix(headLength))
        if first.starts(with: [0xFF, 0xFE]) { return "little-endian" }
        if first.starts(with: [0xFE, 0xFF]) { return "big-endian" }
        let units = stride(from: 0, to: first.count - 1, by: 2).map { (first[$0], first[$0 + 1]) }
        guard !units.isEmpty else { return nil }
        let ascii: (UInt8) -> Bool = { $0 != 0 && $0 < 0x80 }
        if units.allSatisfy({ ascii($0.0) && $0.1 == 0 }) { return "little-endian" }
        if units.allSatisfy({ $0.0 == 0 && ascii($0.1) }) { return "big-endian" }
        return nil
    }

    /// Decides from the input's first bytes (``head``): a UTF-8 byte order mark is skipped, a UTF-16 input is
    /// one record; then the head and `rest` are split as any input.
    private mutating func startInput(then rest: [UInt8]) -> [Piece] {
        var bytes = head
        head = []
        if Self.utf16ByteOrder(bytes) != nil {
            mode = .utf16
            begin()
        } else {
            mode = .undecided
            if bytes.starts(with: Self.utf8BOM) {
                bytes.removeFirst(Self.utf8BOM.count)
                offset += Int64(Self.utf8BOM.count)
            }
        }
        return feed(bytes + rest)
    }

    private mutating func finishOpenRecord() -> [Piece] {
        guard inRecord else { return [] }
        if mode == .utf16 {
            var piece = end()
            piece.oversize = false
            return [piece]
        }
        if mode == .blob || mode == .ndjson || mode == .jwsLines || mode == .firstLine {
            while let last = current.last, isWhitespace(last) { current.removeLast() }
            if current.allSatisfy(isWhitespace) && currentLength <= maxRecordBytes {
                inRecord = false
                return []
            }
        }
        return [end()]
    }

    // MARK: JSON documents and arrays

    private mutating func scanJSON(_ chunk: UnsafeBufferPointer<UInt8>, from start: Int, into out: inout [Piece]) -> Int {
        var i = start
        let n = chunk.count
        if !inRecord {
            // Between records: skip white space (and commas inside an array), find the next start.
            while i < n {
                let byte = chunk[i]
                if isWhitespace(byte) || (mode == .jsonArray && byte == UInt8(ascii: ",")) {
                    i += 1
                    offset += 1
                    continue
                }
                if mode == .jsonArray && byte == UInt8(ascii: "]") {
                    i += 1
                    offset += 1
                    arrayOpen = false
                    mode = .undecided
                    return i
                }
                break
            }
            guard i < n else { return i }
            begin()
            depth = 0
            inString = false
            escaped = false
            sawNewlineInside = false
            lineStarted = false
            brokenString = false
            lastToken = 0
            let first = chunk[i]
            scalarRecord = first != UInt8(ascii: "{") && first != UInt8(ascii: "[")
        }
        let recordStart = i
        while i < n {
            let byte = chunk[i]
            if scalarRecord {
                // A stray value: it runs to the next separator.
                if isWhitespace(byte) || (mode == .jsonArray && (byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]"))) {
                    flush(chunk, recordStart, i)
                    out.append(end())
                    return i
                }
                i += 1
                continue
            }
            // A document cut short, a whole one after it on a line of its own: a `{` that starts a line inside a
            // document where none can stand is the next document's, so the cut one ends before it. In a document a `{`
            // follows `[`, `,` or `:` (an unindented printer, Python's `indent=0`, puts a nested one at a line's
            // start), and no string holds a line break. (A cut one took every document after it, valid ones among
            // them, into one rejected record.)
            if byte == UInt8(ascii: "{"), mode == .jsonDocuments, depth > 0, lineStarted,
                brokenString || !(lastToken == UInt8(ascii: "[") || lastToken == UInt8(ascii: ",") || lastToken == UInt8(ascii: ":"))
            {
                flush(chunk, recordStart, i)
                while let last = current.last, isWhitespace(last) { current.removeLast() }
                out.append(end())
                lineStarted = false
                return i
            }
            lineStarted = byte == 0x0A
            if lineStarted { brokenString = inString }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                i += 1
                continue
            }
            if !isWhitespace(byte) { lastToken = byte }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 {
                    i += 1
                    flush(chunk, recordStart, i)
                    out.append(end())
                    if mode == .jsonDocuments && isFirstDocument && !sawNewlineInside {
                        mode = .ndjson
                    }
                    isFirstDocument = false
                    return i
                }
            case 0x0A: sawNewlineInside = true
            default: break
            }
            i += 1
        }
        flush(chunk, recordStart, n)
        return n
    }

    // MARK: Lines

    private mutating func scanLines(_ chunk: UnsafeBufferPointer<UInt8>, from start: Int, into out: inout [Piece]) -> Int {
        var i = start
        let n = chunk.count
        if !inRecord {
            while i < n, isWhitespace(chunk[i]) {
                i += 1
                offset += 1
            }
            guard i < n else { return i }
            begin()
        }
        let lineStart = i
        if let base = chunk.baseAddress, let found = memchr(base + i, 0x0A, n - i) {
            i = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        } else {
            i = n
        }
        flush(chunk, lineStart, i)
        if i < n {
            while let last = current.last, isWhitespace(last) { current.removeLast() }
            out.append(end())
        }
        return i
    }

    // MARK: Record buffer

    private mutating func begin() {
        inRecord = true
        current.removeAll(keepingCapacity: true)
        currentLength = 0
        currentStart = offset
    }

    private mutating func flush(_ chunk: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) {
        append(UnsafeBufferPointer(rebasing: chunk[from..<to]))
        offset += Int64(to - from)
    }

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        currentLength += bytes.count
        let room = maxRecordBytes - current.count
        if room > 0 { current.append(contentsOf: bytes.prefix(room)) }
    }

    private mutating func end() -> Piece {
        inRecord = false
        let oversize = currentLength > maxRecordBytes
        let bytes = oversize ? Array(current.prefix(1024)) : current
        let piece = Piece(
            bytes: bytes, index: nextIndex, offset: currentStart, oversize: oversize, length: currentLength, limit: maxRecordBytes)
        nextIndex += 1
        current.removeAll(keepingCapacity: current.capacity <= 1 << 20)
        return piece
    }

    /// Whether `line`, an input's first line, starts a base64 receipt wrapped over lines: base64 alone, beginning as a
    /// DER receipt's base64 does (`MI`) or an iOS 6 transaction receipt's plist (`ew`, its `{`), 32 to 1,024 characters
    /// (`base64` wraps at 76, PEM at 64, `-w` at what it is told; a whole receipt is kilobytes: each line is a record
    /// then). A header word or a JWS's tail in base64 characters alone is a line of its own.
    static func wrapsBase64(_ line: [UInt8]) -> Bool {
        var end = line.count
        while end > 0, isWhitespace(line[end - 1]) { end -= 1 }
        guard (32...1024).contains(end), line[0] == UInt8(ascii: "M") && line[1] == UInt8(ascii: "I")
            || line[0] == UInt8(ascii: "e") && line[1] == UInt8(ascii: "w")
        else { return false }
        return line[..<end].allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
        }
    }

    /// Whether a first line is binary: a NUL in it, a DER receipt's start (a SEQUENCE, `30`, with a length of its long
    /// or indefinite form, `80` and up), or a compressed or archived file's signature (gzip, zip, bzip2, xz, zstd). (Not
    /// any control character or broken UTF-8: a log line's colours, a line cut inside a character.) Decided on the
    /// line, not on the bytes of the chunk at hand: a DER receipt's first bytes in a chunk of their own read as text.
    static func isBinary(_ line: [UInt8]) -> Bool {
        if line.contains(0) { return true }
        if line.count >= 2, line[0] == 0x30, line[1] >= 0x80 { return true }
        for magic: [UInt8] in [[0x1F, 0x8B], [0x50, 0x4B, 0x03, 0x04], [0x42, 0x5A, 0x68], [0xFD, 0x37, 0x7A, 0x58, 0x5A], [0x28, 0xB5, 0x2F, 0xFD]]
        where line.starts(with: magic) {
            return true
        }
        return false
    }

    /// Whether `bytes`, a string's from its opening quote, end with its closing quote (not an escaped one).
    static func closesString(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 2, bytes.last == UInt8(ascii: "\"") else { return false }
        let backslashes = bytes.dropLast().reversed().prefix { $0 == UInt8(ascii: "\\") }.count
        return backslashes % 2 == 0
    }
}
