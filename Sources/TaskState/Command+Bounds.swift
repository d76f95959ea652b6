import FoundationEssentials

extension Command {
    /// The first number of this command outside its documented range (``NumericBounds``), or `nil`.
    ///
    /// The scheduler refuses such a command (`invalidCommand`) before applying it: any program may
    /// write the inbox, so what `bgctl` checked must be checked again here.
    public func outOfBounds(now: Date) -> OutOfBounds? {
        do {
            try NumericBounds.check(date: issuedAt, "issuedAt", now: now)
            if let issuerPID { try NumericBounds.check(issuerPID, "issuerPID", in: NumericBounds.pid) }
            switch action {
            case .submit(let request):
                if let date = request.earliestBeginDate { try NumericBounds.check(date: date, "earliestBeginDate", now: now) }
            case .beginFinishing(_, _, let pid), .attach(_, let pid, _, _, _), .detach(_, let pid):
                try NumericBounds.check(pid, "pid", in: NumericBounds.pid)
            case .transferCreate(let request):
                try request.checkBounds(now: now)
            case .appUsed(_, let uses):
                try NumericBounds.check(uses.count, "uses", in: NumericBounds.usesPerCommand, unit: " of uses")
                for (index, date) in uses.enumerated() {
                    // A use is in the past (a minute of clock skew allowed) and within the year kept.
                    try NumericBounds.check(date: date, "uses[\(index)]", in: now.addingTimeInterval(-UsageHistory.maximumAge)...now.addingTimeInterval(60))
                }
            case .push(let request):
                // At or before the command's issue (`--expiration 0`): deliver now or drop.
                if let date = request.expiration, date > issuedAt { try NumericBounds.check(date: date, "expiration", now: now) }
            default:
                break
            }
        } catch {
            return error
        }
        return nil
    }
}

extension TransferRequest {
    /// Throws for the first number outside its documented range.
    func checkBounds(now: Date) throws(OutOfBounds) {
        if let date = earliestBeginDate { try NumericBounds.check(date: date, "earliestBeginDate", now: now) }
        if let seconds = timeoutIntervalForRequest {
            try NumericBounds.check(seconds: seconds, "timeoutIntervalForRequest", in: NumericBounds.requestTimeout)
        }
        if let seconds = timeoutIntervalForResource {
            try NumericBounds.check(seconds: seconds, "timeoutIntervalForResource", in: NumericBounds.resourceTimeout)
        }
        if let bytes = countOfBytesClientExpectsToReceive {
            try NumericBounds.check(bytes, "countOfBytesClientExpectsToReceive", in: NumericBounds.expectedBytes, unit: " of bytes")
        }
        if let bytes = countOfBytesClientExpectsToSend {
            try NumericBounds.check(bytes, "countOfBytesClientExpectsToSend", in: NumericBounds.expectedBytes, unit: " of bytes")
        }
    }
}
