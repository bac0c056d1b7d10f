import ReceiptModel
import SwiftASN1

/// An app receipt: PKCS#7 SignedData around a SET of receipt attributes, parsed locally (BER or DER).
///
/// ```
/// ContentInfo ::= SEQUENCE {
///     contentType OBJECT IDENTIFIER,            -- 1.2.840.113549.1.7.2 signedData
///     content     [0] EXPLICIT SignedData }
/// SignedData ::= SEQUENCE {
///     version          INTEGER,
///     digestAlgorithms SET OF AlgorithmIdentifier,
///     encapContentInfo SEQUENCE { eContentType OBJECT IDENTIFIER, eContent [0] EXPLICIT OCTET STRING },
///     certificates     [0] IMPLICIT SET OF Certificate OPTIONAL,
///     crls             [1] IMPLICIT ANY OPTIONAL,
///     signerInfos      SET OF SignerInfo }
/// ```
struct PKCS7Receipt {
    /// The receipt payload (the encapsulated content's octets).
    let content: [UInt8]
    /// The certificates carried in the envelope, DER.
    let certificates: [[UInt8]]
    /// The signer infos, as nodes.
    let signerInfos: [ASN1Node]
    let receipt: AppReceipt
    /// In-app attribute sets, in receipt order.
    let inApp: [[ReceiptAttribute]]

    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]

    static func parse(_ der: [UInt8]) throws(RecordError) -> PKCS7Receipt {
        guard der.count <= 64 << 20 else {
            throw RecordError(code: "recordTooLarge", message: "the app receipt is larger than 64 MiB")
        }
        let root: ASN1Node
        do {
            root = try BER.parse(der)
        } catch {
            throw RecordError(code: "malformed", message: "the app receipt is not BER/DER PKCS#7: \(plainWords(error))")
        }
        let top = BERValue.children(root)
        guard root.identifier == .sequence, top.count >= 2,
            let oid = try? ASN1ObjectIdentifier(derEncoded: top[0]), oid == signedDataOID
        else {
            throw RecordError(code: "malformed", message: "the app receipt is not PKCS#7 SignedData")
        }
        guard let signedData = BERValue.children(top[1]).first, signedData.identifier == .sequence else {
            throw RecordError(code: "malformed", message: "the PKCS#7 envelope has no SignedData")
        }
        let parts = BERValue.children(signedData)
        guard parts.count >= 4 else {
            throw RecordError(code: "malformed", message: "SignedData has \(parts.count) parts, expected at least 4")
        }
        let encapsulated = BERValue.children(parts[2])
        guard encapsulated.count >= 2, let wrapper = BERValue.children(encapsulated[1]).first,
            let content = BERValue.octets(wrapper)
        else {
            throw RecordError(code: "malformed", message: "the PKCS#7 envelope carries no receipt payload")
        }
        var certificates: [[UInt8]] = []
        var signerInfos: [ASN1Node] = []
        for part in parts.dropFirst(3) {
            if part.identifier.tagClass == .contextSpecific && part.identifier.tagNumber == 0 {
                certificates = BERValue.children(part).map { Array($0.encodedBytes) }
            } else if part.identifier == .set {
                signerInfos = BERValue.children(part)
            }
        }
        let attributes = try ReceiptAttribute.parseSet(content, context: "the receipt payload")
        var receipt = AppReceipt()
        var inApp: [[ReceiptAttribute]] = []
        for attribute in attributes {
            switch attribute.type {
            case 0: receipt.receiptType = try attribute.text(context: "the receipt")
            case 1: receipt.adamId = try attribute.integer(context: "the receipt")
            case 2: receipt.bundleId = try attribute.text(context: "the receipt")
            case 3: receipt.applicationVersion = try attribute.text(context: "the receipt")
            case 4: receipt.opaqueValue = attribute.value.isEmpty ? nil : Base64.encode(attribute.value)
            case 5: receipt.sha1Hash = attribute.value.isEmpty ? nil : Base64.encode(attribute.value)
            case 12: receipt.receiptCreationDate = try attribute.date(context: "the receipt")
            case 17: inApp.append(try ReceiptAttribute.parseSet(attribute.value, context: "in-app entry \(inApp.count)"))
            case 18: receipt.originalPurchaseDate = try attribute.date(context: "the receipt")
            case 19: receipt.originalApplicationVersion = try attribute.text(context: "the receipt")
            case 21: receipt.expirationDate = try attribute.date(context: "the receipt")
            default:
                let key = "attribute.\(attribute.type)"
                if !receipt.extra.has(key) { receipt.extra.append(key, attribute.rawJSON) }
            }
        }
        receipt.appItemId = receipt.adamId
        receipt.inAppCount = inApp.count
        return PKCS7Receipt(
            content: content, certificates: certificates, signerInfos: signerInfos, receipt: receipt, inApp: inApp)
    }

    /// The in-app purchases as canonical transactions, merged by `transactionId`.
    func transactions(provenance: Provenance, notes: DecodeNotes) throws(RecordError) -> [Transaction] {
        var set = TransactionSet()
        let environment = receipt.receiptType.map(Self.environment(receiptType:))
        for (index, attributes) in inApp.enumerated() {
            let location = "in_app[\(index)]"
            let transaction = try InAppPurchaseAttributes.transaction(
                attributes, location: location, bundleId: receipt.bundleId, environment: environment)
            set.add(transaction, source: provenance.at(location))
        }
        return set.ordered
    }

    /// `Production`, `ProductionSandbox`, `ProductionVPP`, `Xcode`, ... as an environment.
    static func environment(receiptType: String) -> Environment {
        switch receiptType {
        case "Production", "ProductionVPP": .production
        case "ProductionSandbox", "ProductionVPPSandbox", "Sandbox": .sandbox
        case "Xcode": .xcode
        default: .unknown(receiptType)
        }
    }
}

/// The in-app purchase attributes 1701-1725 inside a receipt's type-17 attribute.
enum InAppPurchaseAttributes {
    static func transaction(
        _ attributes: [ReceiptAttribute], location: String, bundleId: String?, environment: Environment?
    ) throws(RecordError) -> Transaction {
        var byType: [Int: ReceiptAttribute] = [:]
        var extra = JSONObject()
        for attribute in attributes {
            if (1701...1725).contains(attribute.type) && byType[attribute.type] == nil {
                byType[attribute.type] = attribute
            }
        }
        guard let id = try byType[1703]?.text(context: location) else {
            throw RecordError(code: "missingField", message: "transaction id (attribute 1703) is required in \(location)")
        }
        func nonZero(_ value: Int64?) -> Int64? { value == 0 ? nil : value }
        var t = Transaction(transactionId: id)
        t.bundleId = bundleId
        t.environment = environment
        if let quantity = try byType[1701]?.integer(context: location) {
            guard quantity >= 0, let narrow = Int(exactly: quantity) else {
                throw RecordError(code: "negativeQuantity", message: "quantity \(quantity) is out of range in \(location)")
            }
            t.quantity = narrow
        }
        t.productId = try byType[1702]?.text(context: location)
        t.purchaseDate = try byType[1704]?.date(context: location)
        t.originalTransactionId = try byType[1705]?.text(context: location)
        t.originalPurchaseDate = try byType[1706]?.date(context: location)
        t.expiresDate = try byType[1708]?.date(context: location)
        t.webOrderLineItemId = nonZero(try byType[1711]?.integer(context: location)).map(String.init)
        t.revocationDate = try byType[1712]?.date(context: location)
        if let type = try byType[1707]?.integer(context: location) {
            switch type {
            case 0: t.type = .nonConsumable
            case 1: t.type = .consumable
            case 2: t.type = .nonRenewingSubscription
            case 3: t.type = .autoRenewableSubscription
            default: t.type = .unknown(String(type))
            }
        }
        if t.type == nil && t.expiresDate != nil { t.type = .autoRenewableSubscription }
        if try byType[1713]?.integer(context: location) == 1 {
            t.offerType = .introductory
            t.offerDiscountType = .freeTrial
            t.legacy.append("is_trial_period", .string("true"))
        }
        if try byType[1719]?.integer(context: location) == 1 {
            if t.offerType == nil { t.offerType = .introductory }
            t.legacy.append("is_in_intro_offer_period", .string("true"))
        }
        if let promotional = try byType[1721]?.text(context: location) {
            t.offerType = .promotional
            t.offerIdentifier = promotional
            t.legacy.append("promotional_offer_id", .string(promotional))
        }
        let mapped: Set<Int> = [1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1713, 1719, 1721]
        for attribute in attributes where !mapped.contains(attribute.type) {
            let key = "attribute.\(attribute.type)"
            if !extra.has(key) { extra.append(key, attribute.rawJSON) }
        }
        t.extra = extra
        return t
    }
}
