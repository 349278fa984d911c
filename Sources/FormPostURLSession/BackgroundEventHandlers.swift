import Synchronization

/// The completion handlers the system hands in for background sessions' events
/// (`application(_:handleEventsForBackgroundURLSession:completionHandler:)`), kept on the
/// main actor — where they come from and where they are called — under a number that
/// ``BackgroundSessionLedger`` names them by.
enum BackgroundEventHandlers {
    @MainActor private static var kept: [Int: () -> Void] = [:]
    private static let lastNumber = Atomic<Int>(0)

    /// Keeps `handler`; its number.
    @MainActor static func keep(_ handler: @escaping () -> Void) -> Int {
        let number = lastNumber.add(1, ordering: .relaxed).newValue
        kept[number] = handler
        return number
    }

    /// Calls the handlers numbered `numbers` (each once), on the main actor, after the
    /// caller's turn there.
    static func call(_ numbers: [Int]) {
        guard !numbers.isEmpty else { return }
        Task { @MainActor in
            for number in numbers { kept.removeValue(forKey: number)?() }
        }
    }
}
