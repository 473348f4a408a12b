import Foundation
public import HearthClient
import HearthCore
import HearthSupport
import HearthTriggers

/// Server-side logic on a Hearth server's change feed, in the shape of firebase-functions v2
/// (docs/functions.md): register handlers for locations, then ``run(arguments:)`` the process beside
/// the server. Each event is handed to its function at least once, with a stable ``DatabaseEvent/id``;
/// one location's events in the order they were written, different locations' at once; a handler that
/// throws is tried again with backoff and, after its attempts, parked where the console shows it.
///
///     let functions = Functions()
///     functions.onValueWritten("/followers/{uid}") { event in
///         let count = event.data.after.childrenCount
///         try await event.database.reference(withPath: "users/\(event.params["uid"]!)/followers").setValue(count)
///     }
///     functions.run()
public final class Functions: @unchecked Sendable {  // registrations happen before run(), on one thread
    var registered: [RegisteredFunction] = []
    var userFunctions: [RegisteredUserFunction] = []
    var problems: [String] = []

    public init() {}

    /// How often a function's handler is tried before its event is parked.
    public static let attemptsDefault = 10

    /// A value was written where there was none.
    public func onValueCreated(
        _ reference: String, name: String? = nil, attempts: Int = attemptsDefault,
        _ handler: @escaping @Sendable (DatabaseEvent<DataSnapshot>) async throws -> Void
    ) {
        register(reference, [.created], name ?? "onValueCreated \(reference)", attempts) { event in
            try await handler(event.map { $0.after })
        }
    }

    /// A value was replaced by another.
    public func onValueUpdated(
        _ reference: String, name: String? = nil, attempts: Int = attemptsDefault,
        _ handler: @escaping @Sendable (DatabaseEvent<Change<DataSnapshot>>) async throws -> Void
    ) {
        register(reference, [.updated], name ?? "onValueUpdated \(reference)", attempts, handler)
    }

    /// A value was removed; `data` is what was there.
    public func onValueDeleted(
        _ reference: String, name: String? = nil, attempts: Int = attemptsDefault,
        _ handler: @escaping @Sendable (DatabaseEvent<DataSnapshot>) async throws -> Void
    ) {
        register(reference, [.deleted], name ?? "onValueDeleted \(reference)", attempts) { event in
            try await handler(event.map { $0.before })
        }
    }

    /// Any of the three.
    public func onValueWritten(
        _ reference: String, name: String? = nil, attempts: Int = attemptsDefault,
        _ handler: @escaping @Sendable (DatabaseEvent<Change<DataSnapshot>>) async throws -> Void
    ) {
        register(reference, Set(TriggerEvent.Kind.allCases), name ?? "onValueWritten \(reference)", attempts, handler)
    }

    /// An account was made (a sign-up, an admin's `createUser`, a first sign-in with a provider). Events
    /// come from the server's auth feed, polled every 500 ms, one at a time in the order they happened.
    public func onUserCreated(name: String? = nil, attempts: Int = attemptsDefault, _ handler: @escaping @Sendable (UserEvent) async throws -> Void) {
        registerUser(.created, name ?? "onUserCreated", attempts, handler)
    }

    /// An account was deleted; `data` is the account as it was.
    public func onUserDeleted(name: String? = nil, attempts: Int = attemptsDefault, _ handler: @escaping @Sendable (UserEvent) async throws -> Void) {
        registerUser(.deleted, name ?? "onUserDeleted", attempts, handler)
    }

    private func registerUser(_ kind: RegisteredUserFunction.Kind, _ name: String, _ attempts: Int, _ handler: @escaping @Sendable (UserEvent) async throws -> Void) {
        guard (1...1000).contains(attempts) else { return problems.append("\(name): attempts is from 1 to 1000, not \(attempts)") }
        guard !registered.contains(where: { $0.name == name }), !userFunctions.contains(where: { $0.name == name }) else {
            return problems.append("two functions are named \"\(name)\": give one another name")
        }
        userFunctions.append(RegisteredUserFunction(name: name, kind: kind, attempts: attempts, handler: handler))
    }

    private func register(
        _ reference: String, _ kinds: Set<TriggerEvent.Kind>, _ name: String, _ attempts: Int,
        _ handler: @escaping @Sendable (DatabaseEvent<Change<DataSnapshot>>) async throws -> Void
    ) {
        do {
            let pattern = try TriggerPattern(reference)
            guard (1...1000).contains(attempts) else {
                problems.append("\(name): attempts is from 1 to 1000, not \(attempts)")
                return
            }
            guard !registered.contains(where: { $0.name == name }), !userFunctions.contains(where: { $0.name == name }) else {
                problems.append("two functions are named \"\(name)\": give one another name")
                return
            }
            registered.append(RegisteredFunction(name: name, pattern: pattern, kinds: kinds, attempts: attempts, handler: handler))
        } catch {
            problems.append("\(name): \(error.message)")
        }
    }

    /// Runs the functions with the options of the process's command line (``FunctionsOptions``) until
    /// SIGTERM or SIGINT, then exits once the handlers under way end and the cursor is saved.
    public func run(arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        let options: FunctionsOptions
        do { options = try FunctionsOptions.parse(arguments) } catch {
            FileHandle.standardError.write(Data("\(Self.executableName): \(error.description)\n\(FunctionsOptions.help)\n".utf8))
            exit(2)
        }
        if options.showHelp {
            print(FunctionsOptions.help.replacingOccurrences(of: "EXECUTABLE", with: Self.executableName))
            exit(0)
        }
        run(options)
    }

    /// Runs the functions with `options` until SIGTERM or SIGINT.
    public func run(_ options: FunctionsOptions) -> Never {
        let process: FunctionsProcess
        switch start(options) {
        case .success(let started): process = started
        case .failure(let problem):
            FileHandle.standardError.write(Data(problem.description.split(separator: "\n").map { "\(Self.executableName): \($0)\n" }.joined().utf8))
            exit(2)
        }
        for signal in [SIGTERM, SIGINT] {
            Foundation.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal, queue: .global())
            source.setEventHandler {
                process.stop()
                exit(0)
            }
            source.resume()
            Self.signalSources.withLock { $0.append(source) }
        }
        dispatchMain()
    }

    private static let signalSources = Locked<[any DispatchSourceSignal]>([])

    /// Why the functions cannot start.
    package struct Problem: Error, CustomStringConvertible {
        package let description: String
    }

    /// Starts the functions with `options` in this process (``run(_:)`` does, then waits for a signal;
    /// hearth-bench calls it directly).
    package func start(_ options: FunctionsOptions) -> Result<FunctionsProcess, Problem> {
        guard problems.isEmpty, !registered.isEmpty || !userFunctions.isEmpty else {
            let why = problems.isEmpty ? ["no function is registered (onValueCreated, onValueUpdated, onValueDeleted, onValueWritten, onUserCreated, onUserDeleted)"] : problems
            return .failure(Problem(description: why.joined(separator: "\n")))
        }
        guard let server = ServerAddress(databaseURL: options.databaseURL),
            let database = Database.administered(url: options.databaseURL, adminToken: options.resolvedToken)
        else { return .failure(Problem(description: "\(options.databaseURL) is not a database URL")) }
        let process = FunctionsProcess(
            functions: registered, userFunctions: userFunctions, server: server, name: options.name ?? Self.executableName, token: options.resolvedToken,
            database: database, concurrency: options.concurrency)
        process.start()
        return .success(process)
    }

    static var executableName: String {
        let name = URL(fileURLWithPath: CommandLine.arguments.first ?? "functions").lastPathComponent
        let allowed = name.unicodeScalars.map { scalar -> Character in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_" ? Character(scalar) : "-"
        }
        return String(String(allowed).prefix(64))
    }
}

/// A function as registered: where it watches, which kinds of event, how often it is tried.
struct RegisteredFunction: Sendable {
    var name: String
    var pattern: TriggerPattern
    var kinds: Set<TriggerEvent.Kind>
    var attempts: Int
    var handler: @Sendable (DatabaseEvent<Change<DataSnapshot>>) async throws -> Void
}

/// A user function as registered.
struct RegisteredUserFunction: Sendable {
    enum Kind: String, Sendable { case created, deleted }
    var name: String
    var kind: Kind
    var attempts: Int
    var handler: @Sendable (UserEvent) async throws -> Void
}

extension DatabaseEvent {
    /// The same event with other data.
    func map<U: Sendable>(_ transform: (T) -> U) -> DatabaseEvent<U> {
        DatabaseEvent<U>(
            data: transform(data), params: params, id: id, time: time, ref: ref, type: type, authType: authType, authId: authId,
            database: database, position: position)
    }
}
