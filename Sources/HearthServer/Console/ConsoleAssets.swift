import Foundation

/// Where the console's pages (HTML, CSS, JavaScript: `Sources/HearthServer/Console/Assets`) are read
/// from: `HEARTH_CONSOLE_DIR` when set, else the resource bundle SwiftPM puts beside the executable,
/// else `../share/hearth/console` from it (an installed `/usr/local/bin/hearth`, docs/deploy.md), else
/// the source tree this binary was built from. Nil when none exists (the console then says how
/// to point the server at its files).
enum ConsoleAssets {
    static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        var candidates: [String] = []
        if let configured = environment["HEARTH_CONSOLE_DIR"], !configured.isEmpty { candidates.append(configured) }
        let executableDirectory = Bundle.main.bundleURL.path
        candidates.append(executableDirectory + "/Hearth_HearthServer.resources/Assets")
        candidates.append(executableDirectory + "/Hearth_HearthServer.bundle/Contents/Resources/Assets")
        candidates.append(executableDirectory + "/../share/hearth/console")
        candidates.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Assets").path)
        return candidates.first { path in
            FileManager.default.fileExists(atPath: path + "/index.html")
        }
    }
}
