import Foundation
import ReckonCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// The process-wide state reckon sets, once, before any work.
// The first: a zip entry's DOS time has no zone, and libarchive, which reads zips back,
// turns it into an instant with local time. reckon writes those times in
// UTC, so reading them in UTC gives back what was written on any machine.
// Reports name their zone explicitly and never read the process's.
setenv("TZ", "UTC", 1)
tzset()
// The second: an encrypted iPhone backup's password, taken out of the
// environment before any other thread runs or any child is started, so that
// no child ever inherits it (rclone is started with reckon's environment).
_ = Passwords.fromEnvironment
// The third: what the library is told of this process, read from the
// environment once (the library reads none): the temporary root, the
// environment children get, and the test-only variables; and the handlers
// the library installs none of, handed to the command that runs.
var settings = ProcessSettings(environment: ProcessInfo.processInfo.environment)
settings.beforePrivateFolder = { ExitCleanup.install() }
exit(Commands.run(CommandLineWords.current, settings: settings).rawValue)
