import ReceiptModel

/// RFC 3339 dates as receipts write them: `2020-07-22T18:33:15Z`, with or without fractions,
/// with `Z`, `+01:00` or `+0100`.
enum RFC3339 {
    static func parse(_ text: String) -> Timestamp? {
        let b = Array(text.utf8)
        guard b.count >= 19, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == UInt8(ascii: " "),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? { decimal(b, range) }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...daysIn(month: month, of: year)).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var i = 19
        var millis: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            while i < b.count, isDigit(b[i]) {
                if digits < 3 { millis = millis * 10 + Int64(b[i] - 0x30) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            if digits < 3 { for _ in digits..<3 { millis *= 10 } }
        }
        var offsetMinutes: Int64 = 0
        if i == b.count {
            // No zone: receipts mean UTC.
        } else if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
            guard let hours = number((i + 1)..<(i + 3)) else { return nil }
            var next = i + 3
            if next < b.count, b[next] == UInt8(ascii: ":") { next += 1 }
            // RFC 3339's offsets: hours 00-23, minutes 00-59 (a +25:00 is no zone anywhere).
            guard let minutes = number(next..<(next + 2)), hours < 24, minutes < 60 else { return nil }
            offsetMinutes = sign * (hours * 60 + minutes)
            i = next + 2
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let local = Timestamp.utc(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, millisecond: millis)
        return local.adding(milliseconds: -offsetMinutes * 60_000)
    }

    /// The days of a month of the Gregorian calendar: 2025-02-30 is no date (it was read as 2025-03-02).
    static func daysIn(month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
