import FoundationEssentials
import TaskState

extension SchedulerState {
    /// A running process of `appID` takes the tasks it registered handlers for as they come due.
    /// One process per app: a newer one replaces the older.
    mutating func attach(app appID: Identifier, pid: Int32, identifiers: [Identifier], acceptsPushes: Bool = false,
                         acceptsVoIPPushes: Bool = false, command: String?, now: Date) -> Result<String, SchedulerError> {
        guard let manifest = catalog.manifests[appID] else {
            return .failure(.unknownApp("app \(appID) has no usable manifest"))
        }
        guard pid > 0 else { return .failure(.invalidCommand("attach needs the pid of the app's process")) }
        let foreign = identifiers.filter { !manifest.permittedIdentifiers.contains($0) }
        guard foreign.isEmpty else {
            let list = foreign.map(\.rawValue).joined(separator: ", ")
            return .failure(.notPermitted("\(list) \(foreign.count == 1 ? "is" : "are") not in \(appID)'s permittedIdentifiers"))
        }
        var record = app(appID)
        let replaced = record.attachedProcess.flatMap { $0.pid == pid ? nil : $0.pid }
        // VoIP pushes need the same manifest mode as background pushes.
        let pushMode = manifest.backgroundModes.contains(.remoteNotification)
        let takesPushes = acceptsPushes && pushMode
        let takesVoIP = acceptsVoIPPushes && pushMode
        record.attachedProcess = AttachedProcess(pid: pid, identifiers: Array(Set(identifiers)).sorted(),
                                                 acceptsPushes: takesPushes ? true : nil,
                                                 acceptsVoIPPushes: takesVoIP ? true : nil, attachedAt: now)
        setApp(record)
        var handled = identifiers.map(\.rawValue).sorted()
        if takesPushes { handled.append("pushes") }
        if takesVoIP { handled.append("VoIP pushes") }
        let handles = handled.isEmpty ? "no identifiers" : handled.joined(separator: ", ")
        let instead = replaced.map { " instead of pid \($0)" } ?? ""
        self.record(Event(time: now, type: .attached, app: appID, pid: pid, command: command,
                          message: "\(appID): pid \(pid) attached\(instead); due tasks go to it (\(handles))"))
        return .success("pid \(pid) attached to \(appID)")
    }

    /// The process is going away and takes no more tasks; those it carries run on.
    mutating func detach(app appID: Identifier, pid: Int32, command: String?, now: Date) -> String {
        guard releaseAttachment(of: appID, pid: pid, reason: "detached", command: command, now: now) else {
            return "pid \(pid) was not attached to \(appID)"
        }
        return "pid \(pid) detached from \(appID)"
    }

    /// Forgets the attachment of `appID` if it is `pid`'s. Returns whether there was one.
    @discardableResult
    public mutating func releaseAttachment(of appID: Identifier, pid: Int32, reason: String, command: String? = nil,
                                           now: Date) -> Bool {
        guard var record = apps[appID], record.attachedProcess?.pid == pid else { return false }
        record.attachedProcess = nil
        setApp(record)
        let why = reason == "detached" ? "detached" : "is gone (\(reason))"
        self.record(Event(time: now, type: .detached, app: appID, pid: pid, command: command, reason: reason,
                          message: "\(appID): pid \(pid) \(why); due tasks start a new process"))
        return true
    }

    /// Records who the attached process is (its start time and whether it leads its own group),
    /// learnt by the runtime after the command was applied.
    public mutating func recordAttachmentIdentity(of appID: Identifier, pid: Int32, startTicks: UInt64?, processGroup: Int32?) {
        guard var record = apps[appID], var attached = record.attachedProcess, attached.pid == pid else { return }
        attached.processStartTicks = startTicks
        attached.processGroup = processGroup
        record.attachedProcess = attached
        setApp(record)
    }

    /// The live process that takes all of `identifiers` of `appID`, if one is attached.
    ///
    /// Not while the process has a task in its grace period: it may be killed any moment, and a
    /// task handed to it would die with it.
    func handOverTarget(app appID: Identifier, identifiers: [Identifier]) -> AttachedProcess? {
        guard let attached = apps[appID]?.attachedProcess, attached.handles(identifiers),
              !tasks.values.contains(where: { $0.pid == attached.pid && $0.state == .expiring }) else { return nil }
        return attached
    }

    /// After a scheduler restart: attachments whose process is gone are released.
    public mutating func adoptAttachments(now: Date, isAlive: (AttachedProcess) -> Bool) {
        for record in appsAttached.sorted().compactMap({ apps[$0] }) {
            guard let attached = record.attachedProcess, !isAlive(attached) else { continue }
            releaseAttachment(of: record.id, pid: attached.pid, reason: "gone after a scheduler restart", now: now)
        }
    }

    /// Attachments of processes that just ended.
    mutating func releaseAttachments(ofExited pid: Int32, status: String, now: Date) {
        for record in appsAttached.sorted().compactMap({ apps[$0] }) where record.attachedProcess?.pid == pid {
            releaseAttachment(of: record.id, pid: pid, reason: status, now: now)
        }
    }

    /// The attached processes, by pid, for the runtime to watch.
    public var attachedPIDs: Set<Int32> { Set(appsAttached.compactMap { apps[$0]?.attachedProcess?.pid }) }
}
