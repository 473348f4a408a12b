import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The controlling terminal in full-screen raw mode: keys as they are typed (no echo, no line
/// buffering), the alternate screen, and everything put back on exit, however the program ends.
public final class Terminal: @unchecked Sendable {  // used from the app's queue; `restore` is idempotent
    private var original = termios()
    private var active = false

    public init() {}

    /// The window's size (80×24 when it cannot be read, e.g. not a terminal).
    public var size: (width: Int, height: Int) {
        var window = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    public static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    /// Raw mode and the alternate screen.
    public func start() {
        guard !active, tcgetattr(STDIN_FILENO, &original) == 0 else { return }
        var raw = original
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        raw.c_oflag &= ~tcflag_t(OPOST)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
        active = true
        Terminal.current = self
        write("\u{1B}[?1049h\u{1B}[H\u{1B}[2J")
        atexit { Terminal.current?.restore() }
        for sig in [SIGTERM, SIGHUP, SIGQUIT] {
            signal(sig) { number in
                Terminal.current?.restore()
                signal(number, SIG_DFL)
                raise(number)
            }
        }
    }

    /// Back to the terminal as it was: cooked mode, the main screen, the cursor shown.
    public func restore() {
        guard active else { return }
        active = false
        write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
    }

    public func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Foundation.write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            if written <= 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    /// Reads keys on a thread of its own and hands each batch to `received` (on that thread); `ended`
    /// runs when input closes.
    public func readKeys(_ received: @escaping @Sendable ([Key]) -> Void, ended: @escaping @Sendable () -> Void) {
        let thread = Thread {
            var decoder = KeyDecoder()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(STDIN_FILENO, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                let keys = decoder.decode(Array(buffer[..<count]))
                if !keys.isEmpty { received(keys) }
            }
            ended()
        }
        thread.name = "terminal.keys"
        thread.start()
    }

    /// Calls `changed` (on the main thread's signal context: keep it short) when the window is resized.
    public func onResize(_ changed: @escaping @Sendable () -> Void) {
        let source = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
        signal(SIGWINCH, SIG_IGN)
        source.setEventHandler(handler: changed)
        source.resume()
        resizeSource = source
    }

    private var resizeSource: (any DispatchSourceSignal)?
    nonisolated(unsafe) private static var current: Terminal?
}
