import ReceiptModel

/// Mapping from Apple's JSON shapes to the canonical ``Transaction`` and ``RenewalInfo``.
enum TransactionMapping {
    /// Legacy keys that are mapped and also kept as they came.
    static let legacyFlagKeys: KeySet = [
        "is_trial_period", "is_in_intro_offer_period", "promotional_offer_id", "offer_code_ref_name",
        "cancellation_reason", "is_upgraded", "purchase_date", "purchase_date_pst", "original_purchase_date",
        "original_purchase_date_pst", "expires_date", "expires_date_pst", "expires_date_formatted",
        "expires_date_formatted_pst", "cancellation_date", "cancellation_date_pst",
    ]

    /// Legacy keys that are mapped onto canonical fields (and not kept a second time).
    static let legacyMappedKeys: KeySet = [
        "transaction_id", "original_transaction_id", "web_order_line_item_id", "product_id", "quantity",
        "purchase_date_ms", "original_purchase_date_ms", "expires_date_ms", "cancellation_date_ms",
        "subscription_group_identifier", "in_app_ownership_type", "app_account_token", "bid",
        "offer_discount_type",
    ]

    static let legacyKnownKeys = legacyFlagKeys.union(legacyMappedKeys)

    /// Maps one legacy transaction object (`in_app`, `latest_receipt_info`, V1, iOS 6 `receipt`).
    static func legacyTransaction(
        _ fields: Fields, environment: Environment?, bundleId: String?
    ) throws(RecordError) -> Transaction {
        var t = Transaction(transactionId: try fields.requiredId("transaction_id"))
        t.originalTransactionId = try fields.string("original_transaction_id")
        t.webOrderLineItemId = try fields.string("web_order_line_item_id")
        t.productId = try fields.string("product_id")
        t.bundleId = try fields.string("bid") ?? bundleId
        t.subscriptionGroupIdentifier = try fields.string("subscription_group_identifier")
        t.purchaseDate = try fields.legacyDate(.purchaseDate)
        t.originalPurchaseDate = try fields.legacyDate(.originalPurchaseDate)
        t.expiresDate = try fields.legacyDate(.expiresDate)
        t.revocationDate = try fields.legacyDate(.cancellationDate)
        if let reason = try fields.int("cancellation_reason") { t.revocationReason = RevocationReason(rawValue: reason) }
        t.quantity = try quantity(fields)
        t.isUpgraded = try fields.bool("is_upgraded")
        t.appAccountToken = try fields.string("app_account_token")
        if let ownership = try fields.string("in_app_ownership_type") {
            t.inAppOwnershipType = InAppOwnershipType(rawValue: ownership)
        }
        if let discount = try fields.string("offer_discount_type") {
            t.offerDiscountType = OfferDiscountType(rawValue: discount)
        }
        if try fields.bool("is_trial_period") == true {
            t.offerType = .introductory
            t.offerDiscountType = .freeTrial
        } else if try fields.bool("is_in_intro_offer_period") == true {
            t.offerType = .introductory
        }
        if let promotional = try fields.string("promotional_offer_id") {
            t.offerType = .promotional
            t.offerIdentifier = promotional
        } else if let code = try fields.string("offer_code_ref_name") {
            t.offerType = .offerCode
            t.offerIdentifier = code
        }
        if t.expiresDate != nil { t.type = .autoRenewableSubscription }
        t.environment = environment
        t.legacy = fields.members(in: legacyFlagKeys)
        t.extra = fields.unknownMembers(legacyKnownKeys)
        return t
    }

    static func quantity(_ fields: Fields) throws(RecordError) -> Int? {
        guard let quantity = try fields.int("quantity") else { return nil }
        if quantity < 0 { throw fields.error("negativeQuantity", "quantity \(quantity) is negative") }
        return quantity
    }

    static let jwsTransactionKeys = KeySet(Transaction.fieldNames)

    /// Maps a `JWSTransactionDecodedPayload` object.
    static func jwsTransaction(_ fields: Fields) throws(RecordError) -> Transaction {
        var t = Transaction(transactionId: try fields.requiredId("transactionId"))
        for field in Transaction.fields where field.merge != .identity {
            let value: FieldValue?
            switch (field.name, field.kind) {
            case ("quantity", _): value = try quantity(fields).map { .integer(Int64($0)) }
            case (_, .text): value = try fields.string(field.name).map(FieldValue.text)
            case (_, .integer), (_, .milliunits): value = try fields.int64(field.name).map(FieldValue.integer)
            case (_, .date): value = try fields.timestamp(field.name).map(FieldValue.date)
            case (_, .flag): value = try fields.bool(field.name).map(FieldValue.flag)
            case (_, .json): value = fields[field.name].map(FieldValue.json)
            }
            field.assign(&t, value)
        }
        if t.type == nil && t.expiresDate != nil { t.type = .autoRenewableSubscription }
        t.extra = fields.unknownMembers(jwsTransactionKeys)
        return t
    }

    static let legacyRenewalKnownKeys: KeySet = [
        "auto_renew_product_id", "product_id", "original_transaction_id", "auto_renew_status", "expiration_intent",
        "is_in_billing_retry_period", "grace_period_expires_date_ms", "price_increase_status",
        "price_consent_status", "offer_code_ref_name", "promotional_offer_id", "grace_period_expires_date",
        "grace_period_expires_date_pst", "app_account_token",
    ]
    static let legacyRenewalKeptKeys: KeySet = [
        "price_consent_status", "offer_code_ref_name", "promotional_offer_id", "grace_period_expires_date",
        "grace_period_expires_date_pst",
    ]

    /// Maps one `pending_renewal_info` entry.
    static func legacyRenewal(_ fields: Fields, environment: Environment?) throws(RecordError) -> RenewalInfo {
        var r = RenewalInfo()
        r.originalTransactionId = try fields.string("original_transaction_id")
        r.autoRenewProductId = try fields.string("auto_renew_product_id")
        r.productId = try fields.string("product_id")
        if let status = try autoRenewStatus(fields, "auto_renew_status") { r.autoRenewStatus = status }
        if let intent = try fields.int("expiration_intent") { r.expirationIntent = ExpirationIntent(rawValue: intent) }
        r.isInBillingRetryPeriod = try fields.bool("is_in_billing_retry_period")
        r.gracePeriodExpiresDate = try fields.legacyDate(.gracePeriodExpiresDate)
        var priceStatus = try fields.int("price_increase_status")
        if priceStatus == nil { priceStatus = try fields.int("price_consent_status") }
        if let status = priceStatus {
            r.priceIncreaseStatus = PriceIncreaseStatus(rawValue: status)
        }
        if let promotional = try fields.string("promotional_offer_id") {
            r.offerType = .promotional
            r.offerIdentifier = promotional
        } else if let code = try fields.string("offer_code_ref_name") {
            r.offerType = .offerCode
            r.offerIdentifier = code
        }
        r.appAccountToken = try fields.string("app_account_token")
        r.environment = environment
        r.legacy = fields.members(in: legacyRenewalKeptKeys)
        r.extra = fields.unknownMembers(legacyRenewalKnownKeys)
        return r
    }

    /// `auto_renew_status` as `"1"`, `"true"`, `1` or `true`.
    static func autoRenewStatus(_ fields: Fields, _ key: String) throws(RecordError) -> AutoRenewStatus? {
        guard let value = fields[key] else { return nil }
        if case .number(let literal) = value, let number = Int(literal) { return AutoRenewStatus(rawValue: number) }
        return try fields.bool(key).map { $0 ? .on : .off }
    }

    static let jwsRenewalKeys: KeySet = [
        "expirationIntent", "originalTransactionId", "autoRenewProductId", "productId", "autoRenewStatus",
        "isInBillingRetryPeriod", "priceIncreaseStatus", "gracePeriodExpiresDate", "offerType", "offerIdentifier",
        "signedDate", "environment", "recentSubscriptionStartDate", "renewalDate", "currency", "renewalPrice",
        "offerDiscountType", "eligibleWinBackOfferIds", "appAccountToken", "appTransactionId", "offerPeriod",
        "advancedCommerceInfo",
    ]

    /// Maps a `JWSRenewalInfoDecodedPayload` object.
    static func jwsRenewal(_ fields: Fields) throws(RecordError) -> RenewalInfo {
        var r = RenewalInfo()
        if let intent = try fields.int("expirationIntent") { r.expirationIntent = ExpirationIntent(rawValue: intent) }
        r.originalTransactionId = try fields.string("originalTransactionId")
        r.autoRenewProductId = try fields.string("autoRenewProductId")
        r.productId = try fields.string("productId")
        r.autoRenewStatus = try autoRenewStatus(fields, "autoRenewStatus")
        r.isInBillingRetryPeriod = try fields.bool("isInBillingRetryPeriod")
        if let status = try fields.int("priceIncreaseStatus") { r.priceIncreaseStatus = PriceIncreaseStatus(rawValue: status) }
        r.gracePeriodExpiresDate = try fields.timestamp("gracePeriodExpiresDate")
        if let offer = try fields.int("offerType") { r.offerType = OfferType(rawValue: offer) }
        r.offerIdentifier = try fields.string("offerIdentifier")
        r.signedDate = try fields.timestamp("signedDate")
        if let environment = try fields.string("environment") { r.environment = Environment(rawValue: environment) }
        r.recentSubscriptionStartDate = try fields.timestamp("recentSubscriptionStartDate")
        r.renewalDate = try fields.timestamp("renewalDate")
        r.currency = try fields.string("currency")
        r.renewalPrice = try fields.int64("renewalPrice")
        if let discount = try fields.string("offerDiscountType") {
            r.offerDiscountType = OfferDiscountType(rawValue: discount)
        }
        r.eligibleWinBackOfferIds = try fields.stringArray("eligibleWinBackOfferIds")
        r.appAccountToken = try fields.string("appAccountToken")
        r.appTransactionId = try fields.string("appTransactionId")
        r.offerPeriod = try fields.string("offerPeriod")
        r.advancedCommerceInfo = fields["advancedCommerceInfo"]
        r.extra = fields.unknownMembers(jwsRenewalKeys)
        return r
    }
}
