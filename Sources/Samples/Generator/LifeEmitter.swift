import Crypto
import Foundation
import ReceiptModel

/// Signs JWS payloads with the sample chain, deterministically.
///
/// `@unchecked Sendable`: the one non-Sendable member, the header's SHA-256 state, is never mutated; each
/// signature works on its own copy (swift-crypto's hash functions are copy-on-write values).
struct SampleJWS: @unchecked Sendable {
    let signer = DeterministicES256(privateKey: SampleCA.leafKey)
    /// `base64url(header).`: the header (with the whole x5c chain) is the same for every JWS, so it is encoded once.
    let headerDot: [UInt8]
    /// SHA-256 of the header's whole 64-byte blocks, resumed for each JWS: the header is most of a small JWS.
    private let headerHash: SHA256
    private let hashedCount: Int

    init() {
        var bytes = Array(base64URL(Array(#"{"alg":"ES256","x5c":["\#(SampleCA.x5c.joined(separator: "\",\""))"]}"#.utf8)).utf8)
        bytes.append(UInt8(ascii: "."))
        headerDot = bytes
        hashedCount = bytes.count / 64 * 64
        var hash = SHA256()
        hash.update(data: bytes[..<hashedCount])
        headerHash = hash
    }

    func sign(_ payload: String) -> String {
        var payload = payload
        return payload.withUTF8 { payload in
            var out: [UInt8] = []
            out.reserveCapacity(headerDot.count + base64URLCount(payload.count) + 88)
            out.append(contentsOf: headerDot)
            appendBase64URL(payload, toArray: &out)
            var hash = headerHash
            out.withUnsafeBytes { hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[hashedCount...])) }
            let signature = signer.sign(digest: Array(hash.finalize()))
            out.append(UInt8(ascii: "."))
            signature.withUnsafeBufferPointer { appendBase64URL($0, toArray: &out) }
            return String(decoding: out, as: UTF8.self)
        }
    }
}

/// A JSON object written member by member.
struct JSONText {
    private(set) var text = "{"
    private var first = true

    private mutating func key(_ name: String) {
        if !first { text += "," }
        first = false
        text += "\"" + name + "\":"
    }

    /// A string member; the generator's strings need no escaping beyond quotes and backslashes.
    mutating func string(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        if Self.needsEscaping(value) {
            text += "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        } else {
            text += "\"" + value + "\""
        }
    }

    /// Whether `value` holds a quote or a backslash (memchr, vectorised: the values include whole JWS).
    private static func needsEscaping(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, Int32(UInt8(ascii: "\"")), bytes.count) != nil
                || memchr(base, Int32(UInt8(ascii: "\\")), bytes.count) != nil
        }
    }

    mutating func int(_ name: String, _ value: Int64?) {
        guard let value else { return }
        key(name)
        text += String(value)
    }

    mutating func bool(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        text += value ? "true" : "false"
    }

    /// A member whose value is already JSON.
    mutating func raw(_ name: String, _ json: String) {
        key(name)
        text += json
    }

    var closed: String { text + "}" }
}

/// Writes one life in its format: the records for the data files.
struct LifeEmitter {
    let life: CustomerLife
    let jws: SampleJWS
    let to: Int64

    private var appTransactionId: String { "70" + String(life.index).leftPadded(10) }
    private var legacyEnvironment: String { life.environment }

    // MARK: Modern (JWS) shapes

    func transactionPayload(_ t: LifeTransaction, at: Int64) -> String {
        var j = JSONText()
        j.string("transactionId", t.id)
        j.string("originalTransactionId", t.original)
        j.string("webOrderLineItemId", t.webOrder)
        j.string("bundleId", SampleCatalog.bundleId)
        j.string("productId", t.product.id)
        j.string("subscriptionGroupIdentifier", t.product.group)
        j.int("purchaseDate", t.purchase)
        j.int("originalPurchaseDate", t.originalPurchase)
        j.int("expiresDate", t.expires)
        j.int("quantity", 1)
        j.string("type", t.product.typeName)
        j.string("appAccountToken", life.token)
        j.string("inAppOwnershipType", t.familyShared ? "FAMILY_SHARED" : "PURCHASED")
        j.int("signedDate", at)
        if t.revokedVisible(at: at) {
            j.int("revocationReason", t.revocationReason.map(Int64.init))
            j.int("revocationDate", t.revokedAt)
            j.string("revocationType", t.revocationType)
            j.int("revocationPercentage", t.revocationPercentage)
        }
        if t.upgradedVisible(at: at) { j.bool("isUpgraded", true) }
        j.int("offerType", t.offerType.map(Int64.init))
        j.string("offerIdentifier", t.offerId)
        j.string("offerDiscountType", t.offerDiscount)
        j.string("offerPeriod", t.offerPeriod)
        j.string("environment", life.environment)
        j.string("transactionReason", t.reason)
        j.string("storefront", life.storefront.code)
        j.string("storefrontId", life.storefront.id)
        j.int("price", t.price)
        j.string("currency", life.storefront.currency)
        j.string("appTransactionId", appTransactionId)
        return j.closed
    }

    func renewalPayload(_ r: RenewalState, at: Int64) -> String {
        var j = JSONText()
        j.int("expirationIntent", r.intent.map(Int64.init))
        j.string("originalTransactionId", r.original)
        j.string("autoRenewProductId", r.autoRenewProduct)
        j.string("productId", r.product)
        j.int("autoRenewStatus", r.autoRenew ? 1 : 0)
        j.bool("isInBillingRetryPeriod", r.retry)
        j.int("gracePeriodExpiresDate", r.grace)
        j.int("signedDate", at)
        j.string("environment", life.environment)
        j.int("recentSubscriptionStartDate", r.recentStart)
        j.int("renewalDate", r.renewalDate)
        j.string("currency", life.storefront.currency)
        j.int("renewalPrice", r.renewalPrice)
        j.string("appAccountToken", life.token)
        j.string("appTransactionId", appTransactionId)
        return j.closed
    }

    /// Apple's subscription status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    private func status(_ t: LifeTransaction, _ r: RenewalState?, at: Int64) -> Int64 {
        if t.revokedVisible(at: at) { return 5 }
        if let r, r.retry { return r.grace.map { $0 > at } == true ? 4 : 3 }
        return (t.expires ?? Int64.max) > at ? 1 : 2
    }

    /// The latest renewal state of a subscription as of `at`.
    private func renewal(of original: String, at: Int64) -> RenewalState? {
        life.events.last { $0.at <= at && $0.renewal?.original == original }?.renewal
    }

    /// One `{"signedPayload": ...}` line per event.
    func notificationsV2(into out: inout [UInt8]) {
        for e in life.events {
            let t = life.transactions[e.transaction]
            var data = JSONText()
            data.int("appAppleId", SampleCatalog.appAppleId)
            data.string("bundleId", SampleCatalog.bundleId)
            data.string("bundleVersion", "142")
            data.string("environment", life.environment)
            data.string("signedTransactionInfo", jws.sign(transactionPayload(t, at: e.at)))
            if t.product.kind == .subscription, let r = e.renewal ?? renewal(of: t.original, at: e.at) {
                data.string("signedRenewalInfo", jws.sign(renewalPayload(r, at: e.at)))
                data.int("status", status(t, r, at: e.at))
            }
            var n = JSONText()
            n.string("notificationType", e.type)
            n.string("subtype", e.subtype)
            n.string("notificationUUID", e.uuid)
            n.raw("data", data.closed)
            n.string("version", "2.0")
            n.int("signedDate", e.at)
            line(#"{"signedPayload":"\#(jws.sign(n.closed))"}"#, into: &out)
        }
    }

    /// Subscription statuses whenever renewal state changed, then the whole transaction history at the end.
    func serverAPI(into out: inout [UInt8]) {
        for e in life.events where e.renewalChanged {
            let t = life.transactions[e.transaction]
            guard let r = e.renewal, let group = t.product.group else { continue }
            var last = JSONText()
            last.string("originalTransactionId", t.original)
            last.int("status", status(t, r, at: e.at))
            last.string("signedTransactionInfo", jws.sign(transactionPayload(t, at: e.at)))
            last.string("signedRenewalInfo", jws.sign(renewalPayload(r, at: e.at)))
            var g = JSONText()
            g.string("subscriptionGroupIdentifier", group)
            g.raw("lastTransactions", "[" + last.closed + "]")
            var response = JSONText()
            response.string("environment", life.environment)
            response.string("bundleId", SampleCatalog.bundleId)
            response.int("appAppleId", SampleCatalog.appAppleId)
            response.raw("data", "[" + g.closed + "]")
            line(response.closed, into: &out)
        }
        guard !life.transactions.isEmpty else { return }
        let signed = life.transactions.sorted { $0.purchase < $1.purchase }.map { "\"" + jws.sign(transactionPayload($0, at: to)) + "\"" }
        var history = JSONText()
        history.string("revision", "r\(life.index)-\(life.transactions.count)")
        history.string("bundleId", SampleCatalog.bundleId)
        history.int("appAppleId", SampleCatalog.appAppleId)
        history.string("environment", life.environment)
        history.bool("hasMore", false)
        history.raw("signedTransactions", "[" + signed.joined(separator: ",") + "]")
        line(history.closed, into: &out)
    }

    // MARK: Legacy shapes

    /// `2025-03-01 07:00:00 Etc/GMT`.
    static func legacyDate(_ ms: Int64) -> String {
        var bytes = Array(Timestamp(millisecondsSince1970: ms).iso8601.utf8.prefix(19))
        for i in bytes.indices where bytes[i] == UInt8(ascii: "T") { bytes[i] = UInt8(ascii: " ") }
        return String(decoding: bytes, as: UTF8.self) + " Etc/GMT"
    }

    func legacyTransaction(_ t: LifeTransaction, at: Int64, inLatest: Bool) -> String {
        var j = JSONText()
        j.string("quantity", "1")
        j.string("product_id", t.product.id)
        j.string("transaction_id", t.id)
        j.string("original_transaction_id", t.original)
        j.string("purchase_date", Self.legacyDate(t.purchase))
        j.string("purchase_date_ms", String(t.purchase))
        j.string("original_purchase_date_ms", String(t.originalPurchase))
        if let expires = t.expires {
            j.string("expires_date", Self.legacyDate(expires))
            j.string("expires_date_ms", String(expires))
        }
        j.string("web_order_line_item_id", t.webOrder)
        if t.product.kind == .subscription {
            j.string("is_trial_period", t.offerDiscount == "FREE_TRIAL" ? "true" : "false")
            j.string("is_in_intro_offer_period", t.offerType == 1 && t.offerDiscount != "FREE_TRIAL" ? "true" : "false")
        }
        if t.offerType == 2 { j.string("promotional_offer_id", t.offerId) }
        if t.offerType == 3 { j.string("offer_code_ref_name", t.offerId) }
        j.string("in_app_ownership_type", t.familyShared ? "FAMILY_SHARED" : "PURCHASED")
        if inLatest { j.string("subscription_group_identifier", t.product.group) }
        if t.upgradedVisible(at: at) { j.string("is_upgraded", "true") }
        if t.revokedVisible(at: at), let revoked = t.revokedAt {
            j.string("cancellation_date_ms", String(revoked))
            j.string("cancellation_reason", String(t.revocationReason ?? 0))
        }
        j.string("app_account_token", life.token)
        return j.closed
    }

    func legacyRenewal(_ r: RenewalState) -> String {
        var j = JSONText()
        j.string("auto_renew_product_id", r.autoRenewProduct)
        j.string("product_id", r.product)
        j.string("original_transaction_id", r.original)
        j.string("auto_renew_status", r.autoRenew ? "1" : "0")
        j.string("expiration_intent", r.intent.map(String.init))
        j.string("is_in_billing_retry_period", r.retry ? "1" : "0")
        j.string("grace_period_expires_date_ms", r.grace.map(String.init))
        return j.closed
    }

    /// A verifyReceipt response as Apple would have answered it at `at`.
    func verifyReceipt(at: Int64, oneTimeOnly: Bool = false) -> String {
        let known = life.transactions.filter { $0.purchase <= at && (!oneTimeOnly || $0.product.kind != .subscription) }
        let subscriptions = known.filter { $0.product.kind == .subscription }
        // in_app lags: the newest period of each subscription is only in latest_receipt_info.
        var newest = Set<String>()
        var byOriginal: [String: LifeTransaction] = [:]
        for t in subscriptions where (byOriginal[t.original]?.purchase ?? Int64.min) < t.purchase { byOriginal[t.original] = t }
        for t in byOriginal.values { newest.insert(t.id) }
        let inApp = known.filter { !newest.contains($0.id) }.map { legacyTransaction($0, at: at, inLatest: false) }
        var receipt = JSONText()
        receipt.string("receipt_type", life.environment == "Production" ? "Production" : "ProductionSandbox")
        receipt.int("adam_id", SampleCatalog.appAppleId)
        receipt.int("app_item_id", SampleCatalog.appAppleId)
        receipt.string("bundle_id", SampleCatalog.bundleId)
        receipt.string("application_version", "142")
        receipt.int("download_id", 80_000_000_000 + Int64(life.index))
        receipt.int("version_external_identifier", 850_000_000)
        receipt.string("receipt_creation_date_ms", String(at))
        receipt.string("request_date", Self.legacyDate(at))
        receipt.string("request_date_ms", String(at))
        receipt.string("original_purchase_date_ms", String(known.first?.purchase ?? at))
        receipt.string("original_application_version", "1.0")
        receipt.raw("in_app", "[" + inApp.joined(separator: ",") + "]")
        var response = JSONText()
        response.int("status", 0)
        response.string("environment", legacyEnvironment)
        response.raw("receipt", receipt.closed)
        if !subscriptions.isEmpty {
            let latest = subscriptions.sorted { $0.purchase > $1.purchase }.map { legacyTransaction($0, at: at, inLatest: true) }
            response.raw("latest_receipt_info", "[" + latest.joined(separator: ",") + "]")
            let renewals = byOriginal.keys.sorted().compactMap { renewal(of: $0, at: at) }.map(legacyRenewal)
            response.raw("pending_renewal_info", "[" + renewals.joined(separator: ",") + "]")
        }
        response.string("latest_receipt", "(omitted by the sample generator)")
        return response.closed
    }

    /// verifyReceipt responses whenever renewal state changed, and one at the end.
    func verifyReceipts(into out: inout [UInt8]) {
        for e in life.events where e.renewalChanged { line(verifyReceipt(at: e.at), into: &out) }
        if !life.transactions.isEmpty { line(verifyReceipt(at: to), into: &out) }
    }

    /// V1 notifications for subscription events; one-time purchases reach the ledger by verifyReceipt.
    func notificationsV1(into out: inout [UInt8], receipts: inout [UInt8]) {
        for e in life.events {
            let t = life.transactions[e.transaction]
            guard t.product.kind == .subscription else { continue }
            let type: String
            switch (e.type, e.subtype) {
            case ("SUBSCRIBED", "RESUBSCRIBE"), ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"): type = "INTERACTIVE_RENEWAL"
            case ("SUBSCRIBED", _): type = "INITIAL_BUY"
            case ("DID_RENEW", "BILLING_RECOVERY"): type = "DID_RECOVER"
            case ("DID_RENEW", _): type = "DID_RENEW"
            case ("EXPIRED", "BILLING_RETRY"): type = "DID_CHANGE_RENEWAL_STATUS"
            case ("EXPIRED", _), ("CONSUMPTION_REQUEST", _), ("REFUND_REVERSED", _), ("REFUND_DECLINED", _), ("REVOKE", _): continue
            default: type = e.type
            }
            guard let r = e.renewal ?? renewal(of: t.original, at: e.at) else { continue }
            let chain = life.transactions.filter { $0.original == t.original && $0.purchase <= e.at }
                .sorted { $0.purchase > $1.purchase }.prefix(6)
            var unified = JSONText()
            unified.int("status", 0)
            unified.string("environment", legacyEnvironment)
            unified.string("latest_receipt", "(omitted by the sample generator)")
            unified.raw("latest_receipt_info", "[" + chain.map { legacyTransaction($0, at: e.at, inLatest: true) }.joined(separator: ",") + "]")
            unified.raw("pending_renewal_info", "[" + legacyRenewal(r) + "]")
            var n = JSONText()
            n.string("notification_type", type)
            n.string("environment", life.environment == "Production" ? "PROD" : "Sandbox")
            n.string("auto_renew_status", r.autoRenew ? "true" : "false")
            n.string("auto_renew_product_id", r.autoRenewProduct)
            n.string("auto_renew_status_change_date", Self.legacyDate(e.at))
            n.string("auto_renew_status_change_date_ms", String(e.at))
            n.string("original_transaction_id", t.original)
            n.string("bid", SampleCatalog.bundleId)
            n.string("bvrs", "142")
            n.raw("unified_receipt", unified.closed)
            line(n.closed, into: &out)
        }
        if life.transactions.contains(where: { $0.product.kind != .subscription }) {
            line(verifyReceipt(at: to, oneTimeOnly: true), into: &receipts)
        }
    }

    private func line(_ text: String, into out: inout [UInt8]) {
        out.append(contentsOf: text.utf8)
        out.append(0x0A)
    }
}
