import FoundationEssentials
import TaskState

/// The transfer detail's lines about the question before a delayed begin (`willBeginDelayedRequest`).
enum DelayedRequestText {
    static func lines(_ transfer: TransferRecord, date: (Date?) -> String) -> [(String, String)] {
        guard let askedAt = transfer.delayedRequestAskedAt else {
            return transfer.asksBeforeDelayedBegin == true ? [("asks app", "before it begins")] : []
        }
        let answer = switch transfer.delayedRequestOutcome {
        case nil: "waiting until \(date(transfer.delayedRequestAnswerBy))"
        case .continued?: "begin as made"
        case .changed?: "changed the request"
        case .cancelled?: "cancelled it"
        case .timedOut?: "none in time: began as made"
        }
        return [("asked app", date(askedAt)), ("answer", answer)]
    }
}
