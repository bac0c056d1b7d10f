import Entitlements
import ReceiptDecoding
import ReceiptModel
import Samples
import X509

/// Builds small customer histories the way they arrive: legacy verifyReceipt JSON, and V2 notifications
/// signed by the Samples CA, decoded by the real decoder.
struct HistoryBuilder {
    /// The test CA, made once. Should making it fail, every test that signs fails with the error; the run goes on.
    private static let madeCA = Result { try TestCA() }
    static func ca() throws -> TestCA { try madeCA.get() }
    static let day: Int64 = 86_400_000
    static let hour: Int64 = 3_600_000
    /// 2025-01-01T00:00:00Z.
    static let t0 = Timestamp.utc(year: 2025, month: 1, day: 1).millisecondsSince1970

    var entries: [String] = []
    var renewals: [(String, Timestamp)] = []
    var notifications: [String] = []

    static func at(_ days: Double) -> Timestamp { Timestamp(millisecondsSince1970: t0 + Int64(days * Double(day))) }

    /// A legacy `latest_receipt_info` entry; times in days after 2025-01-01.
    mutating func period(
        _ id: String, product: String = "pro.monthly", from: Double, to: Double?, original: String = "100",
        trial: Bool = false, upgraded: Bool = false, cancelled: Double? = nil, reason: Int? = nil,
        ownership: String = "PURCHASED", price: Int? = nil, webOrder: String? = nil, group: String = "G1"
    ) {
        var fields = [
            #""transaction_id":"\#(id)""#, #""original_transaction_id":"\#(original)""#, #""product_id":"\#(product)""#,
            #""purchase_date_ms":"\#(Self.at(from).millisecondsSince1970)""#, #""quantity":"1""#,
            #""is_trial_period":"\#(trial)""#, #""in_app_ownership_type":"\#(ownership)""#,
            #""web_order_line_item_id":"\#(webOrder ?? "w" + id)""#,
        ]
        if let to { fields.append(#""expires_date_ms":"\#(Self.at(to).millisecondsSince1970)""#); fields.append(#""subscription_group_identifier":"\#(group)""#) }
        if upgraded { fields.append(#""is_upgraded":"true""#) }
        if let cancelled { fields.append(#""cancellation_date_ms":"\#(Self.at(cancelled).millisecondsSince1970)""#) }
        if let reason { fields.append(#""cancellation_reason":"\#(reason)""#) }
        if let price { fields.append(#""price":\#(price)"#) }
        entries.append("{" + fields.joined(separator: ",") + "}")
    }

    /// A `pending_renewal_info` entry as seen at a time; `renewsTo` is the product the next period will be
    /// (a pending downgrade or crossgrade), by default `product`.
    mutating func renewal(seen: Double, autoRenew: Bool, original: String = "100", retry: Bool = false, grace: Double? = nil, intent: Int? = nil, product: String = "pro.monthly", renewsTo: String? = nil) {
        var fields = [
            #""original_transaction_id":"\#(original)""#, #""auto_renew_status":"\#(autoRenew ? 1 : 0)""#,
            #""auto_renew_product_id":"\#(renewsTo ?? product)""#, #""product_id":"\#(product)""#,
            #""is_in_billing_retry_period":"\#(retry ? 1 : 0)""#,
        ]
        if let grace { fields.append(#""grace_period_expires_date_ms":"\#(Self.at(grace).millisecondsSince1970)""#) }
        if let intent { fields.append(#""expiration_intent":"\#(intent)""#) }
        renewals.append(("{" + fields.joined(separator: ",") + "}", Self.at(seen)))
    }

    /// The renewal info a V2 notification carries (`signedRenewalInfo`), signed as of the notification.
    struct SignedRenewal {
        var autoRenew = true
        var retry = false
        /// The end of the grace period, in days after 2025-01-01.
        var grace: Double?
        /// The product the next period will be, by default the notification's.
        var renewsTo: String?
    }

    /// A V2 notification signed by the test CA, with a signed transaction when `transactionId` is given and a
    /// signed renewal info when `renewal` is.
    mutating func notificationV2(_ type: String, subtype: String? = nil, at: Double, transactionId: String? = nil, original: String = "100", product: String = "pro.monthly", revocationType: String? = nil, renewal: SignedRenewal? = nil) throws {
        let signer = JWSSigner(ca: try Self.ca())
        var data = #""bundleId":"com.example","environment":"Production""#
        if let transactionId {
            var payload = #"{"transactionId":"\#(transactionId)","originalTransactionId":"\#(original)","productId":"\#(product)","signedDate":\#(Self.at(at).millisecondsSince1970),"environment":"Production","bundleId":"com.example""#
            if let revocationType { payload += #","revocationType":"\#(revocationType)","revocationDate":\#(Self.at(at).millisecondsSince1970),"inAppOwnershipType":"FAMILY_SHARED""# }
            payload += "}"
            data += #","signedTransactionInfo":"\#(signer.sign(json: payload))""#
        }
        if let renewal {
            var payload = #"{"originalTransactionId":"\#(original)","productId":"\#(product)","autoRenewProductId":"\#(renewal.renewsTo ?? product)","autoRenewStatus":\#(renewal.autoRenew ? 1 : 0),"isInBillingRetryPeriod":\#(renewal.retry),"signedDate":\#(Self.at(at).millisecondsSince1970),"environment":"Production""#
            if let grace = renewal.grace { payload += #","gracePeriodExpiresDate":\#(Self.at(grace).millisecondsSince1970)"# }
            payload += "}"
            data += #","signedRenewalInfo":"\#(signer.sign(json: payload))""#
        }
        let subtypeField = subtype.map { #""subtype":"\#($0)","# } ?? ""
        let body = #"{"notificationType":"\#(type)",\#(subtypeField)"notificationUUID":"\#(type)-\#(at)","version":"2.0","signedDate":\#(Self.at(at).millisecondsSince1970),"data":{\#(data)}}"#
        notifications.append(#"{"signedPayload":"\#(signer.sign(json: body))"}"#)
    }

    /// A V1 notification with the given type at a time.
    mutating func notificationV1(_ type: String, at: Double, original: String = "100", autoRenew: Bool? = nil) {
        var fields = [#""notification_type":"\#(type)""#, #""original_transaction_id":"\#(original)""#, #""environment":"PROD""#]
        if let autoRenew {
            fields.append(#""auto_renew_status":"\#(autoRenew)""#)
            fields.append(#""auto_renew_status_change_date_ms":"\#(Self.at(at).millisecondsSince1970)""#)
        }
        notifications.append("{" + fields.joined(separator: ",") + "}")
    }

    /// Decodes everything and assembles the history, as the ledger would.
    /// - Throws: ``Failure`` naming the part of the history that did not decode (a mistake in the test).
    func history() async throws -> CustomerHistory {
        let roots = try [AppleRoots.rootCAG3DER, Self.ca().rootDER].map { try Certificate(derEncoded: $0) }
        let decoder = RecordDecoder(verifier: JWSVerifier(policy: VerificationPolicy(trustRoots: roots)), now: Self.at(0))
        var transactions: [Transaction] = []
        var firstSeen: [String: Timestamp] = [:]
        if !entries.isEmpty {
            let receipt = #"{"status":0,"environment":"Production","latest_receipt_info":[\#(entries.joined(separator: ","))]}"#
            let record = await decoder.decode(Array(receipt.utf8), provenance: Provenance(path: "history", index: 0))
            if let error = record.error { throw Failure(description: "the history's receipt did not decode: \(error)") }
            transactions = record.transactions
            for t in transactions { firstSeen[t.transactionId] = t.purchaseDate }
        }
        var seenRenewals: [CustomerHistory.SeenRenewal] = []
        for (json, seen) in renewals {
            let record = await decoder.decode(Array(#"{"status":0,"pending_renewal_info":[\#(json)]}"#.utf8), provenance: Provenance(path: "renewal", index: 0))
            if let error = record.error { throw Failure(description: "a renewal info did not decode: \(error)") }
            guard let info = record.renewalInfos.first else { throw Failure(description: "a renewal record held no renewal info") }
            seenRenewals.append(.init(info: info, seenAt: seen))
        }
        var seenNotifications: [CustomerHistory.SeenNotification] = []
        for json in notifications {
            let record = await decoder.decode(Array(json.utf8), provenance: Provenance(path: "notification", index: 0))
            if let error = record.error { throw Failure(description: "a notification did not decode: \(error)") }
            guard let n = record.notification else { throw Failure(description: "a notification record held no notification") }
            // As the ledger keeps them: a renewal info is seen when it was signed, else when its notification was.
            for info in record.renewalInfos {
                seenRenewals.append(.init(info: info, seenAt: info.signedDate ?? n.signedDate ?? Self.at(0)))
            }
            for t in record.transactions {
                if let index = transactions.firstIndex(where: { $0.transactionId == t.transactionId }) {
                    transactions[index].merge(t)
                } else {
                    transactions.append(t)
                }
            }
            seenNotifications.append(.init(notification: n, seenAt: n.signedDate ?? Self.at(0), transactionId: record.transactions.first?.transactionId ?? n.originalTransactionId))
        }
        return CustomerHistory(transactions: transactions, firstSeen: firstSeen, renewals: seenRenewals, notifications: seenNotifications)
    }

    /// A history the test described that does not decode: the test is wrong, and says how.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }
}
