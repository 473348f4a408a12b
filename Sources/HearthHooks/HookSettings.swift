import Foundation
public import HearthOutbound
public import HearthSupport
public import HearthTriggers

/// What every hook of a server shares: where it may post, how it retries, its clock and log.
public struct HookSettings: Sendable {
    public var addresses: OutboundAddresses
    public var schedule: RetrySchedule
    public var clock: @Sendable () -> Int64
    public var log: Log
    /// In a cluster, how often each node looks at the shared hooks (deploys and registrations made on
    /// other nodes, hooks whose node stopped) and renews the hooks it holds: well inside their lease.
    public var reconcileMilliseconds = 1000

    public init(
        addresses: OutboundAddresses, schedule: RetrySchedule = RetrySchedule(),
        clock: (@Sendable () -> Int64)? = nil, log: Log = .standardError
    ) {
        self.addresses = addresses
        self.schedule = schedule
        self.clock = clock ?? { Int64(Date().timeIntervalSince1970 * 1000) }
        self.log = log
    }
}
