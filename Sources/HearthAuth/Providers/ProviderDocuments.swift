import Foundation
import HearthOutbound
import HearthProtocol

/// Why a provider's keys or discovery document could not be had: the sign-in fails with
/// `INVALID_IDP_RESPONSE` saying so, at once while the failure is recent.
struct ProviderFetchFailure: Error, Equatable, CustomStringConvertible {
    let description: String
}

/// Documents fetched from providers (key sets, OpenID discovery documents), by URL, kept as long as the
/// provider's `Cache-Control: max-age` says (clamped to ServerLimits' bounds). One fetch per URL at a
/// time: callers that need the same document wait for that fetch, up to its timeout, instead of
/// starting their own. A failed fetch is remembered for `providerFetchFailureBackoffSeconds`, during
/// which callers fail at once. Thread-safe; called on the auth queue, never the event loop.
final class ProviderDocuments<Document: Sendable>: @unchecked Sendable {  // `entries` only under `condition`
    private struct Entry {
        var document: Document?
        var fetchedAt = -Double.infinity
        var expiresAt = -Double.infinity
        var failure: (reason: String, at: Double)?
        var fetching = false
    }

    private let fetcher: any HTTPFetching
    private let parse: @Sendable ([UInt8]) throws -> Document
    /// Monotonic seconds.
    private let clock: @Sendable () -> Double
    private let condition = NSCondition()
    private var entries: [String: Entry] = [:]
    private var fetches = 0
    private var lookups = 0

    /// `clock` is in seconds; only differences between its readings matter.
    init(fetcher: any HTTPFetching, clock: @escaping @Sendable () -> Double, parse: @escaping @Sendable ([UInt8]) throws -> Document) {
        self.fetcher = fetcher
        self.clock = clock
        self.parse = parse
    }

    /// The document at `url`: cached while fresh; with `refresh`, fetched again unless the cached one
    /// is younger than `providerKeysRefetchIntervalSeconds` (a token naming an unknown key).
    func document(at url: String, refresh: Bool = false) throws(ProviderFetchFailure) -> Document {
        condition.lock()
        lookups += 1
        let deadline = clock() + Double(ServerLimits.providerFetchTotalSeconds + 1)
        while true {
            let now = clock()
            var entry = entries[url] ?? Entry()
            if let document = entry.document {
                let young = now - entry.fetchedAt < Double(ServerLimits.providerKeysRefetchIntervalSeconds)
                if now < entry.expiresAt && (!refresh || young) {
                    condition.unlock()
                    return document
                }
            }
            if let failure = entry.failure, now - failure.at < Double(ServerLimits.providerFetchFailureBackoffSeconds) {
                condition.unlock()
                throw ProviderFetchFailure(description: failure.reason)
            }
            if entry.fetching {
                guard now < deadline else {
                    condition.unlock()
                    throw ProviderFetchFailure(description: "\(url) is still being fetched for another sign-in")
                }
                _ = condition.wait(until: Date(timeIntervalSinceNow: max(0.01, deadline - now)))
                continue
            }
            entry.fetching = true
            entries[url] = entry
            fetches += 1
            condition.unlock()
            let outcome = fetch(url)
            condition.lock()
            entry = entries[url] ?? Entry()
            entry.fetching = false
            let finished = clock()
            switch outcome {
            case .success(let (document, maxAge)):
                entry.document = document
                entry.fetchedAt = finished
                entry.expiresAt = finished + maxAge
                entry.failure = nil
            case .failure(let failure):
                entry.failure = (failure.description, finished)
            }
            entries[url] = entry
            condition.broadcast()
            condition.unlock()
            return try outcome.map(\.0).get()
        }
    }

    /// Documents asked for and fetches made: the benchmark's hit rate, and tests that count requests.
    var statistics: (lookups: Int, fetches: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (lookups, fetches)
    }

    /// Forgets every document (an admin changed a provider's configuration).
    func clear() {
        condition.lock()
        entries = entries.filter { $0.value.fetching }
        condition.unlock()
    }

    private func fetch(_ url: String) -> Result<(Document, Double), ProviderFetchFailure> {
        let response: OutboundResponse
        do {
            response = try fetcher.fetch(OutboundRequest(url: url, headers: [("Accept", "application/json")]))
        } catch {
            return .failure(ProviderFetchFailure(description: error.description))
        }
        guard response.status == 200 else {
            return .failure(ProviderFetchFailure(description: "\(url) answered HTTP \(response.status)"))
        }
        do {
            return .success((try parse(response.body), Self.maxAge(response.headers["cache-control"])))
        } catch {
            return .failure(ProviderFetchFailure(description: "\(url): \(error)"))
        }
    }

    /// Seconds to keep a document: `max-age` within the limits' bounds, the default without one.
    static func maxAge(_ cacheControl: String?) -> Double {
        let bounds = ServerLimits.providerKeysMaxAgeMinSeconds...ServerLimits.providerKeysMaxAgeMaxSeconds
        for directive in (cacheControl ?? "").split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if parts.count == 2, parts[0] == "max-age", let seconds = Int(parts[1]), seconds >= 0 {
                return Double(min(max(seconds, bounds.lowerBound), bounds.upperBound))
            }
        }
        return Double(ServerLimits.providerKeysMaxAgeDefaultSeconds)
    }
}
