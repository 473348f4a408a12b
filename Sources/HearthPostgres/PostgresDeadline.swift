/// How long a connection's waits may last: until a fixed moment (a commit's whole budget), or until
/// PostgreSQL has been silent for a while (long operations, which stream).
enum PostgresDeadline {
    case at(ContinuousClock.Instant)
    case afterSilence(Duration)

    func limit() -> ContinuousClock.Instant {
        switch self {
        case .at(let instant): return instant
        case .afterSilence(let duration): return .now + duration
        }
    }
}
