public import Foundation
public import HearthClient
public import SeedTerminal

/// The frame every seed app shares: it connects to the database, deploys the apps' rules to a
/// namespace that has none, shows the login screen until someone is signed in (skipping it when a
/// session was saved), then hands the screen to the app's ``SeedContent`` under a header (app, user,
/// connection) and above a status line. Everything runs on `queue`, the database's callbacks included.
public final class SeedShell: TerminalScreen, @unchecked Sendable {  // confined to `queue`
    public let queue = DispatchQueue(label: "seed.app")
    public let options: AppOptions
    public let database: Database
    public let auth: Auth
    private let content: any SeedContent
    private var runner: TerminalRunner?

    private enum Phase { case starting, login, main }
    private var phase = Phase.starting
    private var form: LoginForm
    private var user: User?
    private var online = false
    private var statusText: String?
    private var statusIsError = false
    private var showingHelp = false
    /// Set once the rules were checked (and deployed if needed): listening before that could be refused
    /// by a new namespace's locked defaults, and a refused listen is not tried again.
    private var rulesChecked = false
    /// While a new account is being finished (a username claimed), the app waits: the account may yet
    /// be undone, and the form keeps what was typed.
    private var creatingAccount = false

    public init(content: any SeedContent, options: AppOptions, appName: String = "seed") {
        self.content = content
        self.options = options
        form = LoginForm(asksUsername: content.asksUsername)
        let firebase = FirebaseOptions(googleAppID: "1:seed:\(content.name)", gcmSenderID: "")
        firebase.databaseURL = options.databaseURL
        firebase.apiKey = "seed-apps"
        if FirebaseApp.app(name: appName) == nil { FirebaseApp.configure(name: appName, options: firebase) }
        let app = FirebaseApp.app(name: appName)!
        database = Database.database(app: app)
        database.isPersistenceEnabled = content.usesPersistence
        database.callbackQueue = queue
        auth = Auth.auth(app: app)
        auth.callbackQueue = queue
    }

    /// Runs the app in the terminal until the user quits.
    public func run() {
        let runner = TerminalRunner(screen: self, queue: queue)
        self.runner = runner
        queue.async { [self] in start() }
        runner.run()
        content.detach()
        database.goOffline()
    }

    private func start() {
        auth.addStateDidChangeListener { [weak self] _, user in self?.userChanged(user) }
        let options = self.options
        Task { [self] in
            let outcome = await RulesSetup.ensure(options)
            queue.async {
                // The first use of the database opens its connection, so it waits for the rules check:
                // on a server without --emulator a namespace exists once an admin made it (the check
                // does, as the app's admin), and a connection to one that does not exist yet is shut
                // down by the server (`s`), which no client reconnects after (docs/protocol.md §1.5).
                self.database.reference(withPath: ".info/connected").observe(.value) { [weak self] snapshot in
                    self?.online = snapshot.value as? Bool ?? false
                    self?.redraw()
                }
                self.rulesChecked = true
                self.userChanged(self.auth.currentUser)
                switch outcome {
                case .deployed(let namespace): self.status("Deployed the seed apps' rules to namespace '\(namespace)'.")
                case .kept: break
                case .skipped(let why): self.status("Rules not checked: \(why)", isError: true)
                }
            }
        }
    }

    private func userChanged(_ user: User?) {
        guard rulesChecked, !creatingAccount else { return }  // called again once they are
        if let current = self.user, current.uid == user?.uid { return }
        if self.user != nil {
            content.detach()
            form = LoginForm(asksUsername: content.asksUsername)
        }
        self.user = user
        if let user {
            phase = .main
            content.attach(user: user, database: database, shell: self)
        } else {
            phase = .login
        }
        redraw()
    }

    // MARK: For the content

    /// Shows a message in the status line (an error in red).
    public func status(_ text: String?, isError: Bool = false) {
        statusText = text
        statusIsError = isError
        redraw()
    }

    public func redraw() { runner?.redraw() }

    /// Runs `work` off the queue; a failure is shown in the status line in plain words.
    public func perform(_ work: @escaping @Sendable () async throws -> Void) {
        let url = options.databaseURL
        Task { [self] in
            do { try await work() } catch {
                let text = ErrorText.describe(error, serverURL: url)
                queue.async { self.status(text, isError: true) }
            }
        }
    }

    // MARK: TerminalScreen

    public func handle(_ key: Key) -> Bool {
        switch phase {
        case .starting: return key != .ctrl("c")
        case .login:
            switch form.handle(key) {
            case .quit: return false
            case .submit(let request): submit(request)
            case .none: break
            }
            return true
        case .main:
            if showingHelp {
                showingHelp = false
                return true
            }
            if content.handle(key) { return true }
            switch key {
            case .ctrl("c"), .character("q"): return false
            case .character("?"): showingHelp = true
            case .character("o"):
                try? auth.signOut()
                status("Signed out.")
            default: break
            }
            return true
        }
    }

    private func submit(_ request: LoginRequest) {
        let (auth, database, content, url) = (self.auth, self.database, self.content, options.databaseURL)
        let unchecked = Unchecked(content)
        creatingAccount = request.mode == .signUp
        Task { [self] in
            do {
                switch request.mode {
                case .signIn:
                    let email = try await unchecked.value.email(forLogin: request.identifier, database: database)
                    try await auth.signIn(withEmail: email, password: request.password)
                case .signUp:
                    let user = try await auth.createUser(withEmail: request.identifier, password: request.password).user
                    do {
                        try await unchecked.value.didCreateAccount(request, user: user, database: database)
                    } catch {
                        try? await user.delete()
                        throw error
                    }
                }
                queue.async {
                    self.accountSettled()
                    self.status(request.mode == .signIn ? "Signed in." : "Account created: welcome!")
                }
            } catch {
                let text = ErrorText.describe(error, serverURL: url)
                queue.async {
                    self.accountSettled()
                    self.form.failed(text)
                    self.redraw()
                }
            }
        }
    }

    private func accountSettled() {
        creatingAccount = false
        userChanged(auth.currentUser)
    }

    public func render(width: Int, height: Int) -> (lines: [Line], cursor: (row: Int, column: Int)?) {
        var lines: [Line] = []
        var cursor: (row: Int, column: Int)?
        switch phase {
        case .starting:
            lines = [Line(content.name, .accent), .blank, Line("Connecting to \(options.databaseURL) and checking the rules…")]
        case .login:
            let title = "\(content.name) — \(options.databaseURL) — \(online ? "● online" : "○ connecting")"
            (lines, cursor) = form.render(title: title, width: width)
            if let statusText, statusIsError { lines += [.blank, Line(statusText, .warning)] }
        case .main:
            let who = user.map { $0.email ?? ($0.isAnonymous ? "anonymous" : $0.uid) } ?? ""
            lines.append(Line([
                Span(" \(content.name) ", .reverse), Span("  \(who)  "),
                online ? Span("● online", .good) : Span("○ offline: changes are kept and sent on reconnect", .warning),
            ]))
            let bodyHeight = max(0, height - 3)
            if showingHelp {
                var help: [Line] = [Line("Keys", .bold)] + content.keyHelp.map { Line("  " + $0) }
                help += [Line("  o         sign out"), Line("  q         quit"), .blank, Line("Any key closes this help.", .dim)]
                lines += help.prefix(bodyHeight)
            } else {
                let body = content.render(width: width, height: bodyHeight)
                lines += body.lines.prefix(bodyHeight)
                cursor = body.cursor.map { ($0.row + 1, $0.column) }
            }
            while lines.count < height - 1 { lines.append(.blank) }
            let footer = statusText.map { Line($0, statusIsError ? .error : .good) } ?? Line("?: keys   o: sign out   q: quit", .dim)
            lines = Array(lines.prefix(height - 1)) + [footer]
        }
        return (lines, cursor)
    }
}

/// Carries a reference that is only used on the shell's queue or in the order the shell starts work.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
