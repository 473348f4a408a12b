import Foundation
import HearthSQL

/// Where the SDK keeps files (the disk cache, the signed-in user), private to the user who runs the app.
enum ClientFiles {
    /// `HEARTH_CLIENT_CACHE_DIR` when set (tests, sandboxes); Linux: `$XDG_DATA_HOME/hearth` or
    /// `~/.local/share/hearth`; Apple: Application Support/hearth.
    static var directory: String {
        let environment = ProcessInfo.processInfo.environment
        if let configured = environment["HEARTH_CLIENT_CACHE_DIR"], !configured.isEmpty { return configured }
        #if canImport(Darwin)
            let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first?.path
                ?? NSHomeDirectory() + "/Library/Application Support"
            return base + "/hearth"
        #else
            if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/hearth" }
            return NSHomeDirectory() + "/.local/share/hearth"
        #endif
    }

    /// Creates `directory` (and its parents) when missing: the directory itself 0700, as it holds data
    /// and credentials; one left readable by others is tightened. False when it cannot be made.
    @discardableResult
    static func prepare(_ directory: String) -> Bool {
        try? FileManager.default.createDirectory(
            atPath: (directory as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        guard OwnerOnlyFiles.createDirectory(directory) == 0 else { return false }
        OwnerOnlyFiles.tighten([directory])
        return true
    }
}
