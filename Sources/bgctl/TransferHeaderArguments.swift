import ArgumentParser
import TaskState

/// `--header`, `--secret-header` and `--method` of `bgctl transfer download|upload`, checked by
/// the rules the scheduler applies again (``TransferHeaderRules``): a bad one is one line, exit 2.
enum TransferHeaderArguments {
    static func parse(_ lines: [String], secretNames: [String], method: String?,
                      direction: TransferRecord.Direction) throws -> [TransferHeader] {
        var headers: [TransferHeader] = []
        for line in lines {
            guard let header = TransferHeader(line: line) else {
                throw ValidationError("bad --header: expected 'Name: value' (a ':' after the name)")
            }
            headers.append(header)
        }
        if let problem = TransferHeaderRules.problem(method: method, headers: headers, secretNames: secretNames,
                                                     direction: direction) {
            throw ValidationError("bad request: \(problem)")
        }
        return headers
    }
}
