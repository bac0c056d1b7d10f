import Foundation
import Testing

/// Runs every test of a suite on threads of its own instead of Swift concurrency's shared pool.
///
/// The shared pool has one thread per core, two on the CI machine. A test that waits for a child
/// process, a tmux pane or a PostgreSQL server holds one of them for as long as it waits, and two such
/// tests stall every other test of the run: a 1 s connect timeout was measured at 43 s that way, and a
/// reader polling an import never ran before the import ended. Under this trait a test's jobs each get
/// a thread of their own (the test is still one task, so `#expect` and task locals work as anywhere
/// else), and waiting costs a thread nobody else needs.
struct OwnThreads: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> OwnThreads? {
        testCase == nil ? nil : self
    }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OwnThreads {
    /// Each job of the test on a thread of its own: for tests that block while they wait.
    static var ownThreads: Self { OwnThreads() }
}

/// A task executor that starts a thread for every job it is given; the thread ends with the job.
final class ThreadPerJobExecutor: TaskExecutor {
    static let shared = ThreadPerJobExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { job.runSynchronously(on: executor) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// Waits `duration` by blocking the calling thread. Under `.ownThreads` the thread is the job's own; and unlike
/// `Task.sleep`, whose wake-up goes through the shared pool whatever executor the task prefers, it does not wait for
/// the pool's threads while other suites keep them busy (a 1 ms sleep was measured at 4.5 s behind 5 s of CPU-bound
/// jobs on the pool; in CI a key's 20 ms grace took 23 s, and a 20 ms poll let a whole import pass unseen).
func pause(for duration: Duration) {
    let (seconds, attoseconds) = duration.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}
