import Foundation
import ReckonCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The private folders the library made (`PrivateFolder`) removed when
/// reckon exits: on a normal exit, and on SIGINT, SIGTERM and SIGHUP. The
/// library installs no handler; the command line installs these the first
/// time a private folder is made, on the thread that makes it.
enum ExitCleanup {
    private static let installed = Mutex(false)

    /// Installs the exit and signal handlers, once.
    static func install() {
        let first = installed.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        atexit { PrivateFolder.removeAll() }
        // A parent may have left these blocked (a test runner does); this
        // thread takes them, so the copies go whatever thread is working.
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            Glibc.signal(signal) { caught in
                PrivateFolder.removeAll()
                Glibc.signal(caught, SIG_DFL)
                raise(caught)
            }
        }
    }
}
