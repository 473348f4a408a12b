import HearthProtocol

/// One entry of the server's route table: which requests it takes, and what answers them. A route that
/// throws is answered with the error in Firebase's shape (``RESTResponses/error(_:)``).
struct Route {
    /// What the route serves, as tests and docs/ARCHITECTURE.md name it: "auth", "console", "long-poll"…
    let name: String
    let matches: (HTTPRequest) -> Bool
    let respond: (HTTPRequest, any HTTPResponder) throws(RESTError) -> Void
}

/// The server's routes in the order they are tried; the first that matches answers (as Hummingbird's
/// Router, with matchers instead of a trie: there are eight routes, and most requests take the first
/// few). The database's REST route matches everything, so it comes last. Built once, by
/// ``DatabaseServer``; read on the loop thread.
struct RouteTable {
    let routes: [Route]

    init(_ routes: [Route]) { self.routes = routes }

    /// The route that answers `request`; nil only when no route matches (a table without a catch-all).
    func route(for request: HTTPRequest) -> Route? {
        for route in routes where route.matches(request) { return route }
        return nil
    }

    var names: [String] { routes.map(\.name) }
}
