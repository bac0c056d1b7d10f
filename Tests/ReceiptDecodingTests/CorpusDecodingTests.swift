import ReceiptDecoding
import ReceiptModel
import Testing

@Suite("Real public App Store data decodes")
struct CorpusDecodingTests {
    @Test("RevenueCat's verifyReceipt: 9 distinct transactions from 18 entries, one trial")
    func revenueCatVerifyReceipt() async throws {
        let records = try await decodeCorpus("RevenueCat__purchases-ios/verifyReceiptSample1.txt")
        let record = try #require(records.first)
        #expect(records.count == 1)
        #expect(record.kind == .verifyReceipt)
        #expect(record.isOK)
        #expect(record.verification == .notApplicable)
        #expect(record.transactions.count == 9)
        #expect(record.transactions.allSatisfy { $0.sources.count == 2 })
        let trials = record.transactions.filter { $0.offerDiscountType == .freeTrial }
        #expect(trials.map(\.transactionId) == ["1000000692878476"])
        #expect(trials.first?.offerType == .introductory)
        #expect(trials.first?.legacy["is_trial_period"] == .string("true"))
        let first = try #require(record.transactions.first { $0.transactionId == "1000000692878476" })
        #expect(first.purchaseDate?.millisecondsSince1970 == 1_594_755_206_000)
        #expect(first.quantity == 1)
        #expect(first.environment == .sandbox)
        #expect(first.bundleId == "com.revenuecat.sampleapp")
        #expect(first.type == .autoRenewableSubscription)
        #expect(first.subscriptionGroupIdentifier == "20662382")
        #expect(record.receipt?.receiptType == "ProductionSandbox")
        #expect(record.receipt?.adamId == 0)
        #expect(record.receipt?.inAppCount == 9)
        #expect(record.renewalInfos.count == 1)
        #expect(record.renewalInfos.first?.autoRenewStatus == .on)
    }

    @Test("laravel's V1 notification: 54 transactions, 4 upgraded, renewal turned off")
    func laravelNotificationV1() async throws {
        let record = try #require(try await decodeCorpus("imdhemy__laravel-in-app-purchases/appstore-server-notification.json").first)
        #expect(record.kind == .notificationV1)
        #expect(record.isOK)
        #expect(record.transactions.count == 54)
        #expect(record.transactions.filter { $0.isUpgraded == true }.count == 4)
        #expect(Set(record.transactions.compactMap(\.originalTransactionId)) == ["1000000723811158"])
        #expect(record.transactions.filter { $0.productId == "year_premium" }.count == 6)
        let notification = try #require(record.notification)
        #expect(notification.notificationType == .didChangeRenewalStatus)
        #expect(notification.autoRenewStatus == false)
        #expect(notification.environment == .sandbox)
        #expect(notification.bundleId == "com.twigano.fashion")
        #expect(notification.autoRenewStatusChangeDate?.millisecondsSince1970 == 1_606_293_002_000)
        #expect(notification.extra["password"] == .string("<redacted>"))
        let renewal = try #require(record.renewalInfos.first)
        #expect(renewal.autoRenewStatus == .off)
        #expect(renewal.expirationIntent == .customerCancelled)
        #expect(renewal.isInBillingRetryPeriod == false)
    }

    @Test("itunes-iap response2: 18 distinct transactions although in_app has 13")
    func staleInApp() async throws {
        let record = try #require(
            try await decodeCorpus("youknowone__itunes-iap/EXTRACTED_conftest.py_itunes_autorenew_response2.json").first)
        #expect(record.isOK)
        #expect(record.receipt?.inAppCount == 13)
        #expect(record.transactions.count == 18)
        #expect(record.transactions.filter { $0.sources.count == 2 }.count == 13)
        #expect(record.renewalInfos.first?.expirationIntent == .customerCancelled)
    }

    @Test("iOS 6-style response3 masks its transaction ids: rejected (maskedId), as two masked purchases would read as one")
    func iOS6ObjectForm() async throws {
        let record = try #require(
            try await decodeCorpus("youknowone__itunes-iap/EXTRACTED_conftest.py_itunes_autorenew_response3.json").first)
        #expect(record.error?.code == "maskedId")
        #expect(record.error?.message == "transaction_id is masked (********…) in receipt: a purchase is known by its id, and masked ones cannot be told apart")
        #expect(record.kind == .verifyReceipt)
    }

    @Test("iOS 6-style object-form receipt and latest_receipt_info, ms-string expires_date (response3 with its ids unmasked)")
    func iOS6ObjectFormUnmasked() async throws {
        let file = try Corpus.bytes("youknowone__itunes-iap/EXTRACTED_conftest.py_itunes_autorenew_response3.json")
        let text = String(decoding: file, as: UTF8.self).replacing(#/"transaction_id":"\*+"/#, with: #""transaction_id":"1000000333000001""#)
        let record = try #require(try await decodeText(text).first)
        #expect(record.isOK, "\(String(describing: record.error))")
        #expect(record.kind == .verifyReceipt)
        #expect(record.transactions.count == 1)
        let transaction = try #require(record.transactions.first)
        #expect(transaction.expiresDate?.millisecondsSince1970 == 1_506_524_970_000)
        #expect(transaction.purchaseDate?.millisecondsSince1970 == 1_506_524_670_000)
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.sources.count == 2)
        // The other masked values are left out, each named once.
        #expect(
            record.warnings == [
                "bid is masked in receipt; treated as absent", "original_transaction_id is masked in receipt; treated as absent",
                "web_order_line_item_id is masked in receipt; treated as absent", "product_id is masked in receipt; treated as absent",
                "original_transaction_id is masked in latest_receipt_info; treated as absent",
                "web_order_line_item_id is masked in latest_receipt_info; treated as absent",
                "product_id is masked in latest_receipt_info; treated as absent", "bid is masked in latest_receipt_info; treated as absent",
                "expires_date is masked in latest_receipt_info; treated as absent",
            ])
    }

    @Test("aporat's synthetic response with numbers where strings are expected decodes leniently")
    func lenientNumbers() async throws {
        let record = try #require(try await decodeCorpus("aporat__store-receipt-validator/inAppPurchaseResponse.json").first)
        #expect(record.isOK)
        #expect(record.transactions.count == 4)
        let ids = record.transactions.map(\.transactionId)
        #expect(ids.contains("1000000104232856"))
        let t = try #require(record.transactions.first { $0.transactionId == "1000000104232856" })
        #expect(t.originalTransactionId == "1000000093384828")
        #expect(t.quantity == 1)
        #expect(t.expiresDate?.millisecondsSince1970 == 1_394_619_485_000)
        #expect(t.offerType == nil)
        #expect(record.receipt?.applicationVersion == "1")
        #expect(record.receipt?.appItemId == 11_202_513_425_662)
    }

    @Test("V1 with top-level PROD: unified_receipt's Production wins; auto_renew_status \"true\"")
    func v1Environment() async throws {
        let record = try #require(try await decodeCorpus("aporat__store-receipt-validator/serverNotificationRequest.json").first)
        #expect(record.notification?.environment == .production)
        #expect(record.notification?.autoRenewStatus == true)
        #expect(record.transactions.first?.environment == .production)
        #expect(record.transactions.first?.inAppOwnershipType == .purchased)
        #expect(record.notification?.originalTransactionId == "100000000000000")
    }

    @Test("error responses and iOS 6 transaction receipts are rejected with the right reason")
    func rejectedCorpusFiles() async throws {
        let status = try #require(try await decodeCorpus("aporat__store-receipt-validator/inAppPurchaseInvalidReceiptResponse.json").first)
        #expect(status.error?.code == "appleStatus")
        #expect(status.error?.message.contains("21002") == true)
        #expect(status.kind == .verifyReceipt)
        for file in ["apple__app-store-server-library-swift/mock_signed_data/legacyTransaction", "voltrue2__in-app-purchase/apple"] {
            let record = try #require(try await decodeCorpus(file).first)
            #expect(record.error?.code == "legacyTransactionReceipt", "\(file)")
            #expect(!record.raw.isEmpty)
        }
    }

    @Test("decoded JWS payload models keep every field, known and unknown")
    func payloadModels() async throws {
        let record = try #require(try await decodeCorpus("apple__app-store-server-library-swift/models/signedTransaction.json").first)
        let t = try #require(record.transactions.first)
        #expect(t.transactionId == "23456")
        #expect(t.price == 10990)
        #expect(t.revocationReason == .appIssue)
        #expect(t.isUpgraded == true)
        #expect(t.environment == .localTesting)
        #expect(t.offerDiscountType == .payAsYouGo)
        #expect(t.advancedCommerceInfo?["period"] == .string("P1M"))
        #expect(t.extra["billingPlanType"] == .string("MONTHLY"))
        #expect(t.extra["commitmentInfo"]?["totalBillingPeriods"] == .number("12"))

        let revoked = try #require(
            try await decodeCorpus("apple__app-store-server-library-swift/models/signedTransactionWithRevocation.json").first?.transactions.first)
        #expect(revoked.revocationType == .refundProrated)
        #expect(revoked.revocationPercentage == 50000)

        let renewal = try #require(try await decodeCorpus("apple__app-store-server-library-swift/models/signedRenewalInfo.json").first?.renewalInfos.first)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.gracePeriodExpiresDate?.millisecondsSince1970 == 1_698_148_900_000)
        #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(renewal.extra["renewalBillingPlanType"] == .string("MONTHLY"))

        let summary = try #require(try await decodeCorpus("apple__app-store-server-library-swift/models/signedSummaryNotification.json").first)
        #expect(summary.notification?.subtype == .summary)
        #expect(summary.notification?.summary?["succeededCount"] == .number("5"))

        let history = try #require(try await decodeCorpus("apple__app-store-server-library-swift/models/transactionHistoryResponse.json").first)
        #expect(history.kind == .serverAPIResponse)
        #expect(history.isOK)
        // Its signedTransactions are placeholder strings, not JWS: kept raw, each said so.
        #expect(
            history.warnings == [
                #"signedTransactions[0] is not a JWS ("signed_transaction_value"); kept raw, not decoded"#,
                #"signedTransactions[1] is not a JWS ("signed_transaction_value2"); kept raw, not decoded"#,
            ])
    }

    @Test("Xcode JWS: fractional milliseconds floor, year-0001 dates survive, marked unsigned")
    func xcodeJWS() async throws {
        let record = try #require(try await decodeCorpus("apple__app-store-server-library-swift/xcode/xcode-signed-transaction").first)
        #expect(record.verification == .unsigned)
        let t = try #require(record.transactions.first)
        #expect(t.purchaseDate?.millisecondsSince1970 == 1_697_679_936_049)
        #expect(t.expiresDate?.millisecondsSince1970 == 1_700_358_336_049)
        #expect(t.environment == .xcode)
        #expect(t.extra["deviceVerificationNonce"] != nil)
        let app = try #require(try await decodeCorpus("apple__app-store-server-library-swift/xcode/xcode-signed-app-transaction").first)
        #expect(app.kind == .appReceipt)
        #expect(app.receipt?.originalPurchaseDate?.millisecondsSince1970 == -62_135_769_600_000)
        // Its request date (1697680122257.447 in the payload) is the receipt's, as a verifyReceipt `request_date` is, not
        // an unknown field.
        #expect(app.receipt?.requestDate?.millisecondsSince1970 == 1_697_680_122_257)
        #expect(app.receipt?.extra["requestDate"] == nil)
        #expect(app.verification == .unsigned)
    }
}
