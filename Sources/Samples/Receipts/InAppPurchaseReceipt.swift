/// One in-app purchase inside an app receipt: the value of a type-17 attribute.
///
/// ```
/// InAppPurchaseReceipt ::= SET OF ReceiptAttribute
///     -- 1701 quantity                      INTEGER
///     -- 1702 product identifier            UTF8String
///     -- 1703 transaction identifier        UTF8String
///     -- 1704 purchase date                 IA5String (RFC 3339)
///     -- 1705 original transaction id       UTF8String
///     -- 1706 original purchase date        IA5String
///     -- 1707 product type                  INTEGER (0 non-consumable, 1 consumable, 2 non-renewing, 3 auto-renewable)
///     -- 1708 subscription expiration date  IA5String, empty when none
///     -- 1711 web order line item id        INTEGER, 0 when none
///     -- 1712 cancellation date             IA5String, empty when none
///     -- 1713 is trial period               INTEGER 0 or 1
///     -- 1719 is in intro offer period      INTEGER 0 or 1
///     -- 1721 promotional offer identifier  UTF8String, only when there is one
/// ```
/// The types are those of Apple's "Receipt Fields" (Receipt Validation Programming Guide); 1707 and 1721
/// are not in that table but are in Apple's production receipts (see `shared/corpus/SOURCES.md`,
/// `receipt-production`), and unused fields are written as Apple writes them (empty string, 0).
/// The JSON-only fields (`cancellation_reason`, `offer_code_ref_name`, `is_upgraded`,
/// `in_app_ownership_type`, `app_account_token`) have no ASN.1 type and are not in the receipt.
struct InAppPurchaseReceipt {
    enum ProductType: Int64 {
        case nonConsumable = 0
        case consumable = 1
        case nonRenewingSubscription = 2
        case autoRenewableSubscription = 3
    }

    var quantity: Int64 = 1
    var productId: String
    var transactionId: String
    var purchaseDate: Int64
    var originalTransactionId: String
    var originalPurchaseDate: Int64
    var productType: ProductType
    var expiresDate: Int64?
    var webOrderLineItemId: Int64?
    var cancellationDate: Int64?
    var isTrialPeriod = false
    var isInIntroOfferPeriod = false
    var promotionalOfferId: String?

    /// The type-17 attribute that carries this purchase.
    var attribute: ReceiptAttribute {
        var attributes: [ReceiptAttribute] = [
            .integer(1701, quantity),
            .utf8(1702, productId),
            .utf8(1703, transactionId),
            .date(1704, purchaseDate),
            .utf8(1705, originalTransactionId),
            .date(1706, originalPurchaseDate),
            .integer(1707, productType.rawValue),
            .date(1708, expiresDate),
            .integer(1711, webOrderLineItemId ?? 0),
            .date(1712, cancellationDate),
            .integer(1713, isTrialPeriod ? 1 : 0),
            .integer(1719, isInIntroOfferPeriod ? 1 : 0),
        ]
        if let promotionalOfferId { attributes.append(.utf8(1721, promotionalOfferId)) }
        return .set(17, attributes)
    }
}
