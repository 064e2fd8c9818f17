import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// While reckon asks for a password at the terminal (`TerminalPrompt`,
/// which installs no handler), SIGINT and SIGTERM put the terminal back as
/// it was, then go on to what reckon had set (its private folders removed,
/// then the default action), or the default.
enum PromptSignals {
    /// The terminal's settings before the prompt, and the actions the two
    /// signals had: read by the signal handler, so kept where C can reach them.
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var previousInterrupt = sigaction()
    nonisolated(unsafe) private static var previousTerminate = sigaction()

    /// Runs `ask` with the two handlers installed, and the two signals
    /// unblocked on this thread; both put back afterwards. When the
    /// terminal's settings cannot be read, `ask` runs as it is (and says so).
    static func around(_ ask: () -> Void) {
        guard tcgetattr(0, &saved) == 0 else { return ask() }
        for signal in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { caught in
                // Only async-signal-safe calls: the terminal back, then the
                // signal to what reckon had set, or the default.
                tcsetattr(0, TCSANOW, &PromptSignals.saved)
                if caught == SIGINT {
                    sigaction(caught, &PromptSignals.previousInterrupt, nil)
                } else {
                    sigaction(caught, &PromptSignals.previousTerminate, nil)
                }
                raise(caught)
            }
            sigemptyset(&action.sa_mask)
            if signal == SIGINT {
                sigaction(signal, &action, &previousInterrupt)
            } else {
                sigaction(signal, &action, &previousTerminate)
            }
        }
        // A parent may have left the two blocked (a test runner does): this
        // thread takes them while it asks, so that they end reckon at once.
        var both = sigset_t()
        var mask = sigset_t()
        sigemptyset(&both)
        sigaddset(&both, SIGINT)
        sigaddset(&both, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &both, &mask)
        defer {
            sigaction(SIGINT, &previousInterrupt, nil)
            sigaction(SIGTERM, &previousTerminate, nil)
            pthread_sigmask(SIG_SETMASK, &mask, nil)
        }
        ask()
    }
}
