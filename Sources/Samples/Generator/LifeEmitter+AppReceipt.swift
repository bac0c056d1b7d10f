import Foundation

extension LifeEmitter {
    /// The app receipt of `plan`, signed, as one NDJSON line the way a client plugin posts it to its
    /// server: `{"transactionReceipt":"<base64 PKCS#7>"}`.
    func appReceipt(_ plan: AppReceiptPlan, envelope: SignedReceiptEnvelope, into out: inout [UInt8]) {
        let production = life.environment == "Production"
        let inApp = plan.transactions.map { index -> InAppPurchaseReceipt in
            let t = life.transactions[index]
            let type: InAppPurchaseReceipt.ProductType
            switch t.product.kind {
            case .subscription: type = .autoRenewableSubscription
            case .nonConsumable: type = .nonConsumable
            case .consumable: type = .consumable
            }
            return InAppPurchaseReceipt(
                productId: t.product.id, transactionId: t.id, purchaseDate: t.purchase,
                originalTransactionId: t.original,
                originalPurchaseDate: t.originalPurchase, productType: type, expiresDate: t.expires,
                webOrderLineItemId: t.webOrder.flatMap { Int64($0) },
                cancellationDate: t.revokedVisible(at: plan.createdAt) ? t.revokedAt : nil,
                // The same rules as the legacy JSON's is_trial_period / is_in_intro_offer_period / promotional_offer_id.
                isTrialPeriod: t.offerDiscount == "FREE_TRIAL",
                isInIntroOfferPeriod: t.offerType == 1 && t.offerDiscount != "FREE_TRIAL",
                promotionalOfferId: t.offerType == 2 ? t.offerId : nil)
        }
        let payload = AppReceiptPayload(
            receiptType: production ? "Production" : "ProductionSandbox",
            appItemId: production ? SampleCatalog.appAppleId : 0,
            bundleId: SampleCatalog.bundleId, applicationVersion: "142", deviceIdentifier: plan.deviceIdentifier,
            opaqueValue: plan.opaqueValue, creationDate: plan.createdAt,
            originalPurchaseDate: life.transactions.map(\.purchase).min() ?? plan.createdAt,
            originalApplicationVersion: "1.0", inApp: inApp)
        let receipt = Data(envelope.sign(payload.der)).base64EncodedString()
        out.append(contentsOf: #"{"transactionReceipt":""#.utf8)
        out.append(contentsOf: receipt.utf8)
        out.append(contentsOf: "\"}\n".utf8)
    }
}
