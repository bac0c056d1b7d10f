import Foundation

/// A path given where no shell expands it (`sqlite:~/ledger.sqlite`, the dashboard's `:export csv ~/queue.csv` and
/// `:theme ~/mine.toml`) with a leading `~` as the home directory: `$HOME`, else the account's.
func expandingHome(_ path: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    guard path == "~" || path.hasPrefix("~/") else { return path }
    return (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()) + path.dropFirst()
}
