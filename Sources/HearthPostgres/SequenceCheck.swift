/// What the namespace's last sequence in `hearth_changes`, read on a new connection, says about a commit
/// whose answer was lost (the connection broke or timed out after it was sent). Decided here, acted on by
/// `PostgresWriter`.
///
///     SequenceCheck(known: 41, found: 42, inDoubt: 42)   // .landed: the commit is stored
///     SequenceCheck(known: 41, found: 41, inDoubt: 42)   // .notLanded: safe to send it again
enum SequenceCheck: Equatable {
    /// Nothing was in doubt and the sequence is where this engine left it.
    case unchanged
    /// The commit in doubt is stored.
    case landed
    /// The commit in doubt is not stored, and nothing else was committed.
    case notLanded
    /// The sequence moved elsewhere: another writer committed to the namespace (or it was reset), so
    /// whether the commit in doubt is among its commits cannot be told.
    case movedOn

    /// - Parameters:
    ///   - known: the last sequence this engine committed or read.
    ///   - found: the last sequence stored now.
    ///   - inDoubt: the sequence of the commit whose answer was lost, if any (`known + 1`).
    init(known: Int64, found: Int64, inDoubt: Int64?) {
        switch inDoubt {
        case let sequence?:
            if found == sequence {
                self = .landed
            } else if found == known {
                self = .notLanded
            } else {
                self = .movedOn
            }
        case nil:
            self = found == known ? .unchanged : .movedOn
        }
    }
}
