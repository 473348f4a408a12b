import Foundation
import HearthAuth
import HearthAuthPostgres
import HearthAuthSQLite
import HearthHooks
import HearthHooksPostgres
import HearthPostgres
import HearthOutbound
import HearthProtocol
import HearthServer
import HearthSQL
import HearthSQLite
import HearthStorage
import HearthSupport
import HearthTransport
#if canImport(Glibc)
    import Glibc
#endif

/// `hearth serve`: its settings (flags, then environment, then config file, then defaults) and the run.
struct ServeSettings: Equatable {
    var host = "127.0.0.1"
    var port = 9000
    var dataDirectory = "./hearth-data"
    /// A PostgreSQL URL (`--storage`): the namespaces' data and rules live there instead of under
    /// `dataDirectory`. Checked when read; never printed (it may hold a password).
    var storageURL: String?
    var project = "demo-hearth"
    var emulator = false
    var certificatePath: String?
    var privateKeyPath: String?
    var publicURL: String?
    /// Hosts emailed links may continue to (`continueUrl`), besides localhost and the public URL's.
    var authorizedDomains: [String] = []
    var smtpURL: String?
    var smtpUser: String?
    var smtpPassword: String?
    var smtpFrom: String?
    /// Reverse proxies (`--trusted-proxies`): their X-Forwarded-For and X-Forwarded-Proto are believed.
    var trustedProxies: [String] = []
    /// The Strict-Transport-Security value sent over TLS (`--hsts`); nil sends none.
    var strictTransportSecurity: String? = TransportConfiguration.defaultStrictTransportSecurity
    /// A directory of static files served on the same port (`--public`), like `firebase serve`.
    var publicDirectory: String?
    /// This node's name in a cluster (`--node`): `/.info/node.json` and `/metrics` say it.
    var node = ServeSettings.defaultNode
    /// With `--storage`: how long a node's lease lasts; a dead node's onDisconnect operations run on
    /// another within about 1.25 × this.
    var leaseSeconds = 20
    /// Where the built-in identity providers' keys and APIs are (`--provider-endpoints FILE`): the real
    /// services unless an admin points them elsewhere.
    var providerEndpoints = ProviderEndpoints()
    /// How long each namespace's change feed keeps entries (`--feed-max-age`, `--feed-max-bytes`).
    var feedRetention = ChangeFeedRetention.standard
    /// Where webhooks may post besides public addresses (`--hooks-allow`): host names or addresses, and
    /// the words `loopback` and `private` for those whole ranges. Emulator mode allows loopback.
    var hooksAllow: [String] = []
    /// Scheduled backups (`--backup-every`, `--backup-keep`); none unless asked for.
    var backupSchedule: BackupSchedule?
    /// Where they go (`--backup-dir`); by default `backups` in the data directory.
    var backupDirectory: String?

    /// The address policy of webhook deliveries.
    var hookAddresses: OutboundAddresses {
        OutboundAddresses(
            allowLoopback: emulator || hooksAllow.contains("loopback"), allowPrivate: hooksAllow.contains("private"),
            allowedHosts: Set(hooksAllow.filter { $0 != "loopback" && $0 != "private" }))
    }

    /// The host name, else `hearth`.
    static var defaultNode: String {
        let name = ProcessInfo.processInfo.hostName
        return name.isEmpty ? "hearth" : String(name.prefix(64))
    }

    /// Each setting: flag, environment variable, config-file key, and what it means (drives `--help`).
    static let table: [(flag: String, environment: String, key: String, help: String)] = [
        ("--host", "HEARTH_HOST", "host", "Address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)"),
        ("--port", "HEARTH_PORT", "port", "Port to listen on (default 9000)"),
        ("--data", "HEARTH_DATA", "data", "Directory for the databases, one SQLite file per namespace (default ./hearth-data)"),
        ("--storage", "HEARTH_STORAGE", "storage",
         "postgresql://… URL: the namespaces and their rules in PostgreSQL (--data keeps the accounts)"),
        ("--project", "HEARTH_PROJECT", "project", "Project ID; the default namespace is <ID>-default-rtdb (default demo-hearth)"),
        ("--emulator", "HEARTH_EMULATOR", "emulator", "Emulator mode: 'Bearer owner' is admin and everyone may read and write"),
        ("--tls-cert", "HEARTH_TLS_CERT", "tls-cert", "PEM certificate: serve HTTPS (with --tls-key)"),
        ("--tls-key", "HEARTH_TLS_KEY", "tls-key", "PEM private key for --tls-cert"),
        ("--public-url", "HEARTH_PUBLIC_URL", "public-url", "Base URL of emailed links (default: the request's Host)"),
        ("--authorized-domains", "HEARTH_AUTHORIZED_DOMAINS", "authorized-domains",
         "Comma-separated hosts your apps run on: emailed links may continue there (localhost always may)"),
        ("--trusted-proxies", "HEARTH_TRUSTED_PROXIES", "trusted-proxies",
         "Comma-separated addresses of your reverse proxies (e.g. 127.0.0.1): from them, X-Forwarded-For is the client and X-Forwarded-Proto: https makes the console's cookie Secure"),
        ("--hsts", "HEARTH_HSTS", "hsts",
         "Strict-Transport-Security value sent over TLS (default 'max-age=31536000'; 'off' sends none; add includeSubDomains only if every subdomain serves HTTPS)"),
        ("--smtp-url", "HEARTH_SMTP_URL", "smtp-url", "Send auth emails via smtp://host:587 (STARTTLS) or smtps://host:465"),
        ("--smtp-user", "HEARTH_SMTP_USER", "smtp-user", "SMTP login name"),
        ("--smtp-password", "HEARTH_SMTP_PASSWORD", "smtp-password", "SMTP password (prefer the environment variable)"),
        ("--smtp-from", "HEARTH_SMTP_FROM", "smtp-from", "Sender of auth emails, e.g. 'App <noreply@example.com>'"),
        ("--public", "HEARTH_PUBLIC", "public", "Serve this directory's files (a web app) on the same port: GET of any path not ending in .json"),
        ("--node", "HEARTH_NODE", "node", "This node's name in a cluster, said by /.info/node.json and /metrics (default: the host name)"),
        ("--cluster-lease-seconds", "HEARTH_CLUSTER_LEASE_SECONDS", "cluster-lease-seconds",
         "With --storage: a node's lease; a dead node's onDisconnect operations run elsewhere within ~1.25x this (default 20)"),
        ("--feed-max-age", "HEARTH_FEED_MAX_AGE", "feed-max-age",
         "How long each namespace's change feed keeps entries: 7d (the default), 12h, 30m, 90s; see docs/feed.md"),
        ("--feed-max-bytes", "HEARTH_FEED_MAX_BYTES", "feed-max-bytes",
         "Most bytes each namespace's change feed keeps, the oldest going first (default 1073741824, 1 GiB)"),
        ("--backup-every", "HEARTH_BACKUP_EVERY", "backup-every",
         "Back up every namespace this often, each copy verified: 1h, 30m, 1d (default: no scheduled backups); see docs/operations.md"),
        ("--backup-keep", "HEARTH_BACKUP_KEEP", "backup-keep", "Backups kept per namespace, the newest (default 48)"),
        ("--backup-dir", "HEARTH_BACKUP_DIR", "backup-dir", "Where scheduled backups go (default: backups in the data directory)"),
        ("--hooks-allow", "HEARTH_HOOKS_ALLOW", "hooks-allow",
         "Comma-separated hosts webhooks may post to although private or loopback (or the words 'private', 'loopback'); see docs/functions.md"),
        ("--provider-endpoints", "HEARTH_PROVIDER_ENDPOINTS", "provider-endpoints",
         "JSON file pointing Google's, Apple's, GitHub's or Facebook's keys and APIs elsewhere (local providers, mirrors); see docs/auth.md"),
    ]

    var defaultNamespace: String { project + "-default-rtdb" }

    /// `7d`, `12h`, `30m`, `90s` in milliseconds, from one second to ten years; nil otherwise.
    static func milliseconds(_ duration: String) -> Int64? {
        let units: [Character: Int64] = ["s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000]
        guard let unit = duration.last.flatMap({ units[$0] }), let count = Int64(duration.dropLast()), count > 0 else { return nil }
        let (milliseconds, overflow) = count.multipliedReportingOverflow(by: unit)
        guard !overflow, milliseconds <= 3650 * 86_400_000 else { return nil }
        return milliseconds
    }

    /// Where the namespaces are: PostgreSQL with `--storage`, else SQLite files under `--data`.
    var dataStore: DataStore { storageURL.map { .postgres(url: $0) } ?? .sqlite(directory: dataDirectory) }

    enum ParseError: Error, Equatable { case usage(String) }

    /// Reads settings from a config file's text, the environment and the arguments, later ones winning.
    static func resolve(arguments: [String], environment: [String: String], readFile: (String) -> String?)
        throws(ParseError) -> ServeSettings
    {
        var values: [String: String] = [:]
        var configPath = environment["HEARTH_CONFIG"]
        var flagValues: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            var argument = arguments[index]
            var inline: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                inline = String(argument[argument.index(after: equals)...])
                argument = String(argument[..<equals])
            }
            if argument == "--config" {
                guard let value = inline ?? (index + 1 < arguments.count ? arguments[index + 1] : nil) else {
                    throw .usage("--config needs a file")
                }
                configPath = value
                index += inline == nil ? 2 : 1
                continue
            }
            if argument == "--trust-forwarded-for" {
                throw .usage("--trust-forwarded-for is now --trusted-proxies ADDRESSES: the addresses your proxy connects from (e.g. 127.0.0.1), so that nobody else can name their address")
            }
            guard let entry = table.first(where: { $0.flag == argument }) else {
                throw .usage("unknown option '\(arguments[index])'")
            }
            if entry.key == "emulator" {
                flagValues["emulator"] = inline ?? "true"
                index += 1
                continue
            }
            guard let value = inline ?? (index + 1 < arguments.count ? arguments[index + 1] : nil) else {
                throw .usage("\(argument) needs a value")
            }
            flagValues[entry.key] = value
            index += inline == nil ? 2 : 1
        }
        let fileText: String?
        if let configPath {
            guard let text = readFile(configPath) else { throw .usage("cannot read the config file \(configPath)") }
            fileText = text
        } else {
            fileText = readFile("hearth.conf")
        }
        if let fileText {
            for rawLine in fileText.split(separator: "\n") {
                let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                    .trimmingCharacters(in: .whitespaces)
                guard !line.isEmpty else { continue }
                let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, table.contains(where: { $0.key == parts[0] }) else {
                    throw .usage("config file line '\(line)' is not 'key = value' with a known key")
                }
                values[parts[0]] = parts[1]
            }
        }
        if environment["HEARTH_TRUST_FORWARDED_FOR"] != nil {
            throw .usage("HEARTH_TRUST_FORWARDED_FOR is now HEARTH_TRUSTED_PROXIES: the addresses your proxy connects from (e.g. 127.0.0.1)")
        }
        for entry in table { if let value = environment[entry.environment] { values[entry.key] = value } }
        values.merge(flagValues) { _, flag in flag }

        var settings = ServeSettings()
        if let host = values["host"] { settings.host = host }
        if let port = values["port"] {
            guard let number = Int(port), (0...65535).contains(number) else { throw .usage("port must be 0–65535, not '\(port)'") }
            settings.port = number
        }
        if let data = values["data"] { settings.dataDirectory = data }
        if let storage = values["storage"], !storage.isEmpty {
            do { _ = try DataStore.choose(storage: storage, dataDirectory: settings.dataDirectory) } catch { throw .usage(error.message) }
            settings.storageURL = storage
        }
        if let project = values["project"] { settings.project = project }
        if let emulator = values["emulator"] {
            switch emulator.lowercased() {
            case "1", "true", "yes", "on": settings.emulator = true
            case "0", "false", "no", "off", "": settings.emulator = false
            default: throw .usage("emulator must be true or false, not '\(emulator)'")
            }
        }
        if let node = values["node"] {
            guard (1...64).contains(node.count), node.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "\"" }) else {
                throw .usage("node must be 1–64 printable characters without spaces or quotes, not '\(node.prefix(80))'")
            }
            settings.node = node
        }
        if let lease = values["cluster-lease-seconds"] {
            guard let seconds = Int(lease), (1...3600).contains(seconds) else {
                throw .usage("cluster-lease-seconds must be 1–3600, not '\(lease.prefix(20))'")
            }
            settings.leaseSeconds = seconds
        }
        if let age = values["feed-max-age"] {
            guard let milliseconds = Self.milliseconds(age) else {
                throw .usage("feed-max-age is a number and a unit (s, m, h or d) from 1s to 3650d, like 7d or 12h, not '\(age.prefix(20))'")
            }
            settings.feedRetention.maxAgeMilliseconds = milliseconds
        }
        if let bytes = values["feed-max-bytes"] {
            guard let number = Int64(bytes), (1...(Int64(1) << 50)).contains(number) else {
                throw .usage("feed-max-bytes must be a whole number of bytes from 1 to 2^50, not '\(bytes.prefix(20))'")
            }
            settings.feedRetention.maxBytes = number
        }
        if let every = values["backup-every"] {
            guard let milliseconds = Self.milliseconds(every) else {
                throw .usage("backup-every is a number and a unit (s, m, h or d), like 1h or 30m, not '\(every.prefix(20))'")
            }
            settings.backupSchedule = BackupSchedule(everyMilliseconds: milliseconds, keep: 48)
        }
        if let keep = values["backup-keep"] {
            guard let count = Int(keep), (1...100_000).contains(count) else {
                throw .usage("backup-keep is how many backups to keep per namespace, 1–100000, not '\(keep.prefix(20))'")
            }
            guard settings.backupSchedule != nil else { throw .usage("backup-keep needs backup-every (how often to back up)") }
            settings.backupSchedule?.keep = count
        }
        if let directory = values["backup-dir"] {
            guard settings.backupSchedule != nil else { throw .usage("backup-dir needs backup-every (how often to back up)") }
            settings.backupDirectory = directory
        }
        settings.certificatePath = values["tls-cert"]
        settings.privateKeyPath = values["tls-key"]
        settings.publicURL = values["public-url"]
        settings.authorizedDomains = (values["authorized-domains"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        settings.smtpURL = values["smtp-url"]
        settings.smtpUser = values["smtp-user"]
        settings.smtpPassword = values["smtp-password"]
        settings.smtpFrom = values["smtp-from"]
        settings.publicDirectory = values["public"]
        settings.hooksAllow = (values["hooks-allow"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        if let path = values["provider-endpoints"] {
            guard let text = readFile(path) else { throw .usage("cannot read the provider endpoints file \(path)") }
            do {
                settings.providerEndpoints = try ProviderEndpoints(overridingWith: Array(text.utf8))
            } catch {
                throw .usage("\(path): \(error)")
            }
        }
        if settings.smtpURL != nil && settings.smtpFrom == nil { throw .usage("--smtp-url needs --smtp-from") }
        if let proxies = values["trusted-proxies"] {
            settings.trustedProxies = proxies.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if let bad = settings.trustedProxies.first(where: { !TrustedProxies.isAddress($0) }) {
                throw .usage("trusted-proxies takes IP addresses (as the proxy connects from), not '\(bad.prefix(60))'")
            }
        }
        if let hsts = values["hsts"] {
            let value = hsts.trimmingCharacters(in: .whitespaces)
            guard !value.isEmpty, value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) else {
                throw .usage("hsts must be a header value such as 'max-age=31536000', or 'off'")
            }
            settings.strictTransportSecurity = value.lowercased() == "off" ? nil : value
        }
        if (settings.certificatePath == nil) != (settings.privateKeyPath == nil) {
            throw .usage("--tls-cert and --tls-key go together")
        }
        return settings
    }

    static var usage: String {
        var text = """
            Usage: hearth serve [options]

            Serves Firebase Realtime Database (the SDKs' realtime protocol, REST and streaming) and Firebase
            Auth on one port, for many databases (namespaces) at once, with the data in one SQLite file per
            namespace and accounts in auth.sqlite, all under the data directory; with --storage, every
            namespace's data and rules, and the accounts, are in PostgreSQL instead (prefer HEARTH_STORAGE or the config file
            for a URL with a password: other users can see flags in ps).

            Options (each also from an environment variable, or a line 'key = value' in the config file):

            """
        for entry in table {
            let name = entry.key == "emulator" ? entry.flag : "\(entry.flag) VALUE"
            // Names longer than the column go on their own line rather than being cut.
            let width = 22
            if name.count >= width {
                text += "  \(name)\n  \("".padding(toLength: width, withPad: " ", startingAt: 0))\(entry.help)\n"
            } else {
                text += "  \(name.padding(toLength: width, withPad: " ", startingAt: 0))\(entry.help)\n"
            }
            text += "  \("".padding(toLength: width, withPad: " ", startingAt: 0))env \(entry.environment), config key '\(entry.key)'\n"
        }
        text += """
              --config FILE     Config file (env HEARTH_CONFIG; default ./hearth.conf when it exists)

            Flags win over the environment, which wins over the config file.
            SIGINT or SIGTERM stops it: no new requests, queued writes committed, files closed.

            """
        return text
    }
}

extension HearthCommand {
    static func runServer<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ settings: ServeSettings, output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        // Block the stop signals in every thread started from here on; this thread waits for them below.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)

        let directory = settings.dataDirectory
        let created = OwnerOnlyFiles.createDirectory(directory)
        if created != 0 {
            print("hearth serve: cannot create the data directory \(directory): \(String(cString: strerror(created))).",
                  to: &errorOutput)
            return .failure
        }
        // Everything under the data directory is the owner's alone (OwnerOnlyFiles); a directory made by
        // an older version, or by hand, is tightened once, and said so.
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let tightened = OwnerOnlyFiles.tighten([directory] + entries.map { (directory as NSString).appendingPathComponent($0) })
        if !tightened.isEmpty {
            print("hearth serve: made \(tightened.count) file(s) under \(directory) readable by their owner only (mode 0600/0700).",
                  to: &errorOutput)
        }
        var adminToken: String?
        if !settings.emulator {
            do { adminToken = try AdminToken.loadOrCreate(in: directory) } catch {
                print("hearth serve: cannot create the admin token in \(directory): \(error).", to: &errorOutput)
                return .failure
            }
        }
        let absolute = URL(fileURLWithPath: directory).standardizedFileURL.path
        let storage: ServeStorage
        do {
            storage = try ServeStorage.open(
                settings.dataStore, dataDirectory: absolute, node: settings.node, leaseSeconds: settings.leaseSeconds,
                feedRetention: settings.feedRetention, log: .standardError)
        } catch {
            print("hearth serve: \(error.message)", to: &errorOutput)
            return .failure
        }
        defer { storage.close() }
        var site: StaticSite?
        if let publicDirectory = settings.publicDirectory {
            // The data directory holds the admin token, every database and the accounts: never a web file.
            if StaticSite.lies(publicDirectory, inside: directory) {
                print("hearth serve: --public \(publicDirectory) is the data directory or inside it; serve a directory of web files.",
                      to: &errorOutput)
                return .failure
            }
            guard let publicSite = StaticSite(directory: publicDirectory, excluding: [directory]) else {
                print("hearth serve: --public \(publicDirectory) is not a directory this user can read.", to: &errorOutput)
                return .failure
            }
            site = publicSite
        }
        var authConfiguration = AuthConfiguration(projectID: settings.project, emulator: settings.emulator, adminToken: adminToken)
        authConfiguration.publicURL = settings.publicURL
        authConfiguration.authorizedDomains += settings.authorizedDomains
        authConfiguration.trustedProxies = TrustedProxies(settings.trustedProxies)
        authConfiguration.providerEndpoints = settings.providerEndpoints
        authConfiguration.hookAddresses = settings.hookAddresses
        authConfiguration.log = .standardError
        if let url = settings.smtpURL, let from = settings.smtpFrom {
            let mailer = SMTPMailer(configuration: SMTPConfiguration(
                url: url, username: settings.smtpUser, password: settings.smtpPassword, from: from))
            authConfiguration.deliverEmail = { email in
                do { try mailer.send(to: email.to, subject: email.subject, body: email.body) } catch {
                    // The recipient and the link stay out of the log: the link is a credential.
                    var standardError = FileDescriptorOutputStream.standardError
                    print("hearth serve: a \(email.requestType) email was not sent: \(error)", to: &standardError)
                }
            }
        }
        let auth: AuthService
        do {
            if let url = settings.storageURL {
                // A cluster's nodes share accounts, the signing key and sign-in methods.
                auth = try AuthService.open(postgresURL: url, configuration: authConfiguration, log: .standardError)
            } else {
                auth = try AuthService.open(dataDirectory: directory, configuration: authConfiguration)
            }
        } catch {
            print("hearth serve: cannot open the accounts\(settings.storageURL == nil ? " in \(directory)" : ""): \(error).", to: &errorOutput)
            return .failure
        }
        // Webhooks keep their documents, cursors and dead letters in the data directory on a single node, in
        // PostgreSQL for a cluster (where one node at a time delivers each hook).
        let hooks: HookDeliveryService
        do {
            var hookSettings = HookSettings(addresses: settings.hookAddresses)
            if let url = settings.storageURL {
                let database = try PostgresDatabase(url: url, connectionsMax: 2, log: .standardError)
                let node = settings.node + "#" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
                // Renewed well inside the lease, so a node that is alive never loses its hooks.
                hookSettings.reconcileMilliseconds = min(1000, settings.leaseSeconds * 1000 / 4)
                hooks = HookDeliveryService(
                    store: try PostgresHookStore(database: database, node: node, leaseSeconds: settings.leaseSeconds),
                    consumers: try PostgresFunctionConsumerStore(database: database), settings: hookSettings)
            } else {
                hooks = try HookDeliveryService(directory: directory, settings: hookSettings)
            }
        } catch {
            print("hearth serve: cannot open the webhooks' store\(settings.storageURL == nil ? " in \(directory)" : ""): \(error).", to: &errorOutput)
            return .failure
        }
        let backupDirectory = settings.backupSchedule.map { _ in
            BackupDirectory(path: settings.backupDirectory ?? BackupDirectory.standard(dataDirectory: absolute))
        }
        let server = DatabaseServer(
            configuration: ServerConfiguration(
                emulator: settings.emulator, adminToken: adminToken, defaultNamespace: settings.defaultNamespace,
                project: settings.project, node: settings.node, trustedProxies: TrustedProxies(settings.trustedProxies),
                secureCookies: settings.certificatePath != nil, heapInUse: ProcessHeap.bytesInUse),
            rules: storage.rules, files: storage.files, identity: auth, site: site, onDisconnectLedger: storage.ledger,
            hooks: hooks, backups: backupDirectory.map(BackupDirectory.catalogue), openEngine: storage.openEngine)
        // After the transport has stopped and the server closed (below), before the storage closes.
        defer {
            server.finishAuthRequests()
            auth.close(log: .standardError)
        }
        // Backups read their own snapshots of the storage beside the server, on a thread of their own.
        let backups = settings.backupSchedule.flatMap { schedule in
            backupDirectory.map { directory in
                ScheduledBackups(schedule: schedule, backups: directory, store: settings.dataStore, names: storage.files.names, log: .standardError)
            }
        }
        storage.observeRules? { [server] namespace in server.rulesChanged(in: namespace) }
        storage.observeDeletions? { [server] namespace in server.namespaceDeleted(elsewhere: namespace) }
        var transportConfiguration = TransportConfiguration(
            host: settings.host, port: settings.port, certificatePath: settings.certificatePath, privateKeyPath: settings.privateKeyPath)
        transportConfiguration.strictTransportSecurity = settings.strictTransportSecurity
        let memoryLimit = MemoryLimit.current()
        transportConfiguration.requestBodyBytesInFlightMax = memoryLimit?.requestBodyBytesInFlightMax
        let transport = HTTPServerTransport(configuration: transportConfiguration, handler: server, webSocketHandler: server)
        do { try transport.start() } catch {
            print("hearth serve: \(error.description).", to: &errorOutput)
            return .failure
        }
        let scheme = settings.certificatePath == nil ? "http" : "https"
        let hostForURL = settings.host == "0.0.0.0" ? "localhost" : settings.host
        let address = "\(hostForURL):\(transport.boundPort)"
        // The sign-in link makes whoever holds it the admin: printed for a person at a terminal, never
        // into a log (under systemd, standard output is the journal).
        let console = isatty(STDOUT_FILENO) == 1
            ? """
              Console:    \(server.consoleSignInLink(base: "\(scheme)://\(address)"))
                          (signs in one browser, once, within a day; for another: hearth console link, or paste the admin token)
            """
            : """
              Console:    \(scheme)://\(address)/console/ (sign in with a link from 'hearth console link --url \(scheme)://\(address)\(settings.emulator ? " --token owner" : "")',
                          run as the owner of \(settings.emulator ? "this server" : AdminToken.file(in: absolute)), or paste the admin token there)
            """
        var banner = """
            hearth \(HearthVersion.string) is serving Firebase Realtime Database clients\(settings.emulator ? " (emulator mode)" : "").
            \(console)
              Data:       \(storage.banner)
              REST:       \(scheme)://\(address)/<path>.json?ns=<namespace>   (default namespace \(settings.defaultNamespace))
              Streaming:  the same URLs with 'Accept: text/event-stream'
              Admin SDKs: FIREBASE_DATABASE_EMULATOR_HOST=\(address) with databaseURL https://<namespace>.firebaseio.com
              Email:      \(settings.smtpURL.map { "auth emails via \($0)" } ?? "no SMTP (--smtp-url): links only in the outbox, /emulator/v1/projects/\(settings.project)/oobCodes")
              Auth:       FIREBASE_AUTH_EMULATOR_HOST=\(address); JS connectAuthEmulator(auth, "\(scheme)://\(address)")
                          \(settings.storageURL == nil ? "accounts in auth.sqlite, ID tokens signed with auth-signing-key.pem" : "accounts and the signing key in PostgreSQL, shared by every node") (JWKS at
                          /www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com)
              JS SDK:     connectDatabaseEmulator(db, "\(hostForURL)", \(transport.boundPort)) or databaseURL \(scheme)://\(address)?ns=<namespace>

            """
        if let schedule = settings.backupSchedule {
            let every = schedule.everyMilliseconds
            let period = every % 3_600_000 == 0 ? "\(every / 3_600_000)h" : every % 60_000 == 0 ? "\(every / 60_000)m" : "\(every / 1000)s"
            banner += "  Backups:    every \(period), \(schedule.keep) kept per namespace, in \(settings.backupDirectory ?? BackupDirectory.standard(dataDirectory: absolute)) (hearth backups list)\n"
        }
        if let memoryLimit {
            banner += "  Memory:     limit \(Self.megabytes(memoryLimit.bytes)) (\(memoryLimit.source)): request bodies held to \(Self.megabytes(memoryLimit.requestBodyBytesInFlightMax)) at once\n"
        }
        banner += "  Metrics:    \(scheme)://\(address)/metrics (Prometheus text; admin only, as the Access line says)\n"
        if let site = server.site {
            banner += "  Web app:    \(scheme)://\(address)/ serves \(site.root) (any path not ending in .json)\n"
        }
        if settings.emulator {
            banner += "  Rules:      open (everyone reads and writes) until you deploy some: hearth rules deploy NS FILE\n"
            banner += "  Access:     'Authorization: Bearer owner' is admin and bypasses the rules.\n"
        } else {
            banner += "  Rules:      locked (only the admin reads and writes) until you deploy some: hearth rules deploy NS FILE\n"
            banner += "  Access:     the admin token is in \(AdminToken.file(in: absolute));\n"
            banner += "              send it as 'Authorization: Bearer $(cat \(AdminToken.file(in: absolute)))'. Use --emulator for SDK testing.\n"
        }
        banner += "Stop with Ctrl-C (SIGINT) or SIGTERM.\n"
        print(banner, terminator: "", to: &output)
        backups?.start()

        var received: Int32 = 0
        sigwait(&signals, &received)
        print("hearth serve: \(received == SIGINT ? "SIGINT" : "SIGTERM") received; closing connections and committing queued writes.",
              to: &errorOutput)
        // Before the loop stops: a hook's worker reads the feed through it.
        hooks.stop()
        backups?.stop()
        transport.stop()
        server.close()
        // After the connections ran their own operations: the lease and this node's rows go.
        storage.ledger?.stop()
        print("hearth serve: stopped cleanly.", to: &errorOutput)
        return .success
    }

    private static func megabytes(_ bytes: Int) -> String {
        bytes >= 10 << 30 ? "\(bytes >> 30) GB" : "\(bytes >> 20) MB"
    }
}
