#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Hearth's data files are readable by their owner only: a namespace file holds every value in the
/// database whatever its rules say, and `auth.sqlite` holds password hashes. The data directory is
/// 0700 and each file 0600, so another local user can read neither.
///
/// SQLite creates a database's `-wal` and `-shm` with the database file's own mode (`findCreateFileMode`
/// in its unix VFS), so creating the database file privately before SQLite opens it covers all three.
///
///     try OwnerOnlyFiles.createDirectory("hearth-data")
///     try OwnerOnlyFiles.createFile("hearth-data/demo.sqlite")
public enum OwnerOnlyFiles {
    static let directoryMode: mode_t = 0o700
    static let fileMode: mode_t = 0o600

    /// Creates `path` with mode 0700 when it is missing. Returns errno when it could not (0 on success).
    public static func createDirectory(_ path: String) -> Int32 {
        if mkdir(path, directoryMode) == 0 || errno == EEXIST { return 0 }
        return errno
    }

    /// Creates an empty `path` with mode 0600 when it is missing (SQLite treats an empty file as a new
    /// database). Returns errno when it could not (0 on success, and when the file exists).
    public static func createFile(_ path: String) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        if descriptor >= 0 {
            close(descriptor)
            return 0
        }
        return errno == EEXIST ? 0 : errno
    }

    /// Clears the group and other permission bits of each of `paths` that exists and is the caller's
    /// (files written by earlier versions were 0644, the directory 0755). Returns the paths it changed.
    @discardableResult
    public static func tighten(_ paths: [String]) -> [String] {
        var changed: [String] = []
        for path in paths {
            var status = stat()
            guard lstat(path, &status) == 0, status.st_uid == geteuid(), status.st_mode & 0o077 != 0 else { continue }
            let kind = status.st_mode & S_IFMT
            guard kind == S_IFREG || kind == S_IFDIR else { continue }
            if chmod(path, status.st_mode & 0o7700) == 0 { changed.append(path) }
        }
        return changed
    }

    /// A database file and the files SQLite keeps beside it.
    public static func databaseFiles(_ path: String) -> [String] {
        [path, path + "-wal", path + "-shm", path + "-journal"]
    }
}
