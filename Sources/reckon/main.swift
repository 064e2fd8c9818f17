import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// The one piece of process-wide state reckon sets, once, before any work:
// a zip entry's DOS time has no zone, and libarchive, which reads zips back,
// turns it into an instant with local time. reckon writes those times in
// UTC, so reading them in UTC gives back what was written on any machine.
// Reports name their zone explicitly and never read the process's.
setenv("TZ", "UTC", 1)
tzset()
exit(Commands.run(CommandLineWords.current).rawValue)
