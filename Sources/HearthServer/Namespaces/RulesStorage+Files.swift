public import HearthSupport

extension RulesStorage {
    /// Rules in files under `directory`: `<namespace>.rules.json` (``RulesStore``) and the versions in
    /// `<namespace>.rules-history.jsonl` (``RulesHistory``). A history that cannot be written is told to
    /// `log`, not fatal: the rules themselves are stored and apply.
    public static func files(directory: String, log: Log) -> RulesStorage {
        let store = RulesStore(directory: directory)
        let history = RulesHistory(directory: directory)
        return RulesStorage(
            load: { namespace in StoredRules(rules: store.load(namespace), versions: history.load(namespace)) },
            save: { namespace, rules, deployment in
                try store.save(rules, for: namespace)
                var stored = StoredRules(rules: nil, versions: history.load(namespace))
                let version = stored.add(rules, deployment)
                do { try history.save(stored.versions, added: version, for: namespace) } catch {
                    log("hearth: the rules history of '\(namespace)' could not be written: \(error)")
                }
                return version.version
            },
            delete: { namespace in
                store.delete(namespace)
                history.delete(namespace)
            })
    }
}
