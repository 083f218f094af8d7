/// A duration as the command line and the config file write it: "36h",
/// "30d", "1y2w" (s, m, h, d, w, and y of 365 days), in seconds; nil for
/// anything else, zero, or more than an Int64 holds.
public func durationSeconds(_ text: String) -> Int64? {
    let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800, "y": 31_536_000]
    var total: Int64 = 0, digits = ""
    for c in text {
        if c.isASCII, c.isNumber { digits.append(c); continue }
        guard let unit = units[c], let n = Int64(digits) else { return nil }
        let (part, o1) = n.multipliedReportingOverflow(by: unit)
        let (sum, o2) = total.addingReportingOverflow(part)
        guard !o1, !o2 else { return nil }
        (total, digits) = (sum, "")
    }
    return digits.isEmpty && total > 0 ? total : nil
}
