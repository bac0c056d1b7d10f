/// One field of a transaction under Apple's `JWSTransactionDecodedPayload` name.
///
/// ``Transaction/fields`` is the one list of them, in Apple's order: the decoder reads a signed transaction by
/// it, the JSON writer writes by it, merging fills by it and the dashboard's transaction screen lists by it, so
/// a field Apple adds is added once, here.
public struct TransactionField: Sendable {
    /// How the value is held and shown.
    public enum Kind: Sendable {
        /// A string, or an Apple enumeration with string raw values.
        case text
        /// An integer, or an Apple enumeration with integer raw values.
        case integer
        /// Milliseconds since 1970.
        case date
        case flag
        /// An amount in milliunits of its currency (`price`).
        case milliunits
        /// JSON kept as it came (`advancedCommerceInfo`); written only when present.
        case json
    }

    /// How two sightings of a transaction combine this field (``Transaction/merge(_:preferOther:)``).
    public enum MergeRule: Sendable {
        /// The winning sighting's value, else the other's.
        case fill
        /// The transaction's identity: the same in both.
        case identity
        /// A revocation field: a later fact, merged together with the revocation date.
        case revocation
        /// `isUpgraded`: once true, true.
        case upgrade
    }

    public let name: String
    public let kind: Kind
    public let merge: MergeRule
    /// The value, `nil` when the transaction does not have it.
    public let value: @Sendable (Transaction) -> FieldValue?
    /// Sets the value (`nil` clears it); a value of another kind is ignored.
    public let assign: @Sendable (inout Transaction, FieldValue?) -> Void
}

/// A value of a ``TransactionField``.
public enum FieldValue: Hashable, Sendable {
    case text(String)
    case integer(Int64)
    case date(Timestamp)
    case flag(Bool)
    case json(JSONValue)
}

extension Transaction {
    /// Every field Apple's `JWSTransactionDecodedPayload` has, in Apple's order.
    public static let fields: [TransactionField] = [
        TransactionField(
            name: "transactionId", kind: .text, merge: .identity, value: { .text($0.transactionId) },
            assign: { t, value in if case .text(let id)? = value { t.transactionId = id } }),
        .text("originalTransactionId", { $0.originalTransactionId }, { $0.originalTransactionId = $1 }),
        .text("webOrderLineItemId", { $0.webOrderLineItemId }, { $0.webOrderLineItemId = $1 }),
        .text("bundleId", { $0.bundleId }, { $0.bundleId = $1 }),
        .text("productId", { $0.productId }, { $0.productId = $1 }),
        .text("subscriptionGroupIdentifier", { $0.subscriptionGroupIdentifier }, { $0.subscriptionGroupIdentifier = $1 }),
        .date("purchaseDate", { $0.purchaseDate }, { $0.purchaseDate = $1 }),
        .date("originalPurchaseDate", { $0.originalPurchaseDate }, { $0.originalPurchaseDate = $1 }),
        .date("expiresDate", { $0.expiresDate }, { $0.expiresDate = $1 }),
        .int("quantity", { $0.quantity }, { $0.quantity = $1 }),
        .apple("type", { $0.type }, { $0.type = $1 }),
        .text("appAccountToken", { $0.appAccountToken }, { $0.appAccountToken = $1 }),
        .apple("inAppOwnershipType", { $0.inAppOwnershipType }, { $0.inAppOwnershipType = $1 }),
        .date("signedDate", { $0.signedDate }, { $0.signedDate = $1 }),
        .apple("revocationReason", { $0.revocationReason }, { $0.revocationReason = $1 }, merge: .revocation),
        .date("revocationDate", { $0.revocationDate }, { $0.revocationDate = $1 }, merge: .revocation),
        .flag("isUpgraded", { $0.isUpgraded }, { $0.isUpgraded = $1 }, merge: .upgrade),
        .apple("offerType", { $0.offerType }, { $0.offerType = $1 }),
        .text("offerIdentifier", { $0.offerIdentifier }, { $0.offerIdentifier = $1 }),
        .apple("environment", { $0.environment }, { $0.environment = $1 }),
        .text("storefront", { $0.storefront }, { $0.storefront = $1 }),
        .text("storefrontId", { $0.storefrontId }, { $0.storefrontId = $1 }),
        .apple("transactionReason", { $0.transactionReason }, { $0.transactionReason = $1 }),
        .integer("price", { $0.price }, { $0.price = $1 }, kind: .milliunits),
        .text("currency", { $0.currency }, { $0.currency = $1 }),
        .apple("offerDiscountType", { $0.offerDiscountType }, { $0.offerDiscountType = $1 }),
        .text("appTransactionId", { $0.appTransactionId }, { $0.appTransactionId = $1 }),
        .text("offerPeriod", { $0.offerPeriod }, { $0.offerPeriod = $1 }),
        .apple("revocationType", { $0.revocationType }, { $0.revocationType = $1 }, merge: .revocation),
        .integer("revocationPercentage", { $0.revocationPercentage }, { $0.revocationPercentage = $1 }, merge: .revocation),
        .json("advancedCommerceInfo", { $0.advancedCommerceInfo }, { $0.advancedCommerceInfo = $1 }),
    ]

    /// The names of ``fields``.
    public static let fieldNames: Set<String> = Set(fields.map(\.name))
}

extension TransactionField {
    /// Reads a field. Plain closures rather than key paths: a key path is projected at run time (the
    /// import merges and writes every field of every transaction; key paths made that a quarter of its time).
    typealias Get<T> = @Sendable (Transaction) -> T?
    /// Sets a field.
    typealias Put<T> = @Sendable (inout Transaction, T?) -> Void

    /// A field whose value is held as `T` and shown as a ``FieldValue``: `box` turns one into the other,
    /// `unbox` back (nil for a value of another kind, which ``assign`` then ignores).
    private static func field<T>(
        _ name: String, _ kind: Kind, _ merge: MergeRule, _ get: @escaping Get<T>, _ set: @escaping Put<T>,
        box: @escaping @Sendable (T) -> FieldValue, unbox: @escaping @Sendable (FieldValue) -> T?
    ) -> TransactionField {
        TransactionField(
            name: name, kind: kind, merge: merge, value: { get($0).map(box) },
            assign: { t, value in
                if let value {
                    if let unboxed = unbox(value) { set(&t, unboxed) }
                } else {
                    set(&t, nil)
                }
            })
    }

    static func text(_ name: String, _ get: @escaping Get<String>, _ set: @escaping Put<String>) -> TransactionField {
        field(name, .text, .fill, get, set, box: FieldValue.text) { if case .text(let text) = $0 { text } else { nil } }
    }

    static func integer(_ name: String, _ get: @escaping Get<Int64>, _ set: @escaping Put<Int64>, kind: Kind = .integer, merge: MergeRule = .fill) -> TransactionField {
        field(name, kind, merge, get, set, box: FieldValue.integer) { if case .integer(let number) = $0 { number } else { nil } }
    }

    static func int(_ name: String, _ get: @escaping Get<Int>, _ set: @escaping Put<Int>) -> TransactionField {
        field(name, .integer, .fill, get, set, box: { .integer(Int64($0)) }) {
            if case .integer(let number) = $0 { Int(exactly: number) } else { nil }
        }
    }

    static func date(_ name: String, _ get: @escaping Get<Timestamp>, _ set: @escaping Put<Timestamp>, merge: MergeRule = .fill) -> TransactionField {
        field(name, .date, merge, get, set, box: FieldValue.date) { if case .date(let date) = $0 { date } else { nil } }
    }

    static func flag(_ name: String, _ get: @escaping Get<Bool>, _ set: @escaping Put<Bool>, merge: MergeRule = .fill) -> TransactionField {
        field(name, .flag, merge, get, set, box: FieldValue.flag) { if case .flag(let flag) = $0 { flag } else { nil } }
    }

    static func json(_ name: String, _ get: @escaping Get<JSONValue>, _ set: @escaping Put<JSONValue>) -> TransactionField {
        field(name, .json, .fill, get, set, box: FieldValue.json) { if case .json(let json) = $0 { json } else { nil } }
    }

    static func apple<E: AppleEnum>(_ name: String, _ get: @escaping Get<E>, _ set: @escaping Put<E>, merge: MergeRule = .fill) -> TransactionField where E.Raw == String {
        field(name, .text, merge, get, set, box: { .text($0.rawValue) }) { if case .text(let raw) = $0 { E(rawValue: raw) } else { nil } }
    }

    static func apple<E: AppleEnum>(_ name: String, _ get: @escaping Get<E>, _ set: @escaping Put<E>, merge: MergeRule = .fill) -> TransactionField where E.Raw == Int {
        field(name, .integer, merge, get, set, box: { .integer(Int64($0.rawValue)) }) {
            if case .integer(let raw) = $0, let exact = Int(exactly: raw) { E(rawValue: exact) } else { nil }
        }
    }
}
