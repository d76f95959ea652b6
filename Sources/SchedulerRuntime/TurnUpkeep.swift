import FoundationEssentials
import Logging
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// What a turn keeps up besides commands and time: the group commit that ends it, the transfer
/// engine's reports, manifests and conditions, quarantine and command outcomes.
extension SchedulerDaemon {
    /// Makes the turn's changes, outcomes and consumed commands durable in one group commit
    /// (progress alone is written without one).
    func commit(now: Date, nextWake: Date?) throws {
        let changes = state.takeChanges()
        let expired = outcomeRetention.takeExpired(at: now)
        if changes.isEmpty && pendingOutcomes.isEmpty && consumedCommands.isEmpty && expired.isEmpty { return }
        if !changes.needsDurableCommit && pendingOutcomes.isEmpty && consumedCommands.isEmpty && expired.isEmpty {
            // Progress only: plain atomic writes, no journal and no sync.
            for key in changes.transferProgress.sorted() {
                guard let transfer = state.transfers[key] else { continue }
                try StateFiles.write(try JSONFormat.encode(transfer), to: paths.transferProgress(key), durable: false)
            }
            return
        }
        let heartbeat = DaemonHeartbeat(pid: getpid(), version: Self.version, startedAt: startedAt, updatedAt: now,
                                        nextWakeAt: nextWake, configDirectory: configDirectory)
        let writesHeartbeat = heartbeat.needsWriting(over: writtenHeartbeat)
        let batch = try committer.batch(state: state, changes: changes, outcomes: pendingOutcomes,
                                        heartbeat: writesHeartbeat ? heartbeat : nil,
                                        expiredOutcomes: expired, consumedCommands: consumedCommands)
        // A failed commit (a full disk, above all) stops the loop: nothing is lost, since the
        // commands are still in the inbox and a written journal replays at the next start, and
        // running on with state that is not on disk would be worse.
        // The clients waiting on the command socket are told once the batch is durable (its
        // journal synced) and its files written, without waiting for the sync after them.
        try committer.commit(batch) { [commandSocket] in commandSocket?.answer(batch.outcomeMessages) }
        if writesHeartbeat { writtenHeartbeat = heartbeat }
        pendingOutcomes.removeAll()
        pendingOutcomeIDs.removeAll()
        consumedCommands.removeAll()
    }

    // MARK: - Transfers

    /// Takes what the transfer engine reported since the last turn.
    func applyTransferEvents(now: Date) {
        for event in transferRunner.takeEvents() {
            let progress = event.progress
            if case .restarted(let reason) = event.kind {
                state.transferRestarted(event.key, reason: reason, now: now)
            } else if case .requested(let rangeStart) = event.kind {
                state.transferRequested(event.key, rangeStart: rangeStart, now: now)
            } else if let end = event.attemptEnd {
                if let response = event.response {
                    state.recordFinalResponse(event.key, statusCode: response.statusCode, headers: response.headers,
                                           bodyFile: response.bodyFile, now: now)
                }
                carryOut(state.transferEnded(event.key, end, bytesTransferred: progress.bytesTransferred,
                                             bytesExpected: progress.bytesExpected, now: now), now: now)
            } else {
                state.transferProgressed(event.key, bytesTransferred: progress.bytesTransferred,
                                         bytesExpected: progress.bytesExpected, bytesPerSecond: progress.bytesPerSecond,
                                         etag: progress.validator.etag, lastModified: progress.validator.lastModified, now: now)
            }
        }
    }

    // MARK: - Manifests, conditions, quarantine, outcomes

    func reloadManifests(now: Date) {
        state.updateCatalog(ManifestCatalog.load(from: "\(configDirectory)/apps"), now: now)
        pushSubscriptions.follow(state.catalog.manifests)
    }

    /// Takes what the push subscriptions' streams reported since the last turn.
    func applyPushSubscriptionEvents() {
        for event in pushSubscriptions.takeEvents() { state.record(event) }
    }

    func probeConditions(now: Date) {
        let (reading, sources) = Self.readConditions(probe: probe, desktop: desktop, settings: settings)
        lastProbe = now
        state.updateProbedConditions(reading.conditions, batteryPercent: reading.batteryPercent,
                                     loadAverage: reading.loadAverage, now: now)
        state.updateConditionSources(sources, now: now)
    }

    func quarantine(_ path: String, reason: String, now: Date, type: Event.Kind = .quarantined) -> Event {
        // The reason names the file (relative to the state directory) as well as what was wrong.
        let line = Quarantine(paths: paths).line(for: path, reason: reason)
        do {
            let target = try Quarantine(paths: paths).isolate(path, reason: reason, now: now)
            // The log is often a terminal: a file's name or contents quoted in the reason are escaped.
            logger.warning("quarantined \(TerminalText.escaped(line))")
            return Event(time: now, type: type, reason: line, message: "\(line); moved to \(target)")
        } catch {
            return Event(time: now, type: type, reason: line, message: "\(line); could not move it: \(error)")
        }
    }

    func queueOutcome(_ outcome: CommandOutcome, now: Date) {
        pendingOutcomes.append(outcome)
        pendingOutcomeIDs.insert(outcome.command)
        outcomeRetention.keep(outcome.command, until: now.addingTimeInterval(settings.outcomeRetentionSeconds))
    }
}
