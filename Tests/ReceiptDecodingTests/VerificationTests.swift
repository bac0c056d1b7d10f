import Crypto
import Foundation
import ReceiptDecoding
import ReceiptModel
import Samples
import Testing

/// Signed data minted with the Samples CA at a fixed reference time, as swift-certificates' own tests do.
@Suite("JWS verification, as strict as Apple's library")
struct VerificationTests {
    /// The test CA, made once. Should making it fail, every test that signs fails with the error; the run goes on.
    private static let madeCA = Result { try TestCA() }
    static func ca() throws -> TestCA { try madeCA.get() }
    static func signer() throws -> JWSSigner { JWSSigner(ca: try ca()) }
    static let signedDate: Int64 = 1_740_816_000_000  // 2025-03-01
    static let payload = #"{"transactionId":"2000000101","originalTransactionId":"2000000100","bundleId":"com.example.app","productId":"pro.monthly","purchaseDate":1740816000000,"expiresDate":1743494400000,"type":"Auto-Renewable Subscription","environment":"Production","signedDate":\#(signedDate),"quantity":1}"#

    /// A decoder trusting `roots` (by default the test CA's root).
    static func decoder(roots: [[UInt8]]? = nil, bundleId: String? = nil, environment: Environment? = nil) throws
        -> RecordDecoder
    {
        try makeDecoder(extraRoots: roots ?? [ca().rootDER], bundleId: bundleId, environment: environment)
    }

    static func decode(_ jws: String, decoder: RecordDecoder? = nil) async throws -> DecodedRecord {
        let decoder = try decoder ?? Self.decoder()
        return await decoder.decode(Array(jws.utf8), provenance: Provenance(path: "t", index: 0))
    }

    @Test("a well-formed transaction signed by a trusted chain is verified and decoded")
    func valid() async throws {
        let record = try await Self.decode(Self.signer().sign(json: Self.payload))
        #expect(record.isOK)
        #expect(record.verification == .verified)
        let t = try #require(record.transactions.first)
        #expect(t.transactionId == "2000000101")
        #expect(t.verification == .verified)
        #expect(t.expiresDate?.millisecondsSince1970 == 1_743_494_400_000)
    }

    struct Forgery: CustomTestStringConvertible, Sendable {
        let name: String
        let code: String
        let make: @Sendable () throws -> String
        var testDescription: String { name }
    }

    static func parts(_ jws: String) -> [String] { jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }

    static let forgeries: [Forgery] = [
        Forgery(name: "altered payload", code: "signatureInvalid") {
            let p = try parts(signer().sign(json: payload))
            let forged = payload.replacingOccurrences(of: "pro.monthly", with: "pro.lifetime")
            return p[0] + "." + base64URL(Array(forged.utf8)) + "." + p[2]
        },
        Forgery(name: "flipped signature bit", code: "signatureInvalid") {
            let p = try parts(signer().sign(json: payload))
            let decoded = try #require(Data(base64Encoded: p[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + String(repeating: "=", count: (4 - p[2].count % 4) % 4)))
            var signature = Array(decoded)
            signature[10] ^= 0x01
            return p[0] + "." + p[1] + "." + base64URL(signature)
        },
        Forgery(name: "alg none", code: "algorithmNotAllowed") {
            let header = try #"{"alg":"none","x5c":[\#(ca().x5c.map { "\"\($0)\"" }.joined(separator: ","))]}"#
            return base64URL(Array(header.utf8)) + "." + base64URL(Array(payload.utf8)) + "."
        },
        Forgery(name: "HS256 keyed with the public key", code: "algorithmNotAllowed") {
            let header = try #"{"alg":"HS256","x5c":[\#(ca().x5c.map { "\"\($0)\"" }.joined(separator: ","))]}"#
            let input = base64URL(Array(header.utf8)) + "." + base64URL(Array(payload.utf8))
            let key = try SymmetricKeyShim.hmac(key: Array(ca().leafKey.publicKey.derRepresentation), data: Array(input.utf8))
            return input + "." + base64URL(key)
        },
        Forgery(name: "ES384 claimed", code: "algorithmNotAllowed") { try signer().sign(json: payload, alg: "ES384") },
        Forgery(name: "two certificates", code: "chainLength") { try signer().sign(json: payload, x5c: Array(ca().x5c.prefix(2))) },
        Forgery(name: "no x5c", code: "chainLength") {
            try signer().signRaw(header: #"{"alg":"ES256"}"#, payload: payload)
        },
        Forgery(name: "reordered chain", code: "missingAppleOID") {
            try signer().sign(json: payload, x5c: [ca().x5c[1], ca().x5c[0], ca().x5c[2]])
        },
        Forgery(name: "garbage base64 in x5c", code: "malformed") {
            try signer().sign(json: payload, x5c: ["@@not-base64@@", ca().x5c[1], ca().x5c[2]])
        },
        Forgery(name: "chain ending at a look-alike root", code: "chainInvalid") {
            let impostor = try TestCA(.init(seed: "impostor"))
            return JWSSigner(ca: impostor).sign(json: payload)
        },
        Forgery(name: "leaf without Apple's OID", code: "missingAppleOID") {
            JWSSigner(ca: try TestCA(.init(leafMarker: false))).sign(json: payload)
        },
        Forgery(name: "intermediate without Apple's OID", code: "missingAppleOID") {
            JWSSigner(ca: try TestCA(.init(intermediateMarker: false))).sign(json: payload)
        },
        Forgery(name: "leaf expired at signedDate", code: "certificateExpired") {
            JWSSigner(ca: try TestCA(.init(leafNotAfter: Timestamp.utc(year: 2024, month: 1, day: 1)))).sign(json: payload)
        },
        Forgery(name: "three dots", code: "malformed") { try signer().sign(json: payload) + ".x" },
        Forgery(name: "signedDate that is not a date", code: "notANumber") {
            try signer().sign(json: payload.replacingOccurrences(of: "\(signedDate)", with: #""soon""#))
        },
    ]

    @Test("forged or malformed signed data is rejected with a specific reason", arguments: forgeries)
    func rejected(_ forgery: Forgery) async throws {
        // The forgeries that change the CA still trust only the real test root.
        let record = try await Self.decode(try forgery.make())
        #expect(!record.isOK)
        #expect(record.error?.code == forgery.code, "\(record.error?.description ?? "accepted")")
        #expect(record.verification == .failed || ["malformed", "notANumber"].contains(forgery.code))
        #expect(record.transactions.isEmpty)
    }

    @Test("the verifier itself refuses a payload whose signedDate is not a date")
    func verifierMalformedPayload() async throws {
        let jws = try CompactJWS(Array(Self.signer().sign(json: #"{"transactionId":"1","signedDate":"soon"}"#).utf8))
        let result = try await Self.decoder().verifier.verify(jws, now: testNow)
        guard case .rejected(let error) = result else {
            Issue.record("expected a rejection, got \(result)")
            return
        }
        #expect(error.code == "malformed")
        #expect(error.message.contains("signedDate"))
    }

    @Test("bundle id and environment are checked when configured")
    func bundleAndEnvironment() async throws {
        let jws = try Self.signer().sign(json: Self.payload)
        #expect(try await Self.decode(jws, decoder: Self.decoder(bundleId: "com.example.app")).isOK)
        #expect(try await Self.decode(jws, decoder: Self.decoder(bundleId: "com.other")).error?.code == "wrongBundle")
        #expect(try await Self.decode(jws, decoder: Self.decoder(environment: .sandbox)).error?.code == "wrongEnvironment")
        #expect(try await Self.decode(jws, decoder: Self.decoder(environment: .production)).isOK)
    }

    @Test("without the test root configured, the same data does not chain")
    func untrusted() async throws {
        let record = try await Self.decode(Self.signer().sign(json: Self.payload), decoder: Self.decoder(roots: []))
        #expect(record.error?.code == "chainInvalid")
    }

    @Test("unknown future enum values are accepted and preserved")
    func futureEnums() async throws {
        let payload = Self.payload.replacingOccurrences(of: "Auto-Renewable Subscription", with: "Hyper Subscription")
            .replacingOccurrences(of: #""quantity":1"#, with: #""quantity":1,"offerType":7,"transactionReason":"GIFT","newField":{"a":[1,2]}"#)
        let record = try await Self.decode(Self.signer().sign(json: payload))
        let t = try #require(record.transactions.first)
        #expect(record.verification == .verified)
        #expect(t.type == .unknown("Hyper Subscription"))
        #expect(t.offerType == .unknown(7))
        #expect(t.transactionReason == .unknown("GIFT"))
        #expect(t.extra["newField"]?["a"] == .array([.number("1"), .number("2")]))
    }

    @Test("a run of transactions on one chain validates the chain once")
    func chainCache() async throws {
        let decoder = try Self.decoder()
        for i in 0..<50 {
            let payload = Self.payload.replacingOccurrences(of: "2000000101", with: "20000002\(i)")
            #expect(try await Self.decode(Self.signer().sign(json: payload), decoder: decoder).verification == .verified)
        }
        #expect(decoder.verifier.chainValidations == 1)
    }

    @Test("a cached chain is not reused for an instant outside its certificates' validity")
    func cacheWindow() async throws {
        let shortLived = try TestCA(.init(seed: "short", leafNotAfter: Timestamp.utc(year: 2025, month: 6, day: 1)))
        let signer = JWSSigner(ca: shortLived)
        let decoder = try Self.decoder(roots: [shortLived.rootDER])
        #expect(try await Self.decode(signer.sign(json: Self.payload), decoder: decoder).verification == .verified)
        let later = Self.payload.replacingOccurrences(of: "\(Self.signedDate)", with: "1767225600000")  // 2026-01-01
        #expect(try await Self.decode(signer.sign(json: later), decoder: decoder).error?.code == "certificateExpired")
        #expect(decoder.verifier.chainValidations == 2)
    }

    @Test("a V2 notification verifies its nested signed transaction and renewal info")
    func nestedNotification() async throws {
        let transaction = try Self.signer().sign(json: Self.payload)
        let renewal = try Self.signer().sign(
            json: #"{"originalTransactionId":"2000000100","autoRenewProductId":"pro.monthly","autoRenewStatus":0,"environment":"Production","signedDate":\#(Self.signedDate)}"#)
        let notification = #"{"notificationType":"DID_CHANGE_RENEWAL_STATUS","subtype":"AUTO_RENEW_DISABLED","notificationUUID":"u-1","version":"2.0","signedDate":\#(Self.signedDate),"data":{"bundleId":"com.example.app","environment":"Production","signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(renewal)","status":1}}"#
        let wrapped = try #"{"signedPayload":"\#(Self.signer().sign(json: notification))"}"#
        let record = try await Self.decode(wrapped)
        #expect(record.isOK)
        #expect(record.kind == .notificationV2)
        #expect(record.verification == .verified)
        #expect(record.notification?.subtype == .autoRenewDisabled)
        #expect(record.transactions.first?.verification == .verified)
        #expect(record.transactions.first?.sources.first?.location == "data.signedTransactionInfo")
        #expect(record.renewalInfos.first?.autoRenewStatus == .off)

        // A forged nested transaction inside a genuine notification is caught.
        let forgedInner = JWSSigner(ca: try TestCA(.init(seed: "impostor"))).sign(json: Self.payload)
        let bad = notification.replacingOccurrences(of: transaction, with: forgedInner)
        let rejected = try await Self.decode(#"{"signedPayload":"\#(Self.signer().sign(json: bad))"}"#)
        #expect(rejected.error?.code == "chainInvalid")
        #expect(rejected.kind == .notificationV2)
    }

    @Test("--no-verify decodes and marks the record skipped")
    func skipped() async throws {
        let record = try await makeDecoder(verify: false).decode(
            Array(JWSSigner(ca: try TestCA(.init(seed: "anything"))).sign(json: Self.payload).utf8),
            provenance: Provenance(path: "t", index: 0))
        #expect(record.isOK)
        #expect(record.verification == .skipped)
        #expect(record.transactions.first?.verification == .skipped)
    }
}

/// HMAC-SHA256, to forge an HS256 token keyed with the public key (the classic algorithm-confusion attack).
enum SymmetricKeyShim {
    static func hmac(key: [UInt8], data: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }
}
