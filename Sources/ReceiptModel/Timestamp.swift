/// An instant as milliseconds since 1970-01-01T00:00:00Z, the one time type of the core.
///
/// Apple's JWS payloads and the legacy `*_ms` fields both count milliseconds since the epoch,
/// so the canonical model keeps exactly that and converts to calendar dates only for display.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch (UTC); negative before 1970 (Xcode uses year 0001).
    public var millisecondsSince1970: Int64

    /// Creates a timestamp from milliseconds since the epoch.
    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// The instant `milliseconds` later (or earlier, when negative), held at the first or last
    /// representable instant rather than wrapping around (data can carry any 64-bit value).
    public func adding(milliseconds: Int64) -> Timestamp {
        let (sum, overflow) = millisecondsSince1970.addingReportingOverflow(milliseconds)
        guard overflow else { return Timestamp(millisecondsSince1970: sum) }
        return Timestamp(millisecondsSince1970: milliseconds < 0 ? .min : .max)
    }

    /// The UTC day this instant is in, counted from 1970-01-01 (floored: a day before 1970 is negative).
    public var utcDay: Int64 {
        let ms = millisecondsSince1970
        return ms / 86_400_000 - (ms % 86_400_000 < 0 ? 1 : 0)
    }

    /// The first instant of its UTC day (held at the first representable instant for the first day).
    public var startOfUTCDay: Timestamp {
        adding(milliseconds: -(((millisecondsSince1970 % 86_400_000) + 86_400_000) % 86_400_000))
    }

    /// The last millisecond of its UTC day (held at the last representable instant for the last day).
    public var endOfUTCDay: Timestamp { startOfUTCDay.adding(milliseconds: 86_400_000 - 1) }

    /// Milliseconds from this instant to `other` (negative when `other` is earlier), held at
    /// `Int64.min` / `Int64.max` when the true distance does not fit.
    public func distance(to other: Timestamp) -> Int64 {
        let (difference, overflow) = other.millisecondsSince1970.subtractingReportingOverflow(millisecondsSince1970)
        guard overflow else { return difference }
        return other.millisecondsSince1970 < millisecondsSince1970 ? .min : .max
    }

    /// ISO 8601 in UTC with millisecond precision, e.g. `2021-03-22T11:13:18.724Z`.
    public var description: String { iso8601 }

    /// ISO 8601 in UTC, seconds precision when the milliseconds are zero.
    public var iso8601: String {
        let ms = millisecondsSince1970
        // Floor division without the subtraction that would overflow at Int64.min.
        var days = ms / 86_400_000
        var msOfDay = ms % 86_400_000
        if msOfDay < 0 {
            days -= 1
            msOfDay += 86_400_000
        }
        // Civil-from-days (proleptic Gregorian), after Howard Hinnant's public-domain algorithm.
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        var year = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        if month <= 2 { year += 1 }
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        let milli = msOfDay % 1000
        var out = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        out += "T" + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2)
        if milli != 0 { out += "." + pad(milli, 3) }
        return out + "Z"
    }

    /// Milliseconds since the epoch of a proleptic Gregorian UTC date and time.
    public static func utc(
        year: Int64, month: Int64, day: Int64, hour: Int64 = 0, minute: Int64 = 0, second: Int64 = 0,
        millisecond: Int64 = 0
    ) -> Timestamp {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let ms = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
        return Timestamp(millisecondsSince1970: ms)
    }
}

private func pad(_ value: Int64, _ width: Int) -> String {
    let negative = value < 0
    var digits = String(negative ? -value : value)
    while digits.count < width { digits = "0" + digits }
    return negative ? "-" + digits : digits
}
