import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// The one piece of process-wide state reckon sets, once, before any work:
// libarchive 3.6 writes each zip entry's DOS time from `localtime_r`, so
// the zip's bytes would follow the machine's time zone. UTC makes the same
// input give the same bytes everywhere. Reports name their zone explicitly
// and never read the process's.
setenv("TZ", "UTC", 1)
tzset()
exit(Commands.run(CommandLineWords.current).rawValue)
