import Crypto
import ReceiptModel

/// Batches of signed transactions for measurements and tests: realistic payloads, one chain or several.
public enum SignedBatch {
    /// A JWS transaction payload like the App Store's, for a numbered transaction.
    public static func transactionPayload(_ n: Int, signedDate: Int64 = 1_740_816_000_000) -> String {
        let purchase = 1_740_816_000_000 + Int64(n) * 60_000
        return #"{"transactionId":"\#(2_000_000_000 + n)","originalTransactionId":"\#(2_000_000_000 + n / 12 * 12)","webOrderLineItemId":"\#(3_000_000_000 + n)","bundleId":"com.example.receiptdesk","productId":"pro.monthly","subscriptionGroupIdentifier":"21000001","purchaseDate":\#(purchase),"originalPurchaseDate":\#(purchase),"expiresDate":\#(purchase + 2_592_000_000),"quantity":1,"type":"Auto-Renewable Subscription","inAppOwnershipType":"PURCHASED","signedDate":\#(signedDate),"environment":"Production","transactionReason":"RENEWAL","storefront":"USA","storefrontId":"143441","price":9990,"currency":"USD","appTransactionId":"704\#(n)"}"#
    }

    /// `count` signed transactions spread over `chains` signing chains.
    public static func transactions(count: Int, chains: Int = 1, seed: String = "receiptdesk-bench") throws -> (jws: [String], roots: [[UInt8]]) {
        let cas = try (0..<max(1, chains)).map { try TestCA(.init(seed: "\(seed)-\($0)")) }
        let signers = cas.map(JWSSigner.init(ca:))
        let jws = (0..<count).map { signers[$0 % signers.count].sign(json: transactionPayload($0)) }
        return (jws, cas.map(\.rootDER))
    }

    /// Raw P-256 ECDSA verifications per second over `count` runs of a message of `messageBytes` bytes
    /// (a JWS's signing input, header and payload, is about 4 KB): the floor a cached chain reduces a JWS to.
    public static func rawP256VerificationsPerSecond(count: Int, messageBytes: Int) -> Double {
        let key = P256.Signing.PrivateKey()
        let message = Array(repeating: UInt8(0x61), count: messageBytes)
        let signature = try! key.signature(for: message)
        // The public key once, outside the loop: deriving it is a point multiplication, not part of a verify.
        let publicKey = key.publicKey
        let clock = ContinuousClock()
        var valid = 0
        let elapsed = clock.measure {
            for _ in 0..<count where publicKey.isValidSignature(signature, for: message) { valid += 1 }
        }
        precondition(valid == count)
        return Double(count) / seconds(elapsed)
    }
}

/// A duration in seconds.
public func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
