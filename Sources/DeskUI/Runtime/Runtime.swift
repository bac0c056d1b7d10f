import Entitlements
import LedgerQueries
import ReceiptModel
import Synchronization

/// Runs the dashboard: reads events from a backend, reduces them, runs the effects, draws what changed,
/// and polls the ledger's change signal so another process's import shows within a second.
public final class Runtime {
    public private(set) var state: AppState
    public private(set) var theme: Theme
    public let backend: any TerminalBackend
    public let handlers: EffectHandlers
    /// How often the ledger's change signal is polled.
    public var pollMilliseconds = 500
    /// Milliseconds from each key to its frame on screen (query + reduce + render + blit), for `bench`.
    public private(set) var keyMilliseconds: [Double] = []
    /// Called after every frame (tests wait on state through it).
    public var onFrame: ((AppState) -> Void)?
    private var buffer: ScreenBuffer
    private var lastToken: Int64?
    private var lastPoll: ContinuousClock.Instant = .now
    private var baseTheme: Theme
    /// How long a key waits for the triage write it sent before the write goes on without it: a ledger that
    /// answers in time shows the outcome in the key's own frame; one that waits for a lock (another process's
    /// import holds the writers' lock for a batch, SQLite's busy timeout is 10 s) leaves the keys free meanwhile.
    public var writeGrace: Duration = .milliseconds(100)
    /// The triage writes on their way, in the order they were sent.
    private var writing: Task<Void, Never>?
    /// Where the writes' task runs (nil: the shared pool). Tests whose other work blocks threads give it threads of
    /// its own, as they take for themselves: on two cores the shared pool has two threads.
    public var writeExecutor: (any TaskExecutor)?
    /// How the key loop waits a moment (for the writes, up to ``writeGrace``): `Task.sleep` unless told otherwise.
    /// `Task.sleep` wakes through the shared pool, whatever executor the task prefers, so its wake-up waits behind the
    /// pool's queued work (in CI, a 20 ms grace took 23 s while other suites kept the pool busy): tests give a pause
    /// of their own.
    public var pause: @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }
    /// What the writes answered, for the key loop to apply.
    private let answers = Answers()
    /// How long a read of the ledger may take before the status line says so and keys are read meanwhile, to be
    /// handled after it (Q quits at once unless a key typed before it asks for a write: ``watched(screen:doing:_:)``).
    /// A server that stopped answering holds a read until its read timeout (15 s), and the keys with it.
    public var readGrace: Duration = .milliseconds(300)
    /// Events read while a slow read was on its way, handled (in order) before the terminal's next.
    private var typedAhead: [TypedAhead] = []
    /// An event read while a slow read was on its way; `heldQuit` when it is the quit the status line said waits for
    /// what was typed before it.
    private struct TypedAhead {
        var event: InputEvent
        var heldQuit = false
    }
    /// Whether the person quit while a read was on its way: the ledger's connection is then busy with it, and closing
    /// it would wait for the read (a frozen server's, for its read timeout).
    public private(set) var abandonedRead = false
    /// Whether the screen shows a state the runtime has changed since (a slow read's line, taken off when it answered).
    private var staleFrame = false
    /// Set while a poll applies what it found: the reloads it asks for read screens read before, whose empty lists
    /// are empty, not unread.
    private var reloading = false

    public init(state: AppState, theme: Theme, backend: any TerminalBackend, handlers: EffectHandlers) {
        var state = state
        let size = backend.size
        state.width = size.width
        state.height = size.height
        state.ascii = state.ascii || !backend.unicode
        self.state = state
        self.baseTheme = theme
        self.theme = theme.adapted(to: backend.colorDepth)
        self.backend = backend
        self.handlers = handlers
        buffer = ScreenBuffer(width: 0, height: 0)
    }

    /// Loads the first screen and draws it; returns when the first frame is on screen.
    public func start() async {
        backend.setMouse(state.mouse)
        // The change signal before what it guards: a commit after it (a setting, an import) is seen at the first poll.
        // (Either read failing leaves the token unknown, so the first poll reads both again.)
        let reader = handlers.reader
        guard
            let (token, setting) = await watched({ () -> (Int64?, Bool?) in
                (try? await reader.changeToken(), try? await reader.isSetReadOnly())
            })
        else { return }
        if let setting {
            lastToken = token
            await dispatch(.ledgerReadOnly(setting))
        }
        await perform(reloadEffects(state, keepSelection: false))
        draw()
    }

    /// Runs until the user quits (or `maxEvents` events when given, for tests and the bench).
    public func run(maxEvents: Int? = nil) async {
        var handled = 0
        while !state.quitting {
            if let maxEvents, handled >= maxEvents { return }
            let typed = typedAhead.isEmpty ? backend.nextEvent(timeoutMilliseconds: 50).map({ TypedAhead(event: $0) }) : typedAhead.removeFirst()
            if let typed {
                handled += 1
                // A quit said to wait for a triage key typed before it is not text for the prompt that key opened once
                // its screen was read (`5 r Q` on a queue not read yet: r asks for a note, which the judging copy, with
                // no flag to resolve, did not).
                if typed.heldQuit, let prompt = state.prompt {
                    state.message = StatusMessage(Self.heldQuitMet(prompt, typed.event), urgent: true)
                    draw()
                } else {
                    await handle(typed.event)
                }
            }
            if await applyAnswers() { draw() }
            // (Not while keys typed during a slow read wait: they come first, a quit among them.)
            if typedAhead.isEmpty { await pollChanges() }
            // (Only when no key came: a key held down is never kept waiting for it.)
            if typed == nil, typedAhead.isEmpty { await fillCustomerAccess() }
            if staleFrame { draw() }
        }
        // Quitting waits for a write still on its way, saying so; one that fails is left in `unsaved` to print
        // (``applyAnswers()``).
        if writing != nil {
            // (Over the "retrying" line of an outage too: Q seemed not to have been taken, for as long as the wait.)
            state.message = StatusMessage("saving: \(state.saving ?? "triage")… (quits when the ledger answers; Ctrl-C abandons it)", urgent: true)
            draw()
            await settle()
        }
    }

    /// The triage writes of this session that failed ("not saved: ...") and were not saved since, for the command to
    /// print once the terminal is restored: one that failed as Q was pressed, and one whose "not saved" line was on
    /// screen for a moment only (the keys typed ahead, Q among them, are read after the answer).
    public var unsaved: String? {
        let all = failedWrites.map(\.text) + abandoned
        return all.isEmpty ? nil : all.joined(separator: "; ")
    }

    /// What a quit during a slow read left undone when it was pressed twice (the first waited for it): a triage key or
    /// an export typed before it.
    private var abandoned: [String] = []

    /// Whether every write in ``unsaved`` was refused by the ledger (set read-only meanwhile, a role that may not
    /// write) rather than failed to be taken: the command then ends as a refused write does (exit 2, not 3).
    public var unsavedWereRefused: Bool { abandoned.isEmpty && !failedWrites.isEmpty && failedWrites.allSatisfy(\.refused) }

    /// The failed writes' flags not moved where they were to go since, where that was, what the status line said,
    /// and whether the ledger refused the write.
    private var failedWrites: [(flagIds: Set<String>, target: FlagStatus?, text: String, refused: Bool)] = []

    /// Waits for every triage write on its way and applies what it answered (tests, and quitting).
    public func settle() async {
        await writing?.value
        writing = nil
        _ = await applyAnswers()
    }

    /// Applies what the writes answered since the last call; true when there was something.
    private func applyAnswers() async -> Bool {
        let actions = answers.take()
        guard !actions.isEmpty else { return false }
        defer { noteInterrupt() }
        for action in actions {
            await dispatch(action)
            switch action {
            // Every write sent has answered.
            case .saving(.none): writing = nil
            case .triageFailed(_, let action, let ids, let note, _, _, let refused) where !ids.isEmpty:
                // Printed once the dashboard has ended, where `r` can offer nothing: the note itself.
                var text = state.message?.text ?? "not saved"
                if let note, !note.isEmpty { text = text.replacing("; r offers your note again", with: "; your note: \(note)") }
                // The latest try at taking flags to a status is the one said (a failure and then a refusal: refused).
                let flagIds = Set(ids)
                forgetFailed { $0 == action.target ? flagIds : [] }
                failedWrites.append((flagIds, action.target, text, refused))
            // A flag moved where the failed write was taking it (a retry, or someone else's change) is no longer
            // unsaved; one moved elsewhere (an ack after a resolve failed) still is.
            case .triaged(let changes, _):
                forgetFailed { target in Set(changes.filter { $0.to == target }.map(\.flagId)) }
            default: break
            }
        }
        return true
    }

    /// Takes out of the failed writes the flags `taken` gives for their target (no longer unsaved there), dropping a
    /// write left with none.
    private func forgetFailed(_ taken: (_ target: FlagStatus?) -> Set<String>) {
        failedWrites = failedWrites.compactMap { failed in
            let left = failed.flagIds.subtracting(taken(failed.target))
            return left.isEmpty ? nil : (left, failed.target, failed.text, failed.refused)
        }
    }

    /// Handles one input event and draws the result.
    public func handle(_ event: InputEvent) async {
        let started = ContinuousClock.now
        switch event {
        case .key(let key):
            await dispatch(.key(key))
        case .paste(let text):
            await dispatch(.paste(text))
        case .resize, .resumed:
            if let size = size(after: event) { await dispatch(.resize(width: size.width, height: size.height)) }
        }
        draw()
        if case .key = event {
            let elapsed = ContinuousClock.now - started
            keyMilliseconds.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
        }
    }

    /// The terminal's size a resize or a resume (from Ctrl-Z) gives; after a resume the whole screen is drawn again.
    private func size(after event: InputEvent) -> (width: Int, height: Int)? {
        switch event {
        case .resize(let width, let height): return (width, height)
        case .resumed:
            buffer = ScreenBuffer(width: 0, height: 0)
            return backend.size
        case .key, .paste: return nil
        }
    }

    /// Applies an action and runs the effects it asks for (and the actions they answer with).
    public func dispatch(_ action: Action) async {
        let effects = reduce(&state, action)
        await perform(effects)
    }

    private func perform(_ effects: [Effect]) async {
        var writes: [Effect] = []
        for effect in effects {
            if case .triage = effect {
                writes.append(effect)
                continue
            }
            // (Q during a slow read: what was to follow it would be read for nothing, or wait as long.)
            if state.quitting { break }
            for action in await run(effect) {
                await dispatch(action)
            }
        }
        if !writes.isEmpty { await send(writes) }
    }

    /// Sends triage writes off the key loop, one after another, and waits up to ``writeGrace`` for them: what they
    /// answer in that time is applied now, the rest by the key loop when it comes (with "saving: ..." meanwhile).
    private func send(_ writes: [Effect]) async {
        let task = Self.start(writes, after: writing, handlers: handlers, answers: answers, executor: writeExecutor)
        writing = task
        let deadline = ContinuousClock.now + writeGrace
        while !answers.settled, ContinuousClock.now < deadline {
            await pause(.milliseconds(1))
        }
        if answers.settled {
            await task.value
            _ = await applyAnswers()
            return
        }
        let described = writes.compactMap { write -> String? in
            guard case .triage(let ids, let action, _, let undo, _) = write else { return nil }
            return triageDescription(action, ids, undo: undo)
        }
        await dispatch(.saving(described.count == 1 ? described[0] : described.joined(separator: ", ")))
        noteInterrupt()
    }

    /// Gives the backend what to say if a signal ends the process now (Ctrl-C during "saving…", which the status line
    /// offers): the writes on their way, which may or may not be saved, and the failed ones ``unsaved`` holds.
    private func noteInterrupt() {
        var parts: [String] = []
        if let saving = state.saving {
            parts.append("ended while saving (\(saving)): not known to be saved; receiptdesk refunds shows each flag's status")
        }
        if let unsaved { parts.append("not saved: \(unsaved)") }
        backend.setInterruptNote(parts.isEmpty ? nil : Sanitize.text("receiptdesk: " + parts.joined(separator: "; ")))
    }

    /// Runs a read of the ledger off the key loop. Answered within ``readGrace`` (the usual case), it is as if it had
    /// run on the loop; slower (a server that stopped answering holds a read until its read timeout), the status line
    /// says the dashboard is reading and keys are read meanwhile, to be handled after the read in the order typed. A
    /// quit among them quits at once, the read left to end with the process, unless what was typed before it is
    /// something to do (``quitDecision(doing:)``): then it waits for the read and that, and a second quit quits
    /// without them, which the command says once the terminal is restored (``unsaved``).
    /// - Parameters:
    ///   - screen: a read of what the screen shows (not a poll's): while it is on its way a screen with nothing to
    ///     show says it is being read rather than that the ledger holds nothing.
    ///   - doing: what the read is for, when more than showing (an export): a quit waits for it as for a triage key.
    /// - Returns: what the read returned, or nil when the person quit while it was on its way.
    func watched<T: Sendable>(screen: Bool = true, doing: String? = nil, _ read: @escaping @Sendable () async -> T) async -> T? {
        // (Quitting: nothing is read any more, the loop's last poll among it.)
        guard !state.quitting else { return nil }
        let outcome = ReadOutcome<T>()
        Task(executorPreference: writeExecutor) { outcome.finish(await read()) }
        await outcome.wait(upTo: readGrace, executor: writeExecutor, pause: pause)
        if let value = outcome.value { return value.first }
        let reading = StatusMessage("reading the ledger… (Q quits; other keys wait for it)", urgent: true)
        let before = state.message
        var shown = reading
        state.message = reading
        state.reading = screen
        // A quit typed before this read (during the one before it) is judged now, as a quit typed during it is.
        var held = false
        if !typedAhead.isEmpty, quitNow(doing: doing, held: &held, shown: &shown) { return nil }
        draw()
        while true {
            if let value = outcome.value {
                // (Drawn by the caller with what the read answered, or by the key loop: a poll that found nothing new
                // draws nothing, and the line stayed.)
                if state.message == shown { state.message = before }
                state.reading = false
                staleFrame = true
                return value.first
            }
            guard let event = backend.nextEvent(timeoutMilliseconds: 20) else {
                await pause(.milliseconds(2))
                continue
            }
            if let size = size(after: event) {
                // The frame at the terminal's size now (a resumed terminal shows nothing until it is drawn); the rest
                // of the resize (the lists' positions kept in view) after the read, as the keys are: an action on its
                // way (G's read of the last page) counts on them.
                state.width = size.width
                state.height = size.height
                typedAhead.append(TypedAhead(event: .resize(width: size.width, height: size.height)))
                draw()
                continue
            }
            typedAhead.append(TypedAhead(event: event))
            if quitNow(doing: doing, held: &held, shown: &shown) { return nil }
            draw()
        }
    }

    /// Whether the keys typed so far during a slow read quit now (the quit taken), else the status line says what a
    /// quit waits for. `held` is whether a quit was held back during this read already: a second quits without what
    /// the first waited for, which is kept for ``unsaved`` to say.
    private func quitNow(doing: String?, held: inout Bool, shown: inout StatusMessage) -> Bool {
        switch quitDecision(doing: doing) {
        case .none:
            return false
        case .now:
            break
        case .after(let what, let secondQuit, let quitAt):
            guard held && secondQuit else {
                held = true
                typedAhead[quitAt].heldQuit = true
                shown = StatusMessage("reading the ledger… Q waits for \(what) typed before it (Q again quits without it)", urgent: true)
                state.message = shown
                return false
            }
            abandoned.append("\(what) was not done: Q again quit before the ledger answered")
            noteInterrupt()
        }
        if state.message == shown { state.message = nil }
        state.reading = false
        state.quitting = true
        abandonedRead = true
        return true
    }

    /// What the status line says when a quit said to wait for the keys typed before it meets a prompt one of them
    /// opened: the quit is not typed into it, and what the prompt needs is said.
    static func heldQuitMet(_ prompt: Prompt, _ event: InputEvent) -> String {
        let key = if case .key(let key) = event { key.label } else { "Q" }
        if case .note(let ids) = prompt.kind {
            let flags = ids.count == 1 ? "the flag" : "\(ids.count) flags"
            return "resolving \(flags) asks for a note: \(key) was not typed into it (type why, Enter resolves, Esc cancels; then \(key) quits)"
        }
        return "\(key) was not typed into the prompt (Esc closes it; then \(key) quits)"
    }

    /// The commands whose key holds back a quit typed after it during a slow read.
    private static let triageKeys: Set<Command> = [.acknowledge, .resolve, .reopen]

    /// What a quit among the keys typed during a slow read comes to.
    private enum QuitDecision {
        /// No quit is typed (a Q typed into a prompt is text).
        case none
        /// The keys before it are all reads (or nothing): it quits at once.
        case now
        /// It waits for what the keys before it ask for (an acknowledgement, an export); whether the last key typed
        /// is a quit too (the second); where the first quit is among the keys typed.
        case after(String, secondQuit: Bool, quitAt: Int)
    }

    /// Reduces the keys typed during a slow read on a copy of the state (their reads not run) to see whether they
    /// quit, and what a quit would drop: a triage key (`a`, `r`, `o`) or a key asking for more than a read (a triage
    /// write, an export, a theme). The copy has not read what the keys' reads would answer, so a triage key counts
    /// whatever it does on the copy (on a queue not yet read, `a` finds no flag there, and would find one).
    private func quitDecision(doing: String?) -> QuitDecision {
        var copy = state
        var what = doing
        // The state the first quit was typed on: a later key that quits there too is the second quit (Q, or q on a
        // top screen).
        var beforeQuit: AppState?
        var quitAt = 0
        for (index, event) in typedAhead.map(\.event).enumerated() {
            let action: Action
            switch event {
            case .key(let key):
                if let beforeQuit {
                    var again = beforeQuit
                    _ = reduce(&again, .key(key))
                    if again.quitting, index == typedAhead.count - 1, let what { return .after(what, secondQuit: true, quitAt: quitAt) }
                    continue
                }
                // A triage key where the keys reach the screen (no prompt, help, raw view or too-small notice) counts
                // whatever it does on the copy: the queue or customer it would act on may be one the copy has not read.
                // (Undo, when there is something to undo, and marks ask for no read: the copy's effects say.)
                if copy.prompt == nil, !copy.showHelp, copy.rawView == nil, copy.fitsTerminal,
                    let command = copy.keymap.command(for: key, on: copy.screen, readOnly: copy.readOnly),
                    Self.triageKeys.contains(command)
                {
                    what = what ?? "the triage"
                }
                action = .key(key)
            case .paste(let text):
                if beforeQuit != nil { continue }
                action = .paste(text)
            case .resize(let width, let height):
                if beforeQuit != nil { continue }
                action = .resize(width: width, height: height)
            case .resumed: continue
            }
            let before = copy
            for effect in reduce(&copy, action) {
                switch effect {
                case .triage: what = what ?? "the triage"
                case .export, .exportQueue: what = what ?? "the export"
                case .setTheme: what = what ?? "the theme"
                default: break
                }
            }
            if copy.quitting {
                beforeQuit = before
                quitAt = index
            }
        }
        guard beforeQuit != nil else { return .none }
        guard let what else { return .now }
        return .after(what, secondQuit: false, quitAt: quitAt)
    }

    /// The task that runs `writes` after `previous`, leaving what they answer in `answers`.
    private static func start(
        _ writes: [Effect], after previous: Task<Void, Never>?, handlers: EffectHandlers, answers: Answers,
        executor: (any TaskExecutor)?
    ) -> Task<Void, Never> {
        Task(executorPreference: executor) {
            await previous?.value
            for write in writes { answers.append(await triage(write, handlers: handlers)) }
            answers.append([.saving(nil)])
        }
    }

    /// Runs one triage write; returns the actions that report its outcome.
    private static func triage(_ write: Effect, handlers: EffectHandlers) async -> [Action] {
        guard case .triage(let ids, let action, let note, let undo, let expecting) = write else { return [] }
        do {
            return [.triaged(try await handlers.triage(ids, action, note, expecting), undo: undo)]
        } catch let error as TriageInterrupted {
            let written = Set(error.written.map(\.flagId))
            return [
                .triaged(error.written, undo: undo),
                .triageFailed(
                    error.reason, action: action, flagIds: ids.filter { !written.contains($0) }, note: note, undo: undo,
                    saved: error.written.count, refused: error.refused),
            ]
        } catch let error as TriageRefused {
            return [.triageFailed(describe(error), action: action, flagIds: ids, note: note, undo: undo, refused: true)]
        } catch {
            return [.triageFailed(describe(error), action: action, flagIds: ids, note: note, undo: undo)]
        }
    }

    private func draw() {
        staleFrame = false
        render(state, theme: theme, into: &buffer)
        backend.draw(buffer)
        onFrame?(state)
    }

    /// Computes the access of a few customers on the Customers list's screen by the entitlement engine (each
    /// customer's records read and judged at the instant, as their own screen does), and draws it. Run when no key
    /// waits, a few customers at a time, so a key typed meanwhile waits for no more than a few reads.
    public func fillCustomerAccess() async {
        let ids = state.customersNeedingAccess(limit: Self.accessBatch)
        guard !ids.isEmpty, let access = await judgeAccess(ids, budget: accessBudget) else { return }
        await dispatch(.customerAccessLoaded(access))
        draw()
    }

    /// The access of these customers at the instant, each customer's records read and judged by the entitlement
    /// engine, in one read off the key loop (``watched(screen:doing:_:)``); nil when quitting. With a `budget`, the read
    /// ends once it is spent (its customer judged first): a customer with thousands of transactions takes tens of
    /// milliseconds, and a key typed meanwhile waits. One that cannot be read (merged away since, the ledger gone) keeps
    /// what the list's figures say, and the read ends: a ledger that does not answer is not asked again per customer.
    private func judgeAccess(_ ids: [Int64], budget: Duration?, doing: String? = nil) async -> [Int64: ListedAccess]? {
        let (instant, generation, catalog, reader) = (state.instant, state.customerAccessGeneration, state.catalog, handlers.reader)
        let live = state.asOf == nil
        return await watched(screen: false, doing: doing) { () -> [Int64: ListedAccess] in
            var out: [Int64: ListedAccess] = [:]
            let started = ContinuousClock.now
            for id in ids {
                do {
                    let records = try await reader.customerRecords(id)
                    out[id] = ListedAccess(
                        records.history.entitlements(at: instant, catalog: catalog), instant: instant, live: live, generation: generation)
                } catch {
                    out[id] = ListedAccess(unreadAt: instant, live: live, generation: generation)
                    break
                }
                if let budget, ContinuousClock.now - started >= budget { break }
            }
            return out
        }
    }

    /// How many customers' access one idle turn of the loop computes at most.
    public static let accessBatch = 8
    /// The time after which an idle turn computes no more customers' access (it ends its customer first).
    public var accessBudget = Duration.milliseconds(8)

    func pollChanges() async {
        let now = ContinuousClock.now
        guard now - lastPoll >= .milliseconds(pollMilliseconds) else { return }
        lastPoll = now
        // Setting the ledger read-only or lifting it moves the token: the setting is read when it moved, and said
        // after what the poll says besides (a recovery's line would cover it).
        let reader = handlers.reader
        let known = lastToken
        let unavailable = state.unavailable != nil
        guard
            let polled = await watched(screen: false, { () -> Result<(Int64, Bool?), any Error> in
                do {
                    let token = try await reader.changeToken()
                    return .success((token, unavailable || token != known ? try await reader.isSetReadOnly() : nil))
                } catch {
                    return .failure(error)
                }
            })
        else { return }
        reloading = true
        defer { reloading = false }
        do {
            let (token, setting) = try polled.get()
            // A new minute on the wall clock moves "now", which reads the screen again: another process's commit
            // (the token read first) is in that read too, so one read serves both.
            let wall = handlers.clock?()
            let newMinute = wall.map { $0.millisecondsSince1970 / 60_000 != state.now.millisecondsSince1970 / 60_000 } ?? false
            if state.unavailable != nil {
                lastToken = token
                await dispatch(.recovered(now: newMinute ? wall : nil))
                draw()
            } else if let wall, newMinute {
                let changed = token != lastToken
                lastToken = token
                // (Time travel pins the instant: then the clock reads nothing again, and a commit still must.)
                let pinned = state.asOf != nil
                await dispatch(.clockAdvanced(wall))
                if pinned && changed { await dispatch(.ledgerChanged) }
                draw()
            } else if token != lastToken {
                lastToken = token
                await dispatch(.ledgerChanged)
                draw()
            }
            if let setting, setting != state.ledgerReadOnly {
                await dispatch(.ledgerReadOnly(setting))
                draw()
            }
        } catch {
            if state.unavailable == nil {
                await dispatch(.failed(describe(error), unavailable: true))
                draw()
            }
        }
    }

    /// Every flag `query` finds, a page of its limit at a time.
    private static func everyPage(of query: FlagQuery, _ reader: any LedgerReading) async -> Result<[RefundFlag], any Error> {
        var all: [RefundFlag] = []
        do {
            _ = try await reader.forEachFlagPage(query, pageSize: query.limit) { all += $0 }
            return .success(all)
        } catch {
            return .failure(error)
        }
    }

    /// Runs one effect; returns the actions that report its outcome. The ledger's reads run off the key loop
    /// (``watched(screen:doing:_:)``).
    func run(_ effect: Effect) async -> [Action] {
        if Self.isRead(effect) {
            let handlers = handlers
            return await watched(screen: !reloading) { await Self.read(effect, handlers) } ?? []
        }
        do {
            switch effect {
            case .triage:
                return await Self.triage(effect, handlers: handlers)
            case .parseInstant(let text):
                let instant: Timestamp?
                do {
                    instant = try handlers.parseInstant(text)
                } catch {
                    return [.instantRejected(text: text, reason: describe(error))]
                }
                guard let instant else {
                    return [
                        .instantRejected(
                            text: text, reason: "not an instant: \(text) (2025-03-01, 2025-03-01 12:00 UTC, 2025-03-01T12:00+01:00, or now)")
                    ]
                }
                return [.instantParsed(instant)]
            case .copy(let text):
                return backend.copyToClipboard(text)
                    ? [] : [.message(StatusMessage("cannot copy: the output is not a terminal (or the text is too long)", kind: .error))]
            case .exportCustomers(let path, let saying):
                // Every loaded customer's access as their screen says it (the list judges those on screen only, and a
                // row not judged would be the list's figures: an expiry, no grace period, nothing owned).
                let name = path.split(separator: "/").last.map(String.init) ?? path
                let ids = state.customersNeedingAccess(limit: .max, onScreenOnly: false)
                guard let access = await judgeAccess(ids, budget: nil, doing: "the export to \(name)") else { return [] }
                await dispatch(.customerAccessLoaded(access))
                // (A customer that could not be read would be written with the list's figures, among rows judged: no file.)
                if let unread = state.customerPage.rows.first(where: { state.customerAccess[$0.id]?.state == nil })?.id {
                    return [.message(StatusMessage("not exported: C\(unread) could not be read (the ledger may have changed: try again)", kind: .error))]
                }
                return [try write(exportCSV(state), to: path, saying: saying)]
            case .exportQueue(let path):
                // Every page of the queue's query (its `/` filter the ledger's), read off the key loop as the
                // screens' reads are, then the same CSV as the view's.
                let query = flagQuery(state, limit: 1000)
                let reader = handlers.reader
                // (The file's name only: the status line has room for the hint after it.)
                let name = path.split(separator: "/").last.map(String.init) ?? path
                guard let paged = await watched(screen: false, doing: "the export to \(name)", { await Self.everyPage(of: query, reader) })
                else { return [] }
                var whole = state
                whole.flags = try paged.get()
                whole.flagsReadFilter = query.text
                whole.prompt = nil
                // (Every page, and only the flags its filters keep: said, so that a filtered queue's export is not
                // taken for all of it.)
                return [try write(exportCSV(whole), to: path, saying: " (every page of the queue: \(queueScope(state)))")]
            case .export(let path, let contents, let saying):
                return [try write(contents, to: path, saying: saying)]
            case .setTheme(let name):
                baseTheme = try handlers.loadTheme(name)
                theme = baseTheme.adapted(to: backend.colorDepth)
                return [.themeChanged(name)]
            case .setMouse(let on):
                backend.setMouse(on)
                return []
            case .quit:
                return []
            case .loadOverview, .loadCustomers, .openCustomer, .loadCustomer, .loadTransaction, .loadFlags, .loadImports, .loadMoreImports,
                .loadRaw, .loadDayRefunds:
                // (Reads, run above.)
                return []
            }
        } catch {
            return [.failed(describe(error), unavailable: false)]
        }
    }
}

extension Runtime {
    /// Whether an effect is a read of the ledger (run by ``read(_:_:)``, off the key loop).
    static func isRead(_ effect: Effect) -> Bool {
        switch effect {
        case .loadOverview, .loadCustomers, .openCustomer, .loadCustomer, .loadTransaction, .loadFlags, .loadImports, .loadMoreImports,
            .loadRaw, .loadDayRefunds:
            true
        default: false
        }
    }

    /// Runs a read of the ledger; returns the actions that report its outcome.
    static func read(_ effect: Effect, _ handlers: EffectHandlers) async -> [Action] {
        do {
            switch effect {
            case .loadOverview(let instant, let environment, let pinned):
                return [.overviewLoaded(try await handlers.overview(asOf: instant, environment: environment, pinned: pinned))]
            case .loadCustomers(let query, let append):
                return [.customersLoaded(try await handlers.reader.customers(query), append: append, direction: query.direction)]
            case .openCustomer(let text):
                guard let found = try await handlers.reader.customerId(pasted: text) else { return [.customerNotFound(text)] }
                let loaded = Action.customerLoaded(try await handlers.customer(found.customer))
                // Found with the punctuation around the pasted id taken off: say by which id; and who else the text
                // names (a message with two ids), or the second customer is never seen.
                if let others = found.othersSaid {
                    return [loaded, .message(StatusMessage("found by \(found.matched); \(others)", kind: .error))]
                }
                // (And a display id's customer merged since into this one: both said, as `lookup` says them.)
                let said = [
                    found.matched == text ? nil : "found by \(found.matched) (pasted as \(text.trimmingWhitespace()))", found.mergedSaid,
                ].compactMap { $0 }
                return said.isEmpty ? [loaded] : [loaded, .message(StatusMessage(said.joined(separator: "; ")))]
            case .loadCustomer(let id):
                return [.customerLoaded(try await handlers.customer(id))]
            case .loadTransaction(let id):
                return [.transactionLoaded(try await handlers.reader.transaction(id), id: id)]
            case .loadFlags(let query, let append) where query.direction == .backward:
                let flags = try await handlers.reader.flags(query)
                let previous = flags.count == query.limit ? flags.first.map(FlagCursor.init(after:)) : nil
                let triage = try await handlers.reader.latestTriage(flagIds: flags.map(\.id))
                let total = append ? [] : [Action.flagTotalLoaded(try await total(of: query, read: flags, handlers))]
                return [.flagsBeforeLoaded(flags, previous: previous, append: append, filter: query.text), .flagTriageLoaded(triage)] + total
            case .loadFlags(let query, let append):
                let flags = try await handlers.reader.flags(query)
                let next = flags.count == query.limit ? flags.last.map(FlagCursor.init(after:)) : nil
                let triage = try await handlers.reader.latestTriage(flagIds: flags.map(\.id))
                // The whole queue's count with its first page (a page read after it does not change it).
                let total = append ? [] : [Action.flagTotalLoaded(try await total(of: query, read: flags, handlers))]
                return [.flagsLoaded(flags, next: next, append: append, filter: query.text), .flagTriageLoaded(triage)] + total
            case .loadImports:
                let reader = handlers.reader
                let sources = try await reader.sources(after: nil, limit: AppState.importsPageSizes[0])
                let rejected = try await reader.rejectedRecords(after: nil, limit: AppState.importsPageSizes[1])
                return [.importsLoaded(sources: sources, rejected: rejected)]
            case .loadMoreImports(let sourcesAfter, let rejectedAfter):
                let reader = handlers.reader
                var sources: [SourceSummary] = []
                var rejected: [RejectedRecord] = []
                if let sourcesAfter { sources = try await reader.sources(after: sourcesAfter, limit: AppState.importsPageSizes[0]) }
                if let rejectedAfter { rejected = try await reader.rejectedRecords(after: rejectedAfter, limit: AppState.importsPageSizes[1]) }
                return [.importsLoaded(sources: sources, rejected: rejected, append: true)]
            case .loadRaw(let id):
                return [.rawLoaded(id: id, bytes: try await handlers.reader.rejectedRaw(id))]
            case .loadDayRefunds(let day, let until, let environment):
                let refunds = try await handlers.reader.refunds(onDayOf: day, until: until, environment: environment, limit: DayRefundsList.limit)
                return [.dayRefundsLoaded(day: day, refunds)]
            default:
                return []
            }
        } catch {
            return [.readFailed(describe(error))]
        }
    }

    /// How many flags a query matches: those its first page read when it held them all (a sparse `/` filter reads
    /// every flag of the queue once, not twice), else the ledger's count.
    private static func total(of query: FlagQuery, read flags: [RefundFlag], _ handlers: EffectHandlers) async throws -> Int {
        if query.after == nil, flags.count < query.limit { return flags.count }
        return try await handlers.reader.flagCount(query)
    }

    /// Writes an export's CSV and says how many rows it holds (its header and column names aside).
    func write(_ contents: String, to path: String, saying what: String) throws -> Action {
        // A file there already is replaced, as a shell's > does: said, so that it is not a surprise.
        let replaced = try handlers.writeFile(path, contents) ? " (replacing the file there)" : ""
        let rows = contents.split(separator: "\n").count - 2
        return .message(StatusMessage("exported \(Format.counted(rows, "row"))\(what) to \(path)\(replaced)"))
    }
}

/// An error as one line for the message bar.
func describe(_ error: any Error) -> String {
    let text = "\(error)"
    return text.count > 300 ? String(text.prefix(300)) + "…" : text
}

/// What a read off the key loop returned, handed to the key loop, which waits for it a moment (``Runtime/watched(screen:doing:_:)``).
final class ReadOutcome<T: Sendable>: Sendable {
    private struct Inner: Sendable {
        /// The read's value once it has one (an array of one: `T` may itself be an optional).
        var value: [T]?
        var waiter: CheckedContinuation<Void, Never>?
        var timer: Task<Void, Never>?
    }
    private let inner = Mutex(Inner())

    /// The value, as an array of one, once the read has returned.
    var value: [T]? { inner.withLock { $0.value } }

    func finish(_ value: T) {
        let (waiter, timer) = inner.withLock { inner in
            inner.value = [value]
            defer { (inner.waiter, inner.timer) = (nil, nil) }
            return (inner.waiter, inner.timer)
        }
        timer?.cancel()
        waiter?.resume()
    }

    /// Returns when the read has returned or `limit` has passed, whichever is first. (The time is kept by `pause` on
    /// `executor`, as the runtime's other waits are: tests give both, since `Task.sleep` wakes through the shared pool,
    /// which other suites' blocking work can hold for seconds.)
    func wait(upTo limit: Duration, executor: (any TaskExecutor)?, pause: @escaping @Sendable (Duration) async -> Void) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let waiting = inner.withLock { inner -> Bool in
                guard inner.value == nil else { return false }
                inner.waiter = waiter
                inner.timer = Task(executorPreference: executor) { [self] in
                    await pause(limit)
                    self.giveUpWaiting()
                }
                return true
            }
            if !waiting { waiter.resume() }
        }
    }

    private func giveUpWaiting() {
        let waiter = inner.withLock { inner in
            defer { inner.waiter = nil }
            return inner.waiter
        }
        waiter?.resume()
    }
}

/// What the triage writes answered, handed from their task to the key loop.
final class Answers: Sendable {
    private let actions = Mutex<[Action]>([])

    func append(_ more: [Action]) { actions.withLock { $0 += more } }

    func take() -> [Action] { actions.withLock { taken in defer { taken = [] }; return taken } }

    /// Whether every write sent so far has answered (the last write's task ends with `.saving(nil)`).
    var settled: Bool {
        actions.withLock { $0.contains { if case .saving(nil) = $0 { true } else { false } } }
    }
}
