/// Amounts as people read them: milliunits of a currency written with that currency's own minor unit.
///
/// Prices are kept in milliunits whatever the currency (Apple's `price` field); a yen has no minor unit
/// and a Kuwaiti dinar has three, so 990 yen reads "990", not "990.00".
public enum Money {
    /// ISO 4217 currencies whose minor unit is not a hundredth: none for these ...
    private static let noMinorUnit: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV",
        "XAF", "XOF", "XPF",
    ]
    /// ... and a thousandth for these (ISO's four-decimal units of account are shown to the milliunit).
    private static let thousandths: Set<String> = ["BHD", "CLF", "IQD", "JOD", "KWD", "LYD", "OMR", "TND", "UYW"]

    /// The digits after the point `currency` is written with: 0, 2 or 3 (2 for a code it does not know).
    public static func decimals(of currency: String?) -> Int {
        guard let code = currency?.uppercased() else { return 2 }
        if noMinorUnit.contains(code) { return 0 }
        return thousandths.contains(code) ? 3 : 2
    }

    /// `milliunits` of `currency` as the screens and the text show an amount: `9.99 USD` (the number as ``format``
    /// writes it, then the currency's code).
    public static func withCurrency(_ milliunits: Int64, currency: String?) -> String {
        "\(format(milliunits, currency: currency)) \(currency ?? "")"
    }

    /// `milliunits` of `currency` rounded half away from zero to its minor unit: 9990 USD -> "9.99",
    /// 990000 JPY -> "990", -1500 KWD -> "-1.500".
    public static func format(_ milliunits: Int64, currency: String?) -> String {
        let decimals = decimals(of: currency)
        let step: UInt64 = decimals == 0 ? 1000 : decimals == 2 ? 10 : 1
        let magnitude = milliunits.magnitude
        let units = magnitude / step + (magnitude % step * 2 >= step && step > 1 ? 1 : 0)
        let sign = milliunits < 0 && units > 0 ? "-" : ""
        guard decimals > 0 else { return sign + "\(units)" }
        let scale: UInt64 = decimals == 2 ? 100 : 1000
        let fraction = String(units % scale)
        return sign + "\(units / scale)." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
}
