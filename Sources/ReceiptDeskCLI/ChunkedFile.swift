import Foundation
import Ledger
import ReceiptDecoding
import ReceiptModel

/// Reads an input in chunks and splits it into records, so memory does not grow with its size.
struct ChunkedFile {
    static let chunkSize = 1 << 20

    private let descriptor: Int32
    private let path: String
    private var buffer = [UInt8](repeating: 0, count: chunkSize)
    private var splitter: RecordSplitter
    private var finished = false
    /// Bytes read so far.
    private(set) var bytesRead: Int64 = 0

    /// The largest record kept by default: a longer one is rejected with its size, never held whole.
    static let defaultMaxRecordBytes = 64 << 20

    /// Opens `path` (`-` is standard input).
    init(_ path: String, maxRecordBytes: Int = defaultMaxRecordBytes) throws {
        self.path = path
        splitter = RecordSplitter(maxRecordBytes: maxRecordBytes)
        if path == "-" {
            descriptor = STDIN_FILENO
        } else {
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else {
                throw CLIError.usage("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            descriptor = fd
        }
    }

    /// The records completed by the next chunk; `nil` once the input is exhausted.
    mutating func next() throws -> [RecordSplitter.Piece]? {
        if finished { return nil }
        let count = buffer.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, ChunkedFile.chunkSize) }
        if count < 0 {
            throw CLIError.usage("error while reading \(path): \(String(cString: strerror(errno)))")
        }
        if count == 0 {
            finished = true
            if descriptor != STDIN_FILENO { close(descriptor) }
            return splitter.finish()
        }
        bytesRead += Int64(count)
        return buffer.withUnsafeBufferPointer { splitter.feed(UnsafeBufferPointer(rebasing: $0[0..<count])) }
    }

    /// Standard input kept in a temporary file: unlinked at once (nothing is left behind, even on a kill),
    /// read through `path` (`/proc/self/fd/N`) while `descriptor` stays open; `close()` when done.
    struct Spool {
        let descriptor: Int32
        var path: String { "/proc/self/fd/\(descriptor)" }
        func close() { _ = Foundation.close(descriptor) }
    }

    /// Whether `path` can be read only once (standard input, a pipe such as `<(zcat export.gz)`, a FIFO, a device):
    /// an import reads its input twice (its hash names the source, then its records), so such an input is spooled
    /// first. Read twice, a pipe gave its hash, then no records: the source was stored as read whole with 0 records,
    /// and the same content imported later from a file was taken for already imported.
    static func readsOnce(_ path: String) -> Bool {
        guard path != "-" else { return true }
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT != S_IFREG
    }

    /// Copies `path` (`-`: standard input) into an unlinked file under `$TMPDIR`, in chunks.
    static func spool(_ path: String) throws -> Spool {
        let name = path == "-" ? "standard input" : path
        let input = path == "-" ? STDIN_FILENO : open(path, O_RDONLY)
        guard input >= 0 else { throw CLIError.usage("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { if input != STDIN_FILENO { close(input) } }
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/receiptdesk-stdin-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw CLIError.usage("cannot keep \(name) in \(directory): \(String(cString: strerror(errno)))")
        }
        unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        let spool = Spool(descriptor: descriptor)
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(input, $0.baseAddress, chunkSize) }
            let readError = errno
            if count < 0 && readError == EINTR { continue }
            if count < 0 {
                spool.close()
                throw CLIError.usage("error while reading \(name): \(String(cString: strerror(readError)))")
            }
            if count == 0 { break }
            var written = 0
            while written < count {
                let n = buffer.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, count - written) }
                let writeError = errno
                if n < 0 && writeError == EINTR { continue }
                guard n > 0 else {
                    spool.close()
                    throw CLIError.usage("cannot keep \(name) in \(directory): \(String(cString: strerror(writeError)))")
                }
                written += n
            }
        }
        return spool
    }

    /// The path, content hash and size of a file, read once in chunks.
    static func sourceInfo(_ path: String) throws -> SourceInfo {
        let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw CLIError.usage("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var hash = CanonicalJSON.StreamingHash()
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var size: Int64 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, chunkSize) }
            if count < 0 { throw CLIError.usage("error while reading \(path)") }
            if count == 0 { break }
            buffer.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            size += Int64(count)
        }
        return SourceInfo(path: path, sha256: hash.hexDigest(), size: size)
    }

    /// Expands directories into the data files below them, sorted; plain paths pass through. What a directory holds
    /// that is not data is left out and said on standard error: files taken for notes or key material (by their
    /// extension: a raw DER receipt named `receipt.der` must be named itself to be read, and the line says so), hidden
    /// files and directories (`.git`), and what is no regular file (a FIFO would wait for a writer forever, a broken
    /// link cannot be read: neither stops the import of the rest), and SQLite databases with their `-wal`, `-shm` and
    /// `-journal` (a ledger kept beside its data).
    static func expand(_ paths: [String]) throws -> [String] {
        let (files, noted) = try expandNoting(paths)
        for empty in noted where empty.reason == .emptyDirectory {
            FileHandle.standardError.write(Data("receiptdesk: \(safe(empty.path)) is a directory with no file in it\n".utf8))
        }
        let skipped = noted.filter { $0.reason != .emptyDirectory }
        if !skipped.isEmpty {
            var reasons: [String] = []
            let notes = skipped.filter { $0.reason == .notesOrKeys }.map(\.path)
            if !notes.isEmpty {
                let kinds = Set(notes.map { ($0 as NSString).pathExtension.lowercased() }).sorted().map { "." + $0 }
                reasons.append("\(notes.count) taken for notes or key material (\(kinds.joined(separator: " ")))")
            }
            let hidden = skipped.count { $0.reason == .hidden }
            if hidden > 0 { reasons.append("\(hidden) hidden") }
            let special = skipped.count { $0.reason == .notRegular }
            if special > 0 { reasons.append("\(special) no regular file (a pipe, socket, device or broken link)") }
            let databases = skipped.count { $0.reason == .database }
            if databases > 0 { reasons.append("\(databases) SQLite \(databases == 1 ? "database file" : "database files") (a ledger, its -wal and -shm)") }
            let linked = skipped.count { $0.reason == .linkedDirectory }
            if linked > 0 { reasons.append("\(linked) linked \(linked == 1 ? "directory" : "directories") (name \(linked == 1 ? "it" : "each") to read it)") }
            let shown = skipped.prefix(3).map { safe($0.path) }.joined(separator: ", ") + (skipped.count > 3 ? ", …" : "")
            FileHandle.standardError.write(
                Data(
                    ("receiptdesk: skipped \(skipped.count) \(skipped.count == 1 ? "file" : "files") of the paths given, "
                        + "\(reasons.joined(separator: ", ")): \(shown); name a file itself to read it\n").utf8))
        }
        return files
    }

    /// Why a directory's entry is not read.
    enum Skip: Equatable {
        case notesOrKeys, hidden, notRegular, linkedDirectory, database
        /// A directory given that holds nothing at all (not a file left out: there is none).
        case emptyDirectory
    }

    /// Whether a file is an SQLite database, by its first 16 bytes (a ledger kept beside the data it was made from:
    /// read as data, a run stored its own bytes in itself as rejected records, and grew it each time).
    static func isSQLiteDatabase(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 16)) ?? Data()
        return head == Data("SQLite format 3\0".utf8)
    }

    /// An SQLite database's companion (`-wal`, `-shm`, `-journal`) beside it.
    static func isSQLiteCompanion(_ path: String) -> Bool {
        for suffix in ["-wal", "-shm", "-journal"] where path.hasSuffix(suffix) {
            if isSQLiteDatabase(String(path.dropLast(suffix.count))) { return true }
        }
        return false
    }

    /// Fails naming the first path that is not there (`-`, standard input, always is).
    static func requireExisting(_ paths: [String]) throws {
        for path in paths where path != "-" && !FileManager.default.fileExists(atPath: path) {
            throw CLIError.usage("no such file: \(path)")
        }
    }

    /// ``expand(_:)``'s files, and what it left out (sorted by path), with why.
    static func expandNoting(_ paths: [String]) throws -> (files: [String], skipped: [(path: String, reason: Skip)]) {
        try requireExisting(paths)
        var out: [String] = []
        var left: [(path: String, reason: Skip)] = []
        // Notes and key material that sit beside data (a corpus's SOURCES.md, its certificates).
        let skipped: Set<String> = ["md", "cer", "der", "pem", "p8", "crt", "key"]
        for path in paths {
            // (Every path is there: ``requireExisting(_:)``.)
            var isDirectory: ObjCBool = false
            if path != "-" { _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) }
            guard isDirectory.boolValue else {
                // A path named itself is read whatever it is (`<(zcat export.gz)` is a pipe), but for an SQLite
                // database or its companions, regular files (a pipe's first bytes are not read here): `import ./*`
                // beside the ledger read it as data, as a directory did.
                var status = stat()
                if path != "-", stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, isSQLiteDatabase(path) || isSQLiteCompanion(path) {
                    left.append((path, .database))
                    continue
                }
                out.append(path)
                continue
            }
            guard let enumerator = FileManager.default.enumerator(atPath: path) else { continue }
            var found: [String] = []
            let leftBefore = left.count
            for case let relative as String in enumerator {
                let name = (relative as NSString).lastPathComponent
                let full = (path as NSString).appendingPathComponent(relative)
                // What the entry is, its link followed (a link to a data file is read; a link to nothing is not).
                var status = stat()
                let kind = stat(full, &status) == 0 ? status.st_mode & S_IFMT : nil
                if name.hasPrefix(".") {
                    // (A hidden directory is one entry of the count, what it holds not read.)
                    if kind == S_IFDIR { enumerator.skipDescendants() }
                    left.append((full, .hidden))
                    continue
                }
                if kind == S_IFDIR {
                    // A link to a directory is not walked (a link to an ancestor would loop): said, to be named.
                    var own = stat()
                    if lstat(full, &own) == 0, own.st_mode & S_IFMT == S_IFLNK { left.append((full, .linkedDirectory)) }
                    continue
                }
                guard kind == S_IFREG else {
                    left.append((full, .notRegular))
                    continue
                }
                if skipped.contains((name as NSString).pathExtension.lowercased()) {
                    left.append((full, .notesOrKeys))
                    continue
                }
                if isSQLiteDatabase(full) || isSQLiteCompanion(full) {
                    left.append((full, .database))
                    continue
                }
                found.append(full)
            }
            // (A directory with nothing in it at all: said, or the run's "read 0" said nothing of why.)
            if found.isEmpty, left.count == leftBefore { left.append((path, .emptyDirectory)) }
            out.append(contentsOf: found.sorted())
        }
        return (out, left.sorted { $0.path < $1.path })
    }
}
