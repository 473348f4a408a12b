public import Foundation

/// A full-screen app: state changed by events on one queue, and the screen drawn from that state.
public protocol TerminalScreen: AnyObject {
    /// The rows to show in a window of `width` × `height`, and where the text cursor goes (nil: hidden).
    func render(width: Int, height: Int) -> (lines: [Line], cursor: (row: Int, column: Int)?)
    /// A key; returns false to quit.
    func handle(_ key: Key) -> Bool
}

/// Runs a ``TerminalScreen``: keys and redraws on `queue` (the app's data callbacks should use the same
/// queue, so that everything touching the state happens there), until the screen quits or input ends.
public final class TerminalRunner: @unchecked Sendable {  // confined to `queue`
    public let queue: DispatchQueue
    private let terminal = Terminal()
    private let screen: any TerminalScreen
    private var redrawScheduled = false
    private var finished: (() -> Void)?

    public init(screen: any TerminalScreen, queue: DispatchQueue) {
        self.screen = screen
        self.queue = queue
    }

    /// Takes over the terminal and returns when the app quits (the terminal restored).
    public func run() {
        let done = DispatchSemaphore(value: 0)
        queue.async { [self] in
            terminal.start()
            finished = { done.signal() }
            draw()
            terminal.onResize { [weak self] in self?.redraw() }
            let queue = self.queue
            terminal.readKeys({ [self] keys in
                queue.async { self.received(keys) }
            }, ended: { [self] in
                queue.async { self.quit() }
            })
        }
        done.wait()
        terminal.restore()
    }

    /// Draws again soon (coalesced): call it after the state changes.
    public func redraw() {
        queue.async { [self] in
            guard !redrawScheduled else { return }
            redrawScheduled = true
            queue.async { [self] in
                redrawScheduled = false
                draw()
            }
        }
    }

    private func received(_ keys: [Key]) {
        for key in keys {
            guard screen.handle(key) else {
                quit()
                return
            }
        }
        draw()
    }

    private func draw() {
        guard finished != nil else { return }
        let size = terminal.size
        let (lines, cursor) = screen.render(width: size.width, height: size.height)
        terminal.write(ScreenRenderer.render(lines, width: size.width, height: size.height, cursor: cursor))
    }

    private func quit() {
        terminal.restore()
        finished?()
        finished = nil
    }
}
