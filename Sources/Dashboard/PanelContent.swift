import FoundationEssentials
import TaskState

/// What each panel shows: its columns and, for one source row, its cells.
struct PanelContent {
    let snapshot: DashboardSnapshot
    let palette: Palette
    let glyphs: Glyphs

    func columns(_ panel: Panel, width: Int) -> [Column] {
        let wide = width >= 120
        switch panel {
        case .pending:
            return [.flexible("APP", minimum: 10, weight: 2), .flexible("IDENTIFIER", minimum: 12, weight: 3),
                    .fixed("KIND", wide ? 10 : 7), .fixed("EARLIEST", 10), .fixed("REQUIRES", wide ? 13 : 8),
                    .flexible("WAITING FOR", minimum: 12, weight: 3)]
        case .running:
            return runningColumns(width: width)
        case .transfers:
            return [.flexible("APP", minimum: 8, weight: 2), .flexible("IDENTIFIER", minimum: 8, weight: 2),
                    .flexible("URL", minimum: 8, weight: 3), .fixed("STATE", wide ? 16 : 9),
                    .flexible("PROGRESS", minimum: 6, weight: 2), .fixed("BYTES", wide ? 19 : 9),
                    .fixed("RATE", 9), .fixed("ETA", 6)]
        case .events:
            return [.fixed("TIME", 8), .fixed("EVENT", 17), .flexible("WHAT", minimum: 20)]
        case .apps:
            return appColumns(width: width)
        }
    }

    func cells(_ panel: Panel, source index: Int, widths: [Int]) -> [TableCell] {
        let now = snapshot.now
        switch panel {
        case .pending:
            let row = snapshot.pending[index]
            let request = row.request
            if let push = row.push { return pushCells(push, row: row, widths: widths) }
            let requires = [request.requiresExternalPower ? "power" : nil, request.requiresNetworkConnectivity ? "network" : nil]
                .compactMap { $0 }.joined(separator: ",")
            // The snapshot was read a moment ago; a begin date that has passed since is no blocker.
            // (Within a second counts as passed, as the EARLIEST column's "due" does.)
            let blockers = row.blockers(under: snapshot.rowConditions)
                .filter { $0 != .earliestBeginDate || (request.earliestBeginDate ?? now).timeIntervalSince(now) >= 1 }
            let waiting = blockers.isEmpty ? TableCell("ready: launching", style: palette.good)
                                           : TableCell(row.labels(of: blockers).joined(separator: ", "))
            return [TableCell(request.app.rawValue, keepsTail: true), identifierCell(request.identifier, app: request.app, widths: widths),
                    TableCell(kindLabel(request.kind, widths[2])),
                    TableCell(DurationText.until(request.earliestBeginDate, from: now)),
                    TableCell(requires.isEmpty ? "-" : requires), waiting]
        case .running:
            return runningCells(source: index, widths: widths)
        case .transfers:
            let transfer = snapshot.transfers[index]
            let fraction = DashboardSnapshot.fraction(transfer)
            let barWidth = widths.count > 4 ? widths[4] : 8
            let host = URLComponents(string: transfer.url).map { ($0.host ?? "") + $0.path } ?? transfer.url
            let expected = transfer.bytesExpected.map { "/" + TextFormat.bytes($0) } ?? ""
            let rate = transfer.bytesPerSecond.map { TextFormat.bytes(SafeNumber.int64($0, .down)) + "/s" } ?? "-"
            var eta = "-"
            if let expected = transfer.bytesExpected, let speed = transfer.bytesPerSecond, speed > 0, transfer.state == .running {
                eta = DurationText.compact(Double(max(0, expected - transfer.bytesTransferred)) / speed)
            }
            let gradient = transfer.direction == .download ? "download" : "upload"
            return [TableCell(transfer.app.rawValue, keepsTail: true), identifierCell(transfer.identifier, app: transfer.app, widths: widths),
                    TableCell(host, keepsTail: true),
                    TableCell(Self.transferState(transfer, blockers: snapshot.transferBlockers[transfer.key] ?? [],
                                                 width: widths.count > 3 ? widths[3] : 9),
                              style: transfer.state == .failed ? palette.error : nil),
                    TableCell.bar(fraction, width: barWidth, glyphs: glyphs, style: palette.gradient(gradient, fraction),
                                  emptyStyle: palette.meterEmpty),
                    TableCell(TextFormat.bytes(transfer.bytesTransferred) + expected), TableCell(rate), TableCell(eta)]
        case .events:
            let event = snapshot.events[index]
            let bad: Set<Event.Kind> = [.refused, .killed, .launchFailed, .quarantined, .manifestError, .commandRejected, .throttled,
                                        .interrupted, .transferFailed]
            // Notable but not a failure: an expiry, or a download that had to start over.
            let notable: Set<Event.Kind> = [.expired, .transferRestarted, .pushCoalesced, .pushExpired, .pushDropped]
            let style: CellStyle? = bad.contains(event.type) ? palette.error : (notable.contains(event.type) ? palette.misc : nil)
            return [TableCell(TextFormat.clock(event.time)), TableCell(event.type.rawValue, style: style), TableCell(event.message)]
        case .apps:
            return appCells(snapshot.apps[index], widths: widths)
        }
    }

    /// The identifier column beside the app column (`…refresh` where the whole does not fit).
    func identifierCell(_ identifier: Identifier, app: Identifier, widths: [Int]) -> TableCell {
        TableCell(IdentifierText.fitted(identifier.rawValue, app: app.rawValue, width: widths.count > 1 ? widths[1] : 0, glyphs: glyphs),
                  keepsTail: true)
    }

    /// A held push: no earliest date (a push may go at once), its priority where a request shows
    /// what it requires; its expiry is in the details.
    private func pushCells(_ push: HeldPush, row: DashboardSnapshot.PendingRow, widths: [Int]) -> [TableCell] {
        let waiting = row.pushBlockers.isEmpty ? TableCell("ready: delivering", style: palette.good)
                                               : TableCell(row.waitingLabels(under: snapshot.rowConditions).joined(separator: ", "))
        let coalesced = push.coalescedCount > 0 ? " +\(push.coalescedCount)" : ""
        return [TableCell(push.app.rawValue, keepsTail: true), TableCell(push.id.rawValue + coalesced, keepsTail: true),
                TableCell(kindLabel(.remoteNotification, widths[2])),
                TableCell("-"),
                TableCell("prio \(push.priority.rawValue)"), waiting]
    }

    /// A transfer's state, and for a waiting one what it waits for first.
    static func transferState(_ transfer: TransferRecord, blockers: [TransferBlocker], width: Int) -> String {
        guard transfer.state == .waiting, let first = blockers.first else { return transfer.state.rawValue }
        let label = first.label
        return width >= label.count + 6 ? "wait: " + label : label
    }

    func kindLabel(_ kind: TaskKind, _ width: Int) -> String {
        if width >= kind.rawValue.count { return kind.rawValue }
        switch kind {
        case .appRefresh: return "refresh"
        case .processing: return "process"
        case .finishing: return "finish"
        case .urlSession: return "session"
        case .remoteNotification: return "push"
        }
    }
}
