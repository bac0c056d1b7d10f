import Foundation
import ReceiptDecoding
import ReceiptModel
import X509

/// The fixed instant the harnesses decode at: 2026-01-01T00:00:00Z.
let fuzzNow = Timestamp(millisecondsSince1970: 1_767_225_600_000)

/// The environment variable naming extra trust roots (DER or PEM files, separated by `:`), as `--trust-root`
/// adds them: scripts/fuzz passes the corpus's and SampleData's test roots so their seeds reach `verified`.
let trustRootsEnvironmentKey = "RECEIPTDESK_FUZZ_TRUST_ROOTS"

private let extraRoots: [[UInt8]] = {
    let paths = ProcessInfo.processInfo.environment[trustRootsEnvironmentKey]?.split(separator: ":") ?? []
    return paths.map { path in
        guard let data = FileManager.default.contents(atPath: String(path)),
            let certificate = try? parseCertificate([UInt8](data)),
            let der = try? certificate.serializeAsPEM().derBytes
        else {
            FileHandle.standardError.write(Data("\(trustRootsEnvironmentKey): \(path) is not a certificate\n".utf8))
            exit(2)
        }
        return der
    }
}()

/// Apple Root CA - G3 and the extra roots, parsed once: the JWS trust anchors.
private let jwsRoots: [Certificate] = ([AppleRoots.rootCAG3DER] + extraRoots).map { try! Certificate(derEncoded: $0) }

/// A decoder as the CLI builds one (Apple's roots plus the extra ones, signatures verified at the signing
/// date), shared by every input as one import shares it. Its chain cache keeps only chains that validated and
/// reuses one only inside its validity window, so an input's outcome does not depend on the inputs before it;
/// without it each signed seed costs a full chain validation and the harness runs at a few inputs a second.
let fuzzDecoder = RecordDecoder(
    verifier: JWSVerifier(policy: VerificationPolicy(trustRoots: jwsRoots)),
    receiptRoots: [AppleRoots.incRootDER] + extraRoots, now: fuzzNow)

enum DecodeHarness {
    static func run(_ bytes: [UInt8]) {
        let pieces = split(bytes, chunk: max(bytes.count, 1), limit: 64 << 20)
        // The splitter is fed in chunks of whatever size reads return: one chunk and small chunks must agree,
        // under the default limit and under a small one that makes records oversize. Chunks are 3 bytes up to
        // 192-byte inputs, then 1/64 of the input (feeding 84 KB 3 bytes at a time took most of a second).
        let small = max(3, bytes.count / 64)
        check(pieces, split(bytes, chunk: small, limit: 64 << 20), small, "default limit")
        check(
            split(bytes, chunk: max(bytes.count, 1), limit: 40), split(bytes, chunk: small, limit: 40), small,
            "40-byte limit")
        runBlocking {
            for piece in pieces {
                let record = await fuzzDecoder.decode(piece, path: "fuzz")
                emit(record)
            }
        }
    }

    static func split(_ bytes: [UInt8], chunk: Int, limit: Int) -> [RecordSplitter.Piece] {
        var splitter = RecordSplitter(maxRecordBytes: limit)
        var pieces: [RecordSplitter.Piece] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunk)
            pieces += splitter.feed(Array(bytes[start..<end]))
            start = end
        }
        return pieces + splitter.finish()
    }

    private static func check(_ a: [RecordSplitter.Piece], _ b: [RecordSplitter.Piece], _ chunk: Int, _ what: String) {
        let same =
            a.count == b.count
            && zip(a, b).allSatisfy { x, y in
                x.bytes == y.bytes && x.index == y.index && x.offset == y.offset && x.oversize == y.oversize
                    && x.unclosedArray == y.unclosedArray
            }
        if !same {
            let counts = "\(a.count) pieces from one chunk, \(b.count) from \(chunk)-byte chunks"
            fatalError("RecordSplitter (\(what)): \(counts), or they differ")
        }
    }

    /// What happens to a decoded record next: `decode --json` writes it, and the ledger stores its
    /// transactions, renewal infos and notification as canonical JSON that it must be able to read back.
    static func emit(_ record: DecodedRecord) {
        var writer = JSONWriter()
        writer.record(record)
        guard record.error == nil else { return }
        for transaction in record.transactions {
            do {
                _ = try CanonicalJSON.transaction(CanonicalJSON.encode(transaction))
            } catch {
                fatalError("a decoded transaction's canonical JSON does not read back: \(error)")
            }
        }
        for renewal in record.renewalInfos {
            do {
                _ = try CanonicalJSON.renewalInfo(CanonicalJSON.encode(renewal))
            } catch {
                fatalError("a decoded renewal info's canonical JSON does not read back: \(error)")
            }
        }
        if let notification = record.notification {
            do {
                _ = try CanonicalJSON.notification(CanonicalJSON.encode(notification))
            } catch {
                fatalError("a decoded notification's canonical JSON does not read back: \(error)")
            }
        }
    }
}

enum JWSHarness {
    static func run(_ bytes: [UInt8]) {
        let jws: CompactJWS
        do {
            jws = try CompactJWS(bytes)
        } catch {
            return
        }
        _ = runBlocking { await fuzzDecoder.verifier.verify(jws, now: fuzzNow) }
    }
}

enum ReceiptHarness {
    /// DER/BER only (a first byte other than `0x30` is another decoder's input), through the decoder the
    /// CLI uses: envelope, attributes, in-app entries, then the PKCS#7 signature against Apple Inc. Root.
    static func run(_ bytes: [UInt8]) {
        guard bytes.first == 0x30 else { return }
        runBlocking {
            let record = await fuzzDecoder.decode(bytes, provenance: Provenance(path: "fuzz", index: 0))
            DecodeHarness.emit(record)
        }
    }
}
